/**
 * SQL of the family's record reads: the filtered list, one query, notes, and what a query
 * record embeds (its end user, its agent with all-time metrics, its notes), each fetched with
 * one query per page rather than per row. Executor first; the company in every WHERE.
 */
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { rollupSource } from './support-queries.rollup.js';
import type { Priority, QueryStatus, QueryType } from './support-queries.tables.js';

/** A half-open interval [from, to) of created_at. */
export interface Window {
  from: Date;
  to: Date;
}

export interface QueryFilters {
  queryType?: QueryType;
  status?: QueryStatus;
  priority?: Priority;
  agentId?: string;
  userId?: string;
  from?: Date;
  to?: Date;
}

type QueriesFrom = SelectQueryBuilder<Database, 'support_queries', object>;

function applyFilters(query: QueriesFrom, companyId: string, filters: QueryFilters): QueriesFrom {
  let q = query.where('support_queries.company_id', '=', companyId);
  if (filters.queryType) q = q.where('support_queries.query_type', '=', filters.queryType);
  if (filters.status) q = q.where('support_queries.status', '=', filters.status);
  if (filters.priority) q = q.where('support_queries.priority', '=', filters.priority);
  if (filters.agentId) q = q.where('support_queries.agent_id', '=', filters.agentId);
  if (filters.userId) q = q.where('support_queries.user_id', '=', filters.userId);
  if (filters.from) q = q.where('support_queries.created_at', '>=', filters.from);
  if (filters.to) q = q.where('support_queries.created_at', '<', filters.to);
  return q;
}

function selectQueryRows(query: QueriesFrom) {
  return query
    .innerJoin('end_users', 'end_users.id', 'support_queries.user_id')
    .selectAll('support_queries')
    .select(['end_users.email as user_email', 'end_users.name as user_name']);
}

export type QueryRow = Awaited<ReturnType<typeof findQueryRow>> & object;

export async function listQueryRows(
  db: Executor,
  companyId: string,
  filters: QueryFilters,
  skip: number,
  limit: number,
) {
  const base = applyFilters(db.selectFrom('support_queries'), companyId, filters);
  const [rows, total] = await Promise.all([
    selectQueryRows(base)
      .orderBy('support_queries.created_at', 'desc')
      .orderBy('support_queries.id', 'desc')
      .offset(skip)
      .limit(limit)
      .execute(),
    countQueries(db, companyId, filters),
  ]);
  return { rows, total };
}

/**
 * How many queries match. With at most one of status, query_type and priority (and no user_id),
 * the hourly rollup answers (plus the raw rows of the edge hours); otherwise the rows are counted.
 */
export async function countQueries(db: Executor, companyId: string, filters: QueryFilters): Promise<number> {
  const columns = [
    filters.status && `status_${filters.status}`,
    filters.queryType && `type_${filters.queryType}`,
    filters.priority && `priority_${filters.priority}`,
  ].filter((column): column is string => Boolean(column));
  if (filters.userId || columns.length > 1) {
    const row = await applyFilters(db.selectFrom('support_queries'), companyId, filters)
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow();
    return row.total;
  }
  const result = await sql<{ total: number }>`
    select coalesce(sum(${sql.ref(columns[0] ?? 'created_count')}), 0) as total
    from (${rollupSource(companyId, { from: filters.from, to: filters.to }, filters.agentId)}) s`.execute(db);
  return result.rows[0]!.total;
}

export async function findQueryRow(db: Executor, companyId: string, queryId: string) {
  return selectQueryRows(
    db
      .selectFrom('support_queries')
      .where('support_queries.company_id', '=', companyId)
      .where('support_queries.id', '=', queryId),
  ).executeTakeFirst();
}

