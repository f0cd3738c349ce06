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

create trigger kb_documents_inserted after insert on kb_documents
  referencing new table as changed for each statement execute function notify_knowledge_changed();
create trigger kb_documents_updated after update on kb_documents
  referencing new table as changed for each statement execute function notify_knowledge_changed();
create trigger kb_documents_deleted after delete on kb_documents
  referencing old table as changed for each statement execute function notify_knowledge_changed();
create trigger kb_corpus_stats_inserted after insert on kb_corpus_stats
  referencing new table as changed for each statement execute function notify_knowledge_changed();
create trigger kb_corpus_stats_updated after update on kb_corpus_stats
  referencing new table as changed for each statement execute function notify_knowledge_changed();
create trigger kb_corpus_stats_deleted after delete on kb_corpus_stats
  referencing old table as changed for each statement execute function notify_knowledge_changed();
