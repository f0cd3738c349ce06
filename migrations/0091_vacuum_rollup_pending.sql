-- support_rollup_pending (migration 0090) is a queue: every fold deletes what it moved. Readers
-- scan it by company and agent, so its dead rows should not wait for the default autovacuum
-- threshold (20 % of the table): vacuum it after every 1,000 dead rows.
alter table support_rollup_pending set (
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_analyze_threshold = 1000,
  autovacuum_analyze_scale_factor = 0
);
