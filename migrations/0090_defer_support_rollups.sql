-- Support rollups kept off the statement path (migration 0021 kept them in statement triggers).
--
-- Before: every insert or update of a support query ran eight dynamically built upserts (hourly,
-- daily, resolution histogram, agent counters; old and new rows), planned on every execution,
-- and took row locks on the company's current hour, day and agent rows until commit — every
-- chat turn of a company queued behind the previous one's commit on those rows.
--
-- Now: the triggers append each changed row's contribution (old row with sign -1, new row with
-- sign +1; an update that changes no measured column appends nothing) to
-- support_rollup_pending, in the same transaction as the change (nothing is lost on a crash:
-- the contribution commits or rolls back with the row). support_rollup_fold(n) moves up to n
-- pending rows into the rollup tables in one statement (delete ... returning, then the four
-- upserts) — also atomic: a fold that fails leaves its rows pending. Readers read the rollups
-- plus the still-pending contributions (the *_live views below and the reads of agent
-- counters), so every figure stays exact whether or not a fold has run.

create table support_rollup_pending (
  id bigint generated always as identity primary key,
  sign smallint not null,
  -- No foreign key: a company's deletion cascades to its queries while it is being deleted (the
  -- trigger skips those), and the fold drops contributions of companies that no longer exist.
  company_id uuid not null,
  agent_id uuid,
  created_at timestamptz not null,
  resolved_at timestamptz,
  status text not null,
  query_type text not null,
  priority text not null,
  escalated_to_human boolean not null,
  resolution_minutes double precision,
  customer_satisfaction smallint
);
create index support_rollup_pending_company_idx on support_rollup_pending (company_id);
create index support_rollup_pending_agent_idx on support_rollup_pending (agent_id) where agent_id is not null;

drop trigger support_queries_rollup_insert on support_queries;
drop trigger support_queries_rollup_update on support_queries;
drop trigger support_queries_rollup_delete on support_queries;
drop function support_queries_rollup_apply();

-- Static SQL (plans cached per connection); one insert per statement.
create function support_queries_rollup_pend() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into support_rollup_pending (sign, company_id, agent_id, created_at, resolved_at, status, query_type,
                                        priority, escalated_to_human, resolution_minutes, customer_satisfaction)
    select 1, company_id, agent_id, created_at, resolved_at, status, query_type, priority, escalated_to_human,
           resolution_minutes, customer_satisfaction
    from new_rows;
  elsif tg_op = 'DELETE' then
    insert into support_rollup_pending (sign, company_id, agent_id, created_at, resolved_at, status, query_type,
                                        priority, escalated_to_human, resolution_minutes, customer_satisfaction)
    select -1, company_id, agent_id, created_at, resolved_at, status, query_type, priority, escalated_to_human,
           resolution_minutes, customer_satisfaction
    from old_rows o where exists (select 1 from companies c where c.id = o.company_id);
  else
    insert into support_rollup_pending (sign, company_id, agent_id, created_at, resolved_at, status, query_type,
                                        priority, escalated_to_human, resolution_minutes, customer_satisfaction)
    select v.*
    from old_rows o join new_rows n on n.id = o.id
    cross join lateral (values
      (-1::smallint, o.company_id, o.agent_id, o.created_at, o.resolved_at, o.status, o.query_type, o.priority,
       o.escalated_to_human, o.resolution_minutes, o.customer_satisfaction),
      (1::smallint, n.company_id, n.agent_id, n.created_at, n.resolved_at, n.status, n.query_type, n.priority,
       n.escalated_to_human, n.resolution_minutes, n.customer_satisfaction)) v
    where (o.company_id, o.agent_id, o.created_at, o.resolved_at, o.status, o.query_type, o.priority,
           o.escalated_to_human, o.customer_satisfaction)
      is distinct from (n.company_id, n.agent_id, n.created_at, n.resolved_at, n.status, n.query_type, n.priority,
           n.escalated_to_human, n.customer_satisfaction)
      and exists (select 1 from companies c where c.id = n.company_id);
  end if;
  return null;
end;
$$;

create trigger support_queries_rollup_insert after insert on support_queries
  referencing new table as new_rows for each statement execute function support_queries_rollup_pend();
