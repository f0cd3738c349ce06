-- An agent's mean resolution time counts the agent's own resolutions only (DESIGN §13): a query a
-- person resolved after a hand-off (escalated to a human) is the team's, not the agent's. The
-- rollups gain agent_resolution_minutes_sum, the minutes of the resolutions that also count in
-- agent_resolved_count; an agent's avg_resolution_time is that sum over that count.
--
-- Everything pending is folded first (in this transaction, holding the folder's lock), so the new
-- column can be filled from the queries themselves and the rollups stay exact.
select support_rollup_fold(2147483647);

alter table support_query_hourly add column agent_resolution_minutes_sum double precision not null default 0;
alter table support_query_daily add column agent_resolution_minutes_sum double precision not null default 0;
alter table support_agent_metrics add column agent_resolution_minutes_sum double precision not null default 0;

update support_query_hourly h set agent_resolution_minutes_sum = s.minutes
from (
  select company_id, date_trunc('hour', created_at, 'UTC') as hour,
    coalesce(agent_id, '00000000-0000-0000-0000-000000000000') as agent_key, sum(resolution_minutes) as minutes
  from support_queries where resolved_at is not null and not escalated_to_human
  group by 1, 2, 3
) s
where h.company_id = s.company_id and h.hour = s.hour and h.agent_key = s.agent_key;

update support_query_daily d set agent_resolution_minutes_sum = s.minutes
from (
  select company_id, date_trunc('day', created_at, 'UTC') as day,
    coalesce(agent_id, '00000000-0000-0000-0000-000000000000') as agent_key, sum(resolution_minutes) as minutes
  from support_queries where resolved_at is not null and not escalated_to_human
  group by 1, 2, 3
) s
where d.company_id = s.company_id and d.day = s.day and d.agent_key = s.agent_key;

update support_agent_metrics m set agent_resolution_minutes_sum = s.minutes
from (
  select agent_id, sum(resolution_minutes) as minutes
  from support_queries where agent_id is not null and resolved_at is not null and not escalated_to_human
  group by 1
) s
where m.agent_id = s.agent_id;

-- The contributions gain the column last (the rollup tables' column order).
create or replace function support_rollup_contributions_sql(source text) returns text language sql immutable as $$
  select format($sql$
    select company_id, date_trunc('hour', created_at, 'UTC') as hour,
      coalesce(agent_id, '00000000-0000-0000-0000-000000000000') as agent_key,
      sign::bigint as created_count,
      sign * (status = 'open')::int as status_open,
      sign * (status = 'in_progress')::int as status_in_progress,
      sign * (status = 'resolved')::int as status_resolved,
      sign * (status = 'closed')::int as status_closed,
      sign * (query_type = 'bug_report')::int as type_bug_report,
      sign * (query_type = 'feature_request')::int as type_feature_request,
      sign * (query_type = 'general_inquiry')::int as type_general_inquiry,
      sign * (query_type = 'technical_support')::int as type_technical_support,
      sign * (query_type = 'billing')::int as type_billing,
      sign * (query_type = 'account')::int as type_account,
      sign * (priority = 'low')::int as priority_low,
      sign * (priority = 'medium')::int as priority_medium,
      sign * (priority = 'high')::int as priority_high,
      sign * (priority = 'urgent')::int as priority_urgent,
      sign * escalated_to_human::int as escalated_count,
      sign * (resolved_at is not null)::int as resolved_count,
      sign * (resolved_at is not null and not escalated_to_human)::int as agent_resolved_count,
      sign * coalesce(resolution_minutes, 0) as resolution_minutes_sum,
      sign * coalesce(customer_satisfaction, 0) as satisfaction_sum,
      sign * (customer_satisfaction is not null)::int as satisfaction_count,
      0 as resolutions,
      case when resolved_at is not null and not escalated_to_human
        then sign * coalesce(resolution_minutes, 0) else 0 end as agent_resolution_minutes_sum
    from %1$s
    union all
    select company_id, date_trunc('hour', resolved_at, 'UTC'),
      coalesce(agent_id, '00000000-0000-0000-0000-000000000000'),
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, sign, 0
    from %1$s where resolved_at is not null
  $sql$, source);
$$;

do $$
begin
  execute format('create or replace view support_rollup_pending_hours as %s',
    support_rollup_contributions_sql('support_rollup_pending'));
end;
$$;

create or replace view support_query_hourly_live as
  select * from support_query_hourly
  union all
  select * from support_rollup_pending_hours;

create or replace view support_query_daily_live as
  select * from support_query_daily
  union all
  select company_id, date_trunc('day', hour, 'UTC'), agent_key, created_count, status_open, status_in_progress,
    status_resolved, status_closed, type_bug_report, type_feature_request, type_general_inquiry,
    type_technical_support, type_billing, type_account, priority_low, priority_medium, priority_high, priority_urgent,
    escalated_count, resolved_count, agent_resolved_count, resolution_minutes_sum, satisfaction_sum,
    satisfaction_count, resolutions, agent_resolution_minutes_sum
  from support_rollup_pending_hours;

create or replace function support_rollup_fold(max_rows integer) returns integer language plpgsql as $fold$
declare
  folded integer;
  measures text := 'created_count, status_open, status_in_progress, status_resolved, status_closed, '
    'type_bug_report, type_feature_request, type_general_inquiry, type_technical_support, type_billing, type_account, '
    'priority_low, priority_medium, priority_high, priority_urgent, escalated_count, resolved_count, '
    'agent_resolved_count, resolution_minutes_sum, satisfaction_sum, satisfaction_count, resolutions, '
    'agent_resolution_minutes_sum';
  sums text;
  updates text;
begin
  if not pg_try_advisory_xact_lock(hashtext('support_rollup_fold')) then
    return 0;
  end if;
  select string_agg(format('sum(%I)', m), ', '), string_agg(format('%1$I = r.%1$I + excluded.%1$I', m), ', ')
    into sums, updates
    from unnest(string_to_array(replace(measures, ' ', ''), ',')) m;
  execute format($sql$
    with batch as (
      delete from support_rollup_pending p
      where p.id in (select id from support_rollup_pending order by id limit %1$s)
      returning p.*
    ),
    live as (select * from batch b where exists (select 1 from companies c where c.id = b.company_id)),
    contributions as (%2$s),
    hourly as (
      insert into support_query_hourly as r
      select company_id, hour, agent_key, %3$s from contributions group by 1, 2, 3
      on conflict on constraint support_query_hourly_pkey do update set %4$s
    ),
    daily as (
      insert into support_query_daily as r
      select company_id, date_trunc('day', hour, 'UTC'), agent_key, %3$s from contributions group by 1, 2, 3
      on conflict on constraint support_query_daily_pkey do update set %4$s
    ),
    resolution as (
      insert into support_resolution_daily as r
      select company_id, date_trunc('day', created_at, 'UTC'), support_resolution_bucket(resolution_minutes), sum(sign)
      from live where resolved_at is not null group by 1, 2, 3
      on conflict on constraint support_resolution_daily_pkey do update set resolved = r.resolved + excluded.resolved
    ),
    agent_counts as (
      insert into support_agent_metrics as m (company_id, agent_id, queries_handled, resolved_count,
        resolution_minutes_sum, agent_resolved_count, satisfaction_sum, satisfaction_count,
        agent_resolution_minutes_sum)
      select q.company_id, q.agent_id, sum(q.sign), sum(q.sign * (q.resolved_at is not null)::int),
        sum(q.sign * coalesce(q.resolution_minutes, 0)),
        sum(q.sign * (q.resolved_at is not null and not q.escalated_to_human)::int),
        sum(q.sign * coalesce(q.customer_satisfaction, 0)), sum(q.sign * (q.customer_satisfaction is not null)::int),
        sum(case when q.resolved_at is not null and not q.escalated_to_human
          then q.sign * coalesce(q.resolution_minutes, 0) else 0 end)
      from live q join agents a on a.id = q.agent_id
      group by q.company_id, q.agent_id
      on conflict (agent_id) do update set
        queries_handled = m.queries_handled + excluded.queries_handled,
        resolved_count = m.resolved_count + excluded.resolved_count,
        resolution_minutes_sum = m.resolution_minutes_sum + excluded.resolution_minutes_sum,
        agent_resolved_count = m.agent_resolved_count + excluded.agent_resolved_count,
        satisfaction_sum = m.satisfaction_sum + excluded.satisfaction_sum,
        satisfaction_count = m.satisfaction_count + excluded.satisfaction_count,
        agent_resolution_minutes_sum = m.agent_resolution_minutes_sum + excluded.agent_resolution_minutes_sum
    )
    select count(*) from batch
  $sql$, max_rows, support_rollup_contributions_sql('live'), sums, updates) into folded;
  return folded;
end;
$fold$;
