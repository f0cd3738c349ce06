-- Chat turns read an agent and its live deployment from a short in-process cache on each API
-- instance. Every change to what they read sends a notification; instances drop that cache when
-- they receive it (as with credentials, migration 0003).
create trigger agents_serving_changed after update or delete on agents
  for each statement execute function notify_change('switchboard_serving_changed');
create trigger deployments_serving_changed after insert or update or delete on deployments
  for each statement execute function notify_change('switchboard_serving_changed');
create trigger regions_serving_changed after insert or update or delete on regions
  for each statement execute function notify_change('switchboard_serving_changed');
