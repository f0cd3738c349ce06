-- API instances keep serialized list pages per company in a short in-process cache
-- (src/http/list-cache.ts): deployments, collections and documents. Every change to a table
-- those lists read sends a notification; instances drop that cache when they receive it (as
-- with credentials, migration 0003, and the serving cache, 0041). Statement-level triggers,
-- so every write path notifies, whatever wrote it. A chat turn writes none of these tables.
create trigger deployments_lists_changed after insert or update or delete or truncate on deployments
  for each statement execute function notify_change('switchboard_lists_changed');
create trigger regions_lists_changed after insert or update or delete or truncate on regions
  for each statement execute function notify_change('switchboard_lists_changed');
create trigger kb_collections_lists_changed after insert or update or delete or truncate on kb_collections
  for each statement execute function notify_change('switchboard_lists_changed');
create trigger kb_documents_lists_changed after insert or update or delete or truncate on kb_documents
  for each statement execute function notify_change('switchboard_lists_changed');
