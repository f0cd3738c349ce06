-- The worker process (job_workers.id) that owns a task while it is processing. No foreign key:
-- the registry row of a dead worker is deleted once its tasks were handed back.
alter table kb_documents add column worker_id integer;
create index kb_documents_processing_worker_idx on kb_documents (worker_id) where status = 'processing';
