-- An exact median without sorting a whole window: a daily histogram of resolution times (log-scale
-- buckets, about 9 % wide) per company, kept by the support triggers. The median's bucket is found
-- from the histogram, then only that bucket's rows of the window are read, in order, through an
-- index on (company, bucket, created_at).

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

create function support_resolution_sql(source text, sign integer) returns text language sql immutable as $$
  select format($sql$
    insert into support_resolution_daily as h
    select company_id, date_trunc('day', created_at at time zone 'UTC') at time zone 'UTC',
      support_resolution_bucket(resolution_minutes), %1$s * count(*)
    from %2$I where resolved_at is not null
    group by 1, 2, 3
    on conflict on constraint support_resolution_daily_pkey do update set resolved = h.resolved + excluded.resolved
  $sql$, sign, source);
$$;

create or replace function support_query_hourly_apply() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    execute support_query_rollup_sql('old_rows', -1, 'support_query_hourly', 'hour');
    execute support_query_rollup_sql('old_rows', -1, 'support_query_daily', 'day');
    execute support_resolution_sql('old_rows', -1);
  end if;
  if tg_op in ('UPDATE', 'INSERT') then
    execute support_query_rollup_sql('new_rows', 1, 'support_query_hourly', 'hour');
    execute support_query_rollup_sql('new_rows', 1, 'support_query_daily', 'day');
    execute support_resolution_sql('new_rows', 1);
  end if;
  return null;
end;
$$;

-- Rows written before this migration.
do $$ begin execute support_resolution_sql('support_queries', 1); end $$;
