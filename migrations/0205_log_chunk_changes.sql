-- Instances hold the BM25 postings of large knowledge bases in memory and keep them current by
-- reading only what changed: every insert, update or delete of a company's chunks bumps the
-- company's corpus version (taking its statistics row lock until commit) and logs each chunk id
-- touched under that version. Writers of one company are serialised by that row lock, so the
-- versions commit in order: a reader that sees version V sees every change logged up to V.
-- `changes_from` is the version up to which the log has been pruned; an index older than it
-- is rebuilt whole.
create table kb_chunk_changes (
  company_id uuid not null references companies (id) on delete cascade,
  version bigint not null,
  chunk_id uuid not null,
  changed_at timestamptz not null default now()
);
create index kb_chunk_changes_company_version_idx on kb_chunk_changes (company_id, version);

alter table kb_corpus_stats add column changes_from bigint not null default 0;

create function log_chunk_changes() returns trigger language plpgsql as $$
begin
  -- Companies being deleted (their row already gone inside the cascade) are skipped.
  with touched as (
    select distinct c.company_id from changed c where exists (select 1 from companies x where x.id = c.company_id)
  ), bumped as (
    insert into kb_corpus_stats as s (company_id, version)
    select company_id, 1 from touched
    on conflict (company_id) do update set version = s.version + 1
    returning s.company_id, s.version
  )
  insert into kb_chunk_changes (company_id, version, chunk_id)
  select c.company_id, b.version, c.id from changed c join bumped b on b.company_id = c.company_id;
  return null;
end;
$$;

create trigger kb_chunks_insert_log after insert on kb_chunks
  referencing new table as changed for each statement execute function log_chunk_changes();
create trigger kb_chunks_update_log after update on kb_chunks
  referencing new table as changed for each statement execute function log_chunk_changes();
create trigger kb_chunks_delete_log after delete on kb_chunks
  referencing old table as changed for each statement execute function log_chunk_changes();
