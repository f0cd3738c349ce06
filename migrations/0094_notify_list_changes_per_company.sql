-- The list cache (src/http/list-cache.ts) is kept per company: a change now says which
-- companies' lists it touched, so one company's writes (a busy ingestion, a roll-out) no longer
-- empty every company's cached pages on every instance. As with migration 0014: triggers with a
-- transition table (one event each), one notification per company and statement, the company's id
-- as the payload (PostgreSQL folds identical ones within a transaction). kb_documents already
-- announces its changes per company on switchboard_knowledge_changed (0014), which the cache also
-- hears, so it keeps only a truncate trigger here. A payload that is not a company id (a table's
-- name, from truncate or from regions, which every company reads) still clears every page.
create function notify_lists_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('switchboard_lists_changed', company_id::text) from (select distinct company_id from changed) c;
  return null;
end;
$$;

drop trigger deployments_lists_changed on deployments;
drop trigger kb_collections_lists_changed on kb_collections;
drop trigger kb_documents_lists_changed on kb_documents;
drop trigger agents_lists_changed on agents;

do $$
declare
  t text;
  e text;
begin
  foreach t in array array['deployments', 'kb_collections', 'agents'] loop
    foreach e in array array['insert', 'update', 'delete'] loop
      execute format(
        'create trigger %I after %s on %I referencing %s table as changed for each statement execute function notify_lists_changed()',
        t || '_lists_' || e, e, t, case e when 'delete' then 'old' else 'new' end);
    end loop;
    execute format(
      'create trigger %I after truncate on %I for each statement execute function notify_change(%L)',
      t || '_lists_truncate', t, 'switchboard_lists_changed');
  end loop;
end;
$$;

create trigger kb_documents_lists_truncate after truncate on kb_documents
  for each statement execute function notify_change('switchboard_lists_changed');
