-- Instances hold the text indexes of small knowledge bases in memory. Every change to what the
-- search reads — documents (status, title, filters, content) and the corpus (chunks, postings and
-- statistics change together with it) — sends the company's id; instances drop that company's
-- index when they receive it. One notification per company and statement (and PostgreSQL folds
-- identical ones within a transaction).
create function notify_knowledge_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('switchboard_knowledge_changed', company_id::text) from (select distinct company_id from changed) c;
  return null;
end;
$$;

-- A trigger with a transition table serves one event, so each table has three.
do $$
declare
  t text;
  e text;
begin
  foreach t in array array['kb_documents', 'kb_corpus_stats'] loop
    foreach e in array array['insert', 'update', 'delete'] loop
      execute format(
        'create trigger %I after %s on %I referencing %s table as changed for each statement execute function notify_knowledge_changed()',
        t || '_' || e || '_notify', e, t, case e when 'delete' then 'old' else 'new' end);
    end loop;
  end loop;
end;
$$;
