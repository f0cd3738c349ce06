-- Rollups of support queries, kept by statement-level triggers, so that dashboard, stats,
-- analytics and list totals over long windows read a few rollup rows instead of every query:
-- - support_query_daily (whole days) and support_query_hourly (the hours of a window's partial
--   edge days), per company and agent; the raw rows of the partial edge hours are read as they
--   are. A query counts in the hour it was created (created_count, status/type/priority counts,
--   escalation, resolution figures, satisfaction) and, once resolved, in the hour it was resolved
--   (resolutions).
-- - support_resolution_daily: an exact median without sorting a whole window. A daily histogram
--   of resolution times (log-scale buckets, about 9 % wide) per company; the median's bucket is
--   found from it, then only that bucket's rows of the window are read, in order, through an
--   index on (company, bucket, created_at).
-- - support_agent_metrics (migration 0020): each agent's all-time counters.
-- Deleting a company cascades to its support queries; their delete trigger writes nothing for a
-- company that no longer exists (its rollup rows go with it by cascade).

-- Minutes from creation to resolution; the median (percentile_cont) reads it from an index.
alter table support_queries
  add column resolution_minutes double precision
  generated always as ((extract(epoch from (resolved_at - created_at)) / 60)::double precision) stored;
create index support_queries_company_resolution_idx on support_queries (company_id, created_at)
  include (resolution_minutes) where resolved_at is not null;

create table support_query_hourly (
  company_id uuid not null references companies (id) on delete cascade,
  hour timestamptz not null,
  -- The agent, or the nil UUID for queries without one (a primary key cannot hold null).
  agent_key uuid not null,
  created_count bigint not null default 0,
  status_open bigint not null default 0,
  status_in_progress bigint not null default 0,
  status_resolved bigint not null default 0,
  status_closed bigint not null default 0,
  type_bug_report bigint not null default 0,
  type_feature_request bigint not null default 0,
  type_general_inquiry bigint not null default 0,
  type_technical_support bigint not null default 0,
  type_billing bigint not null default 0,
  type_account bigint not null default 0,
  priority_low bigint not null default 0,
  priority_medium bigint not null default 0,
  priority_high bigint not null default 0,
  priority_urgent bigint not null default 0,
  escalated_count bigint not null default 0,
  resolved_count bigint not null default 0,
  agent_resolved_count bigint not null default 0,
  resolution_minutes_sum double precision not null default 0,
  satisfaction_sum bigint not null default 0,
  satisfaction_count bigint not null default 0,
  resolutions bigint not null default 0,
  constraint support_query_hourly_pkey primary key (company_id, hour, agent_key)
);

-- The daily level: the same measures per UTC day.
create table support_query_daily (like support_query_hourly including defaults);
alter table support_query_daily rename column hour to day;
alter table support_query_daily
  add constraint support_query_daily_pkey primary key (company_id, day, agent_key),
  add foreign key (company_id) references companies (id) on delete cascade;

create function support_resolution_bucket(minutes double precision) returns integer
  language sql immutable parallel safe
  as $$ select floor(8 * ln(1 + greatest(minutes, 0)) / ln(2))::integer $$;

create table support_resolution_daily (
  company_id uuid not null references companies (id) on delete cascade,
  day timestamptz not null,
  bucket integer not null,
  resolved bigint not null default 0,
  constraint support_resolution_daily_pkey primary key (company_id, day, bucket)
);

create index support_queries_resolution_bucket_idx on support_queries
  (company_id, support_resolution_bucket(resolution_minutes), created_at) include (resolution_minutes)
  where resolved_at is not null;

