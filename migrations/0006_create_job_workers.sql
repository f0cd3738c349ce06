-- Worker processes of the job queue (src/jobs/workers.ts). Each process that runs workers
-- registers a row, holds the session advisory lock (1398229842, id) on a connection of its own
-- for as long as it lives, and beats `heartbeat_at`. A row whose lock is free (the process was
-- killed: PostgreSQL ends its session at once) or whose heartbeat is stale (the host is gone) is
-- a dead worker: the tasks it owned are handed back to its queue, then the row is deleted.
create table job_workers (
  id integer generated always as identity primary key,
  -- The pg-boss schema the worker takes jobs from: tasks are requeued to the queue they came from.
  queue text not null,
  host text not null,
  pid integer not null,
  started_at timestamptz not null default now(),
  heartbeat_at timestamptz not null default now()
);
create index job_workers_queue_idx on job_workers (queue);