export async function queryExists(db: Executor, companyId: string, queryId: string): Promise<boolean> {
  const row = await db
    .selectFrom('support_queries')
    .select('id')
    .where('company_id', '=', companyId)
    .where('id', '=', queryId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * One agent's all-time counters (a lateral subquery on the agents row aliased `a`): the folded
 * rollup plus the contributions not folded yet (migration 0090), so they are exact at any moment.
 * Columns: queries_handled, resolved_count, resolution_minutes_sum, agent_resolved_count,
 * satisfaction_sum, satisfaction_count, agent_resolution_minutes_sum (null when the agent has none).
 */
export function agentCountersLateral(companyId: string) {
  return sql`(
    select sum(queries_handled) as queries_handled, sum(resolved_count) as resolved_count,
      sum(resolution_minutes_sum) as resolution_minutes_sum, sum(agent_resolved_count) as agent_resolved_count,
      sum(satisfaction_sum) as satisfaction_sum, sum(satisfaction_count) as satisfaction_count,
      sum(agent_resolution_minutes_sum) as agent_resolution_minutes_sum
    from (
      select queries_handled, resolved_count, resolution_minutes_sum, agent_resolved_count, satisfaction_sum,
        satisfaction_count, agent_resolution_minutes_sum
      from support_agent_metrics where agent_id = a.id
      union all
      select sign, sign * (resolved_at is not null)::int, sign * coalesce(resolution_minutes, 0),
        sign * (resolved_at is not null and not escalated_to_human)::int, sign * coalesce(customer_satisfaction, 0),
        sign * (customer_satisfaction is not null)::int,
        case when resolved_at is not null and not escalated_to_human
          then sign * coalesce(resolution_minutes, 0) else 0 end
      from support_rollup_pending where agent_id = a.id and company_id = ${companyId}
    ) u
  )`;
}

/** Agents of the company with their all-time counters (see `agentCountersLateral`). */
export async function agentsWithMetrics(db: Executor, companyId: string, agentIds: string[]) {
  if (agentIds.length === 0) return [];
  const counters = agentCountersLateral(companyId);
  return db
    .selectFrom('agents as a')
    .leftJoinLateral(counters.as('m'), (join) => join.onTrue())
    .select([
      'a.id',
      'a.title',
      'a.task_description',
      sql<number>`coalesce(m.queries_handled, 0)`.as('queries_handled'),
      sql<number>`coalesce(m.resolved_count, 0)`.as('resolved_count'),
      sql<number>`coalesce(m.resolution_minutes_sum, 0)`.as('resolution_minutes_sum'),
      sql<number>`coalesce(m.agent_resolved_count, 0)`.as('agent_resolved_count'),
      sql<number>`coalesce(m.satisfaction_sum, 0)`.as('satisfaction_sum'),
      sql<number>`coalesce(m.satisfaction_count, 0)`.as('satisfaction_count'),
      sql<number>`coalesce(m.agent_resolution_minutes_sum, 0)`.as('agent_resolution_minutes_sum'),
    ])
    .where('a.company_id', '=', companyId)
    .where('a.id', 'in', agentIds)
    .execute();
}
export type AgentMetricsRow = Awaited<ReturnType<typeof agentsWithMetrics>>[number];

const NOTE_COLUMNS = [
  'n.id',
  'n.query_id',
  'n.user_id',
  'n.content',
  'n.is_internal',
  'n.created_at',
  'w.email as user_email',
  sql<string | null>`nullif(trim(w.first_name || ' ' || w.last_name), '')`.as('user_name'),
] as const;

/** Every note of these queries (oldest first), with their authors. */
export async function notesOfQueries(db: Executor, companyId: string, queryIds: string[]) {
  if (queryIds.length === 0) return [];
  return db
    .selectFrom('support_notes as n')
    .leftJoin('users as w', 'w.id', 'n.user_id')
    .select(NOTE_COLUMNS)
    .where('n.company_id', '=', companyId)
    .where('n.query_id', 'in', queryIds)
    .orderBy('n.created_at')
    .orderBy('n.id')
    .execute();
}
export type NoteRow = Awaited<ReturnType<typeof notesOfQueries>>[number];

export async function listNoteRows(
  db: Executor,
  companyId: string,
  queryId: string,
  includeInternal: boolean,
  skip: number,
  limit: number,
) {
  let base = db
    .selectFrom('support_notes as n')
    .where('n.company_id', '=', companyId)
    .where('n.query_id', '=', queryId);
  if (!includeInternal) base = base.where('n.is_internal', '=', false);
  const [rows, count] = await Promise.all([
    base
      .leftJoin('users as w', 'w.id', 'n.user_id')
      .select(NOTE_COLUMNS)
      .orderBy('n.created_at')
      .orderBy('n.id')
      .offset(skip)
      .limit(limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}