-- The statement that adds sign x the contribution of the rows of `source` (a table or a
-- transition table; executed by the trigger function itself, where transition tables are
-- visible) to the rollup `target` (whose primary key is `<target>_pkey`), bucketed by `unit`
-- (hour, day) in UTC.
create function support_query_rollup_sql(source text, sign integer, target text, unit text) returns text language sql immutable as $$
  select format($sql$
    insert into %3$I as h
    select company_id, hour, agent_key,
      sum(created_count), sum(status_open), sum(status_in_progress), sum(status_resolved), sum(status_closed),
      sum(type_bug_report), sum(type_feature_request), sum(type_general_inquiry), sum(type_technical_support), sum(type_billing), sum(type_account),
      sum(priority_low), sum(priority_medium), sum(priority_high), sum(priority_urgent),
      sum(escalated_count), sum(resolved_count), sum(agent_resolved_count), sum(resolution_minutes_sum),
      sum(satisfaction_sum), sum(satisfaction_count), sum(resolutions)
    from (
      select company_id, date_trunc(%4$L, created_at at time zone 'UTC') at time zone 'UTC' as hour,
        coalesce(agent_id, '00000000-0000-0000-0000-000000000000') as agent_key,
        %1$s * count(*) as created_count,
        %1$s * count(*) filter (where status = 'open') as status_open,
        %1$s * count(*) filter (where status = 'in_progress') as status_in_progress,
        %1$s * count(*) filter (where status = 'resolved') as status_resolved,
        %1$s * count(*) filter (where status = 'closed') as status_closed,
        %1$s * count(*) filter (where query_type = 'bug_report') as type_bug_report,
        %1$s * count(*) filter (where query_type = 'feature_request') as type_feature_request,
        %1$s * count(*) filter (where query_type = 'general_inquiry') as type_general_inquiry,
        %1$s * count(*) filter (where query_type = 'technical_support') as type_technical_support,
        %1$s * count(*) filter (where query_type = 'billing') as type_billing,
        %1$s * count(*) filter (where query_type = 'account') as type_account,
        %1$s * count(*) filter (where priority = 'low') as priority_low,
        %1$s * count(*) filter (where priority = 'medium') as priority_medium,
        %1$s * count(*) filter (where priority = 'high') as priority_high,
        %1$s * count(*) filter (where priority = 'urgent') as priority_urgent,
        %1$s * count(*) filter (where escalated_to_human) as escalated_count,
        %1$s * count(resolved_at) as resolved_count,
        %1$s * count(*) filter (where resolved_at is not null and not escalated_to_human) as agent_resolved_count,
        %1$s * coalesce(sum(resolution_minutes), 0) as resolution_minutes_sum,
        %1$s * coalesce(sum(customer_satisfaction), 0) as satisfaction_sum,
        %1$s * count(customer_satisfaction) as satisfaction_count,
        0 as resolutions
      from %2$I where company_id in (select id from companies) group by 1, 2, 3
      union all
      select company_id, date_trunc(%4$L, resolved_at at time zone 'UTC') at time zone 'UTC',
        coalesce(agent_id, '00000000-0000-0000-0000-000000000000'),
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, %1$s * count(*)
      from %2$I where resolved_at is not null and company_id in (select id from companies) group by 1, 2, 3
    ) contributions
    group by company_id, hour, agent_key
    on conflict on constraint %5$I do update set
      created_count = h.created_count + excluded.created_count,
      status_open = h.status_open + excluded.status_open,
      status_in_progress = h.status_in_progress + excluded.status_in_progress,
      status_resolved = h.status_resolved + excluded.status_resolved,
      status_closed = h.status_closed + excluded.status_closed,
      type_bug_report = h.type_bug_report + excluded.type_bug_report,
      type_feature_request = h.type_feature_request + excluded.type_feature_request,
      type_general_inquiry = h.type_general_inquiry + excluded.type_general_inquiry,
      type_technical_support = h.type_technical_support + excluded.type_technical_support,
      type_billing = h.type_billing + excluded.type_billing,
      type_account = h.type_account + excluded.type_account,
      priority_low = h.priority_low + excluded.priority_low,
      priority_medium = h.priority_medium + excluded.priority_medium,
      priority_high = h.priority_high + excluded.priority_high,
      priority_urgent = h.priority_urgent + excluded.priority_urgent,
      escalated_count = h.escalated_count + excluded.escalated_count,
      resolved_count = h.resolved_count + excluded.resolved_count,
      agent_resolved_count = h.agent_resolved_count + excluded.agent_resolved_count,
      resolution_minutes_sum = h.resolution_minutes_sum + excluded.resolution_minutes_sum,
      satisfaction_sum = h.satisfaction_sum + excluded.satisfaction_sum,
      satisfaction_count = h.satisfaction_count + excluded.satisfaction_count,
      resolutions = h.resolutions + excluded.resolutions
  $sql$, sign, source, target, unit, target || '_pkey');