create trigger support_queries_rollup_update after update on support_queries
  referencing old table as old_rows new table as new_rows for each statement execute function support_queries_rollup_pend();
create trigger support_queries_rollup_delete after delete on support_queries
  referencing old table as old_rows for each statement execute function support_queries_rollup_pend();

-- The contributions of pending rows (a table or a CTE named `source`) in the rollups' shape, at
-- UTC hours: one row for the created hour, one more for the resolved hour (resolutions).
create function support_rollup_contributions_sql(source text) returns text language sql immutable as $$
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
      0 as resolutions
    from %1$s
    union all
    select company_id, date_trunc('hour', resolved_at, 'UTC'),
      coalesce(agent_id, '00000000-0000-0000-0000-000000000000'),
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, sign
    from %1$s where resolved_at is not null
  $sql$, source);
$$;

do $$
begin
  execute format('create view support_rollup_pending_hours as %s',
    support_rollup_contributions_sql('support_rollup_pending'));
end;
$$;

-- What readers read: the rollup rows plus the pending contributions (sum them; a key may appear
-- more than once).
create view support_query_hourly_live as
  select * from support_query_hourly
  union all
  select * from support_rollup_pending_hours;

create view support_query_daily_live as
  select * from support_query_daily
  union all
  select company_id, date_trunc('day', hour, 'UTC'), agent_key, created_count, status_open, status_in_progress,
    status_resolved, status_closed, type_bug_report, type_feature_request, type_general_inquiry,
    type_technical_support, type_billing, type_account, priority_low, priority_medium, priority_high, priority_urgent,
    escalated_count, resolved_count, agent_resolved_count, resolution_minutes_sum, satisfaction_sum,
    satisfaction_count, resolutions
  from support_rollup_pending_hours;

create view support_resolution_daily_live as
  select company_id, day, bucket, resolved from support_resolution_daily
  union all
  select company_id, date_trunc('day', created_at, 'UTC'), support_resolution_bucket(resolution_minutes), sign::bigint
  from support_rollup_pending where resolved_at is not null;

-- Folds up to max_rows pending contributions (oldest first) into the rollups, in one statement;
-- returns how many it folded. One folder at a time (a transaction-level advisory lock; a second
-- caller returns 0), so that two folders never upsert the same rollup rows in different orders.
create function support_rollup_fold(max_rows integer) returns integer language plpgsql as $fold$
declare
  folded integer;
  measures text := 'created_count, status_open, status_in_progress, status_resolved, status_closed, '
    'type_bug_report, type_feature_request, type_general_inquiry, type_technical_support, type_billing, type_account, '
    'priority_low, priority_medium, priority_high, priority_urgent, escalated_count, resolved_count, '
    'agent_resolved_count, resolution_minutes_sum, satisfaction_sum, satisfaction_count, resolutions';
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
        resolution_minutes_sum, agent_resolved_count, satisfaction_sum, satisfaction_count)
      select q.company_id, q.agent_id, sum(q.sign), sum(q.sign * (q.resolved_at is not null)::int),
        sum(q.sign * coalesce(q.resolution_minutes, 0)),
        sum(q.sign * (q.resolved_at is not null and not q.escalated_to_human)::int),
        sum(q.sign * coalesce(q.customer_satisfaction, 0)), sum(q.sign * (q.customer_satisfaction is not null)::int)
      from live q join agents a on a.id = q.agent_id
      group by q.company_id, q.agent_id
      on conflict (agent_id) do update set
        queries_handled = m.queries_handled + excluded.queries_handled,
        resolved_count = m.resolved_count + excluded.resolved_count,
        resolution_minutes_sum = m.resolution_minutes_sum + excluded.resolution_minutes_sum,
        agent_resolved_count = m.agent_resolved_count + excluded.agent_resolved_count,
        satisfaction_sum = m.satisfaction_sum + excluded.satisfaction_sum,
        satisfaction_count = m.satisfaction_count + excluded.satisfaction_count
    )
    select count(*) from batch
  $sql$, max_rows, support_rollup_contributions_sql('live'), sums, updates) into folded;
  return folded;
end;
$fold$;
