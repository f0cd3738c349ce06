/**
 * Reading support figures from the rollups (migration 0021): the whole days of a window
 * come from support_query_daily, the whole hours of its partial edge days from
 * support_query_hourly, the partial edge hours from the raw rows, all shaped alike, so every sum
 * is exact for any instant-precise window. The rollups are read through their `_live` views
 * (migration 0090), which add the contributions not folded yet.
 */
import { sql, type RawBuilder } from 'kysely';
import { PRIORITIES, QUERY_STATUSES, QUERY_TYPES } from './support-queries.tables.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
export const NO_AGENT = '00000000-0000-0000-0000-000000000000';

/** Rollup column → the same figure for one raw row (created part). */
const RAW_COLUMNS: [string, RawBuilder<unknown>][] = [
  ['created_count', sql`1`],
  ...QUERY_STATUSES.map((value): [string, RawBuilder<unknown>] => [
    `status_${value}`,
    sql`(status = ${sql.lit(value)})::int`,
  ]),
  ...QUERY_TYPES.map((value): [string, RawBuilder<unknown>] => [
    `type_${value}`,
    sql`(query_type = ${sql.lit(value)})::int`,
  ]),
  ...PRIORITIES.map((value): [string, RawBuilder<unknown>] => [
    `priority_${value}`,
    sql`(priority = ${sql.lit(value)})::int`,
  ]),
  ['escalated_count', sql`escalated_to_human::int`],
  ['resolved_count', sql`(resolved_at is not null)::int`],
  ['agent_resolved_count', sql`(resolved_at is not null and not escalated_to_human)::int`],
  ['resolution_minutes_sum', sql`coalesce(resolution_minutes, 0)`],
  ['satisfaction_sum', sql`coalesce(customer_satisfaction, 0)`],
  ['satisfaction_count', sql`(customer_satisfaction is not null)::int`],
  ['resolutions', sql`0`],
  [
    'agent_resolution_minutes_sum',
    sql`case when resolved_at is not null and not escalated_to_human then coalesce(resolution_minutes, 0) else 0 end`,
  ],
];
export const ROLLUP_COLUMNS = RAW_COLUMNS.map(([name]) => name);

/** A half-open range [lo, hi); an undefined end is open. */
export interface Range {
  lo?: Date | undefined;
  hi?: Date | undefined;
}

export interface Plan {
  daily: Range | null;
  hourly: Range[];
  raw: Range[];
}

const ceilTo = (date: Date, unit: number) => new Date(Math.ceil(date.getTime() / unit) * unit);
const floorTo = (date: Date, unit: number) => new Date(Math.floor(date.getTime() / unit) * unit);

/** Splits [from, to) into whole days, whole hours of the edge days, and raw edge ranges. */
export function planWindow(from: Date | undefined, to: Date | undefined): Plan {
  const h1 = from && ceilTo(from, HOUR_MS);
  const h2 = to && floorTo(to, HOUR_MS);
  if (h1 && h2 && h1 >= h2) return { daily: null, hourly: [], raw: [{ lo: from, hi: to }] };
  const raw: Range[] = [];
  if (from && h1 && from < h1) raw.push({ lo: from, hi: h1 });
  if (to && h2 && h2 < to) raw.push({ lo: h2, hi: to });
  const d1 = h1 && ceilTo(h1, DAY_MS);
  const d2 = h2 && floorTo(h2, DAY_MS);
  if (d1 && d2 && d1 >= d2) return { daily: null, hourly: [{ lo: h1, hi: h2 }], raw };
  const hourly: Range[] = [];
  if (h1 && d1 && h1 < d1) hourly.push({ lo: h1, hi: d1 });
  if (h2 && d2 && d2 < h2) hourly.push({ lo: d2, hi: h2 });
  return { daily: { lo: d1, hi: d2 }, hourly, raw };
}

export function inRanges(column: string, ranges: Range[]) {
  const ref = sql.ref(column);
  const parts = ranges.map((range) => {
    const bounds = [range.lo ? sql`${ref} >= ${range.lo}` : null, range.hi ? sql`${ref} < ${range.hi}` : null].filter(
      (b) => b !== null,
    );
    return bounds.length ? sql`(${sql.join(bounds, sql` and `)})` : sql`true`;
  });
  return parts.length ? sql`(${sql.join(parts, sql` or `)})` : sql`false`;
}

/**
 * Rows shaped like the rollups (`at`, `agent_id`, ROLLUP_COLUMNS) whose sums over a window are
 * that window's figures. `agentId` narrows to one agent.
 */
export function rollupSource(
  companyId: string,
  window: { from?: Date | undefined; to?: Date | undefined },
  agentId?: string,
) {
  const plan = planWindow(window.from, window.to);
  const rollupAgent = agentId ? sql`and agent_key = ${agentId}` : sql``;
  const rawAgent = agentId ? sql`and agent_id = ${agentId}` : sql``;
  const columns = sql.join(
    ROLLUP_COLUMNS.map((name) => sql.ref(name)),
    sql`, `,
  );
  const created = sql.join(
    RAW_COLUMNS.map(([name, expression]) => sql`${expression} as ${sql.ref(name)}`),
    sql`, `,
  );
  const resolutions = sql.join(
    ROLLUP_COLUMNS.map((name) => (name === 'resolutions' ? sql`1` : sql`0`)),
    sql`, `,
  );
  const parts: RawBuilder<unknown>[] = [];
  if (plan.daily) {
    parts.push(sql`select day as at, nullif(agent_key, ${NO_AGENT}::uuid) as agent_id, ${columns}
      from support_query_daily_live where company_id = ${companyId} and ${inRanges('day', [plan.daily])} ${rollupAgent}`);
  }
  if (plan.hourly.length) {
    parts.push(sql`select hour as at, nullif(agent_key, ${NO_AGENT}::uuid) as agent_id, ${columns}
      from support_query_hourly_live where company_id = ${companyId} and ${inRanges('hour', plan.hourly)} ${rollupAgent}`);
  }
  if (plan.raw.length) {
    parts.push(sql`select created_at as at, agent_id, ${created}
      from support_queries where company_id = ${companyId} and ${inRanges('created_at', plan.raw)} ${rawAgent}`);
    parts.push(sql`select resolved_at as at, agent_id, ${resolutions}
      from support_queries where company_id = ${companyId} and resolved_at is not null and ${inRanges('resolved_at', plan.raw)} ${rawAgent}`);
  }
  return sql.join(parts, sql` union all `);
}

/** Whole days of [from, to) (null when there is none) and the raw ranges around them. */
export function planDays(from: Date, to: Date): { days: Range | null; raw: Range[] } {
  const d1 = ceilTo(from, DAY_MS);
  const d2 = floorTo(to, DAY_MS);
  if (d1 >= d2) return { days: null, raw: [{ lo: from, hi: to }] };
  return {
    days: { lo: d1, hi: d2 },
    raw: [...(from < d1 ? [{ lo: from, hi: d1 }] : []), ...(d2 < to ? [{ lo: d2, hi: to }] : [])],
  };
}
