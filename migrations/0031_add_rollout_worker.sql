-- The worker process (job_workers.id) running a roll-out, and the attempt it took: a job takes
-- an attempt only once, and a dead worker's roll-out is handed back (both columns cleared).
alter table deployments add column rollout_worker_id integer;
alter table deployments add column rollout_claimed_attempt integer;
create index deployments_rollout_worker_idx on deployments (rollout_worker_id) where status = 'deploying';
