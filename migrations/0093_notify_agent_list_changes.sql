-- The agents list joins the per-company list cache (src/http/list-cache.ts): every change to the
-- agents table clears it on every instance, like the tables of migration 0092. The agents'
-- performance figures move with every chat turn and send no notification (one per turn would
-- serialise the turns' commits): the list route bounds how old those figures may be instead.
create trigger agents_lists_changed after insert or update or delete or truncate on agents
  for each statement execute function notify_change('switchboard_lists_changed');