$$;

-- The same for the resolution-time histogram.
create function support_resolution_sql(source text, sign integer) returns text language sql immutable as $$
  select format($sql$
    insert into support_resolution_daily as h
    select company_id, date_trunc('day', created_at at time zone 'UTC') at time zone 'UTC',
      support_resolution_bucket(resolution_minutes), %1$s * count(*)
    from %2$I where resolved_at is not null and company_id in (select id from companies)
    group by 1, 2, 3
    on conflict on constraint support_resolution_daily_pkey do update set resolved = h.resolved + excluded.resolved
  $sql$, sign, source);
$$;

-- The same for each agent's all-time counters (queries of agents that still exist).
create function support_agent_metrics_sql(source text, sign integer) returns text language sql immutable as $$
  select format($sql$
    insert into support_agent_metrics as m (company_id, agent_id, queries_handled, resolved_count, resolution_minutes_sum,
                                            agent_resolved_count, satisfaction_sum, satisfaction_count)
    select q.company_id, q.agent_id, %1$s * count(*), %1$s * count(q.resolved_at),
           %1$s * coalesce(sum(q.resolution_minutes), 0),
           %1$s * count(*) filter (where q.resolved_at is not null and not q.escalated_to_human),
           %1$s * coalesce(sum(q.customer_satisfaction), 0), %1$s * count(q.customer_satisfaction)
    from %2$I q join agents a on a.id = q.agent_id
    group by q.company_id, q.agent_id
    on conflict (agent_id) do update set
      queries_handled = m.queries_handled + excluded.queries_handled,
      resolved_count = m.resolved_count + excluded.resolved_count,
      resolution_minutes_sum = m.resolution_minutes_sum + excluded.resolution_minutes_sum,
      agent_resolved_count = m.agent_resolved_count + excluded.agent_resolved_count,
      satisfaction_sum = m.satisfaction_sum + excluded.satisfaction_sum,
      satisfaction_count = m.satisfaction_count + excluded.satisfaction_count
  $sql$, sign, source);
$$;

create function support_queries_rollup_apply() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    execute support_query_rollup_sql('old_rows', -1, 'support_query_hourly', 'hour');
    execute support_query_rollup_sql('old_rows', -1, 'support_query_daily', 'day');
    execute support_resolution_sql('old_rows', -1);
    execute support_agent_metrics_sql('old_rows', -1);
  end if;
  if tg_op in ('UPDATE', 'INSERT') then
    execute support_query_rollup_sql('new_rows', 1, 'support_query_hourly', 'hour');
    execute support_query_rollup_sql('new_rows', 1, 'support_query_daily', 'day');
    execute support_resolution_sql('new_rows', 1);
    execute support_agent_metrics_sql('new_rows', 1);
  end if;
  return null;
end;
$$;

create trigger support_queries_rollup_insert after insert on support_queries
  referencing new table as new_rows for each statement execute function support_queries_rollup_apply();
create trigger support_queries_rollup_update after update on support_queries
  referencing old table as old_rows new table as new_rows for each statement execute function support_queries_rollup_apply();
create trigger support_queries_rollup_delete after delete on support_queries
  referencing old table as old_rows for each statement execute function support_queries_rollup_apply();
