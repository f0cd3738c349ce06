-- A channel's inbound requests and answers read their deployment and its integration's config
-- from a short in-process cache on each instance (the channels module). A change to what they
-- read of an integration — its config (secrets), whether it is active, its type — or its deletion
-- tells every instance to drop that cache, with the serving notification deployments send
-- (migration 0041). The tools an MCP live check records (`discovered_tools`) do not.
create trigger integrations_serving_changed after update of config, is_active, type or delete on integrations
  for each statement execute function notify_change('switchboard_serving_changed');
