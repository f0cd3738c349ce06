/**
 * The aggregate SQL of dashboard, stats and analytics over the window [from, to) of one company:
 * sums over the daily and hourly rollups plus the raw rows of the edge hours
 * (support-queries.rollup.ts); the median reads the resolution histogram, then one bucket's rows.
 * Definitions (DESIGN §6, docs/decisions.md):
 * - resolution time: minutes from created_at to resolved_at, over resolved queries;
 * - agent-resolved: resolved and never escalated to a human; human-resolved: resolved after escalation;
 * - success rate: agent-resolved over handled (all queries of the agent / the window), in percent;
 * - satisfaction: mean of the 1–5 ratings given; 0 when none.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { Granularity } from './support-queries.schemas.js';
import { inRanges, planDays, rollupSource } from './support-queries.rollup.js';
import { PRIORITIES, QUERY_STATUSES, QUERY_TYPES } from './support-queries.tables.js';
import type { Window } from './support-queries.read.js';

function round2(expression: RawBuilder<unknown>) {
  return sql`round((${expression})::numeric, 2)::float8`;
}

/** sum(numerator) / sum(denominator), 0 when the denominator is 0. */
function ratio(numerator: string, denominator: string, scale = 1) {
  return round2(
    sql`coalesce(${sql.lit(scale)} * sum(${sql.ref(numerator)}) / nullif(sum(${sql.ref(denominator)}), 0), 0)`,
  );
}

function sumsOf(prefix: string, values: readonly string[], key: string) {
  return sql.join(
    values.map((value) => sql`coalesce(sum(${sql.ref(`${prefix}_${value}`)}), 0) as ${sql.ref(`${key}:${value}`)}`),
    sql`, `,
  );
}

export type CountRow = Record<string, number>;

export interface WindowSummary extends CountRow {
  total: number;
  agent_handled: number;
  escalated: number;
  resolved: number;
  agent_resolved: number;
  avg_resolution: number;
  resolution_minutes_sum: number;
  avg_satisfaction: number;
}

/** Totals, counts per status, type and priority, resolution and satisfaction figures of the window. */
export async function windowSummary(db: Executor, companyId: string, window: Window): Promise<WindowSummary> {
  const result = await sql<WindowSummary>`
    select coalesce(sum(created_count), 0) as total,
      coalesce(sum(created_count) - sum(escalated_count), 0) as agent_handled,
      coalesce(sum(escalated_count), 0) as escalated,
      coalesce(sum(resolved_count), 0) as resolved,
      coalesce(sum(agent_resolved_count), 0) as agent_resolved,
      ${ratio('resolution_minutes_sum', 'resolved_count')} as avg_resolution,
      coalesce(sum(resolution_minutes_sum), 0) as resolution_minutes_sum,
      ${ratio('satisfaction_sum', 'satisfaction_count')} as avg_satisfaction,
      ${sumsOf('status', QUERY_STATUSES, 'status')}, ${sumsOf('type', QUERY_TYPES, 'query_type')}, ${sumsOf('priority', PRIORITIES, 'priority')}
    from (${rollupSource(companyId, window)}) s`.execute(db);
  return result.rows[0]!;
}

/**
 * Median minutes to resolution of the window's resolved queries, as percentile_cont(0.5) would
 * give it (0 when none), without sorting the window, in one statement (one snapshot, one round
 * trip): the daily histogram (plus the raw rows of the partial edge days, each edge read alone so
 * that it is an index-only scan) locates the bucket of the two middle ranks, and only that
 * bucket's rows of the window are read, in order.
 */
export async function medianResolution(db: Executor, companyId: string, window: Window): Promise<number> {
  const plan = planDays(window.from, window.to);
  const parts = plan.raw.map(
    (range) => sql`select support_resolution_bucket(resolution_minutes) as bucket, 1 as n from support_queries
      where company_id = ${companyId} and resolved_at is not null and ${inRanges('created_at', [range])}`,
  );
  if (plan.days) {
    parts.unshift(sql`select bucket, resolved as n from support_resolution_daily_live
      where company_id = ${companyId} and day >= ${plan.days.lo} and day < ${plan.days.hi}`);
  }
  const result = await sql<{ position: number | null; lower: number | null; low: number | null; high: number | null }>`
    with histogram as (
      select bucket, sum(n) as n from (${sql.join(parts, sql` union all `)}) h group by bucket having sum(n) <> 0
    ),
    ranked as (select bucket, n, sum(n) over (order by bucket) as upto from histogram),
    middle as (
      select 0.5 * (sum(n) - 1) as position, floor(0.5 * (sum(n) - 1)) as lower, ceil(0.5 * (sum(n) - 1)) as upper
      from histogram
    ),
    span as (
      select middle.*,
        (select bucket from ranked where upto > middle.lower order by bucket limit 1) as first_bucket,
        (select upto - n from ranked where upto > middle.lower order by bucket limit 1) as before,
        (select bucket from ranked where upto > middle.upper order by bucket limit 1) as last_bucket
      from middle
    ),
    ordered as (
      select q.resolution_minutes as minutes,
        span.before + row_number() over (order by q.resolution_minutes) - 1 as rank
      from span
      join support_queries q on q.company_id = ${companyId} and q.resolved_at is not null
        and support_resolution_bucket(q.resolution_minutes) between span.first_bucket and span.last_bucket
        and q.created_at >= ${window.from} and q.created_at < ${window.to}
    )
    select position, lower,
      (select minutes from ordered where rank = span.lower) as low,
      (select minutes from ordered where rank = span.upper) as high
    from span`.execute(db);
  const row = result.rows[0];
  if (!row || row.position === null || row.lower === null || row.low === null || row.high === null) return 0;
  const { position, lower, low, high } = row;
  return Math.round((low + (high - low) * (position - lower)) * 100) / 100;
}

export interface AgentWindowRow {
  agent_id: string;
  agent_name: string;
  queries_handled: number;
  success_rate: number;
  avg_resolution_time: number;
  customer_satisfaction: number;
}

const perAgent = (companyId: string, window: Window) => sql`
  select agent_id, sum(created_count) as handled, sum(agent_resolved_count) as agent_resolved,
    ${ratio('agent_resolution_minutes_sum', 'agent_resolved_count')} as avg_resolution,
    ${ratio('satisfaction_sum', 'satisfaction_count')} as avg_satisfaction
  from (${rollupSource(companyId, window)}) s
  where agent_id is not null
  group by agent_id
  having sum(created_count) > 0`;

/** The best agents of the window: highest success rate, then most queries handled. */
export async function topAgents(
  db: Executor,
  companyId: string,
  window: Window,
  limit: number,
): Promise<AgentWindowRow[]> {
  const result = await sql<AgentWindowRow>`
    with g as (${perAgent(companyId, window)})
    select g.agent_id, a.title as agent_name, g.handled as queries_handled,
      ${round2(sql`100.0 * g.agent_resolved / g.handled`)} as success_rate,
      g.avg_resolution as avg_resolution_time, g.avg_satisfaction as customer_satisfaction
    from g join agents a on a.id = g.agent_id and a.company_id = ${companyId}
    order by g.agent_resolved::float8 / g.handled desc, g.handled desc, g.agent_id
    limit ${limit}`.execute(db);
  return result.rows;
}

export interface AgentPerformanceRow {
  total_agents_active: number;
  avg_queries_per_agent: number;
  top_agent_success_rate: number;
  agents_above_target: number;
}

/** How many agents worked in the window, their mean load, the best success rate, and how many meet the target. */
export async function agentPerformance(
  db: Executor,
  companyId: string,
  window: Window,
  targetPercent: number,
): Promise<AgentPerformanceRow> {
  const result = await sql<AgentPerformanceRow>`
    with g as (${perAgent(companyId, window)})
    select count(*) as total_agents_active,
      ${round2(sql`coalesce(avg(handled), 0)`)} as avg_queries_per_agent,
      ${round2(sql`coalesce(max(100.0 * agent_resolved / handled), 0)`)} as top_agent_success_rate,
      count(*) filter (where 100.0 * agent_resolved / handled >= ${targetPercent}) as agents_above_target
    from g`.execute(db);
  return result.rows[0]!;
}

export async function recentQueries(db: Executor, companyId: string, window: Window, limit: number) {
  if (limit === 0) return [];
  return db
    .selectFrom('support_queries')
    .select([
      'id',
      'subject',
      'status',
      'priority',
      'created_at',
      'resolved_at',
      'agent_id',
      'resolution_method',
      'customer_satisfaction',
    ])
    .where('company_id', '=', companyId)
    .where('created_at', '>=', window.from)
    .where('created_at', '<', window.to)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** The buckets of the window, as `date_trunc(granularity, …)` in UTC. */
function buckets(window: Window, granularity: Granularity) {
  const unit = sql.lit(granularity);
  return sql`generate_series(
    date_trunc(${unit}, ${window.from}::timestamptz at time zone 'UTC'),
    date_trunc(${unit}, (${window.to}::timestamptz - interval '1 millisecond') at time zone 'UTC'),
    ${sql.lit(`1 ${granularity}`)}::interval)`;
}

export interface PeriodRow {
  period: string;
  total_queries: number;
  resolved_queries: number;
  avg_resolution_time: number;
}

/** Per period of the window (every period, empty ones as zeros): created, resolved among them, mean resolution time. */
export async function periods(
  db: Executor,
  companyId: string,
  window: Window,
  granularity: Granularity,
): Promise<PeriodRow[]> {
  const result = await sql<PeriodRow>`
    with s as (
      select date_trunc(${sql.lit(granularity)}, at at time zone 'UTC') as bucket, sum(created_count) as total, sum(resolved_count) as resolved,
        ${ratio('resolution_minutes_sum', 'resolved_count')} as avg_resolution
      from (${rollupSource(companyId, window)}) r group by 1)
    select to_char(b.bucket, 'YYYY-MM-DD') as period, coalesce(s.total, 0) as total_queries,
      coalesce(s.resolved, 0) as resolved_queries, coalesce(s.avg_resolution, 0) as avg_resolution_time
    from ${buckets(window, granularity)} as b(bucket) left join s on s.bucket = b.bucket
    order by b.bucket`.execute(db);
  return result.rows;
}

export interface SeriesRow {
  date: string;
  queries_created: number;
  queries_resolved: number;
}

/** Queries created per period, and queries resolved per period (by resolved_at, within the window). */
export async function timeSeries(
  db: Executor,
  companyId: string,
  window: Window,
  granularity: Granularity,
): Promise<SeriesRow[]> {
  const result = await sql<SeriesRow>`
    with s as (
      select date_trunc(${sql.lit(granularity)}, at at time zone 'UTC') as bucket, sum(created_count) as created, sum(resolutions) as resolved
      from (${rollupSource(companyId, window)}) r group by 1)
    select to_char(b.bucket, 'YYYY-MM-DD') as date, coalesce(s.created, 0) as queries_created, coalesce(s.resolved, 0) as queries_resolved
    from ${buckets(window, granularity)} as b(bucket) left join s on s.bucket = b.bucket
    order by b.bucket`.execute(db);
  return result.rows;
}

/** The two halves of a window (trends compare them). */
export function halves(window: Window): [Window, Window] {
  const middle = new Date((window.from.getTime() + window.to.getTime()) / 2);
  return [
    { from: window.from, to: middle },
    { from: middle, to: window.to },
  ];
}
