/**
 * The support-queries module's service: the recorder the platform writes through (see
 * support-queries.recorder.ts) and the read side of the family (list, one query, notes,
 * dashboard, stats, analytics), every read scoped to the caller's company in SQL.
 */
import type { Db, Executor } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import type { PageOf } from '../../http/schemas.js';
import type { Clock } from '../../lib/clock.js';
import * as analytics from './support-queries.analytics.js';
import * as read from './support-queries.read.js';
import { createSupportRecorder } from './support-queries.recorder.js';
import type {
  Analytics,
  Dashboard,
  Granularity,
  ListQueryParams,
  Stats,
  SupportNote,
  SupportQuery,
} from './support-queries.schemas.js';
import { PRIORITIES, QUERY_STATUSES, QUERY_TYPES } from './support-queries.tables.js';
import { checkPeriods, filterBounds, resolutionTrend, resolveWindow, volumeTrend } from './support-queries.window.js';

export interface SupportQueriesDeps {
  db: Db;
  clock: Clock;
  /** Success rate (percent) at or above which an agent counts as above target. */
  agentSuccessTarget: number;
  /** Days covered by dashboard, stats and analytics when no start_date is given. */
  defaultWindowDays: number;
}

export interface WindowParams {
  start_date?: string;
  end_date?: string;
}

const TOP_AGENTS = 5;
const round2 = (value: number) => Math.round(value * 100) / 100;

function pick<K extends string>(
  row: Record<string, number | null>,
  column: string,
  keys: readonly K[],
): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, row[`${column}:${key}`] ?? 0])) as Record<K, number>;
}

export function toPerformanceMetrics(
  row: read.AgentMetricsRow,
): NonNullable<SupportQuery['agent']>['performance_metrics'] {
  return {
    total_queries_handled: row.queries_handled,
    // The agent's own resolutions: a query a person resolved after a hand-off is not the agent's.
    avg_resolution_time: row.agent_resolved_count
      ? round2(row.agent_resolution_minutes_sum / row.agent_resolved_count)
      : 0,
    success_rate: row.queries_handled ? round2((100 * row.agent_resolved_count) / row.queries_handled) : 0,
    customer_satisfaction_avg: row.satisfaction_count ? round2(row.satisfaction_sum / row.satisfaction_count) : 0,
  };
}

export function toNote(row: read.NoteRow): SupportNote {
  return {
    id: row.id,
    query_id: row.query_id,
    user_id: row.user_id,
    content: row.content,
    is_internal: row.is_internal,
    created_at: row.created_at.toISOString(),
    user:
      row.user_id && row.user_email
        ? { id: row.user_id, email: row.user_email, name: row.user_name ?? row.user_email }
        : null,
  };
}

export function toSupportQuery(
  row: read.QueryRow,
  agents: Map<string, read.AgentMetricsRow>,
  notes: SupportNote[],
): SupportQuery {
  const agent = row.agent_id ? agents.get(row.agent_id) : undefined;
  return {
    id: row.id,
    company_id: row.company_id,
    user_id: row.user_id,
    agent_id: row.agent_id,
    deployment_id: row.deployment_id,
    conversation_id: row.conversation_id,
    query_type: row.query_type,
    status: row.status,
    priority: row.priority,
    subject: row.subject,
    description: row.description,
    resolution: row.resolution,
    metadata: {
      agent_actions_count: row.agent_actions_count,
      tools_used: row.tools_used,
      customer_satisfaction: row.customer_satisfaction,
      resolution_method: row.resolution_method,
      escalated_to_human: row.escalated_to_human,
      resolved_by: row.resolved_by,
    },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    resolved_at: row.resolved_at?.toISOString() ?? null,
    user: { id: row.user_id, email: row.user_email, name: row.user_name },
    agent: agent
      ? {
          id: agent.id,
          title: agent.title,
          task_description: agent.task_description,
          performance_metrics: toPerformanceMetrics(agent),
        }
      : null,
    notes,
  };
}

export function createSupportQueriesService(deps: SupportQueriesDeps) {
  const { db, clock } = deps;
  const recorder = createSupportRecorder(deps);

  /** Query records with their agents and notes: three queries per page, whatever its size. */
  async function hydrate(context: CompanyContext, rows: read.QueryRow[]): Promise<SupportQuery[]> {
    const agentIds = [...new Set(rows.flatMap((row) => (row.agent_id ? [row.agent_id] : [])))];
    const [agents, notes] = await Promise.all([
      read.agentsWithMetrics(db, context.companyId, agentIds),
      read.notesOfQueries(
        db,
        context.companyId,
        rows.map((row) => row.id),
      ),
    ]);
    const agentMap = new Map(agents.map((agent) => [agent.id, agent]));
    const notesByQuery = new Map<string, SupportNote[]>();
    for (const note of notes)
      notesByQuery.set(note.query_id, [...(notesByQuery.get(note.query_id) ?? []), toNote(note)]);
    return rows.map((row) => toSupportQuery(row, agentMap, notesByQuery.get(row.id) ?? []));
  }

  function windowOf(params: WindowParams) {
    return resolveWindow(clock.now(), deps.defaultWindowDays, params.start_date, params.end_date);
  }

  return {
    ...recorder,

    /**
     * All-time performance_metrics of these agents of the company (from the trigger-kept
     * counters: one key read per agent), for modules that render agents.
     */
    async performanceOfAgents(executor: Executor, companyId: string, agentIds: string[]) {
      const rows = await read.agentsWithMetrics(executor, companyId, agentIds);
      return new Map(rows.map((row) => [row.id, toPerformanceMetrics(row)]));
    },

    /**
     * Agents' performance_metrics read in the caller's own statement: `lateral` is a subquery on
     * the agents row aliased `a` (join it as `m`, on true); `metrics` turns its seven columns
     * (queries_handled, resolved_count, resolution_minutes_sum, agent_resolved_count,
     * satisfaction_sum, satisfaction_count, agent_resolution_minutes_sum; null when none) into the
     * figures.
     */
    performanceSql(companyId: string) {
      return {
        lateral: read.agentCountersLateral(companyId),
        metrics: (row: Record<string, unknown>) =>
          toPerformanceMetrics({
            id: '',
            title: '',
            task_description: '',
            queries_handled: Number(row.queries_handled ?? 0),
            resolved_count: Number(row.resolved_count ?? 0),
            resolution_minutes_sum: Number(row.resolution_minutes_sum ?? 0),
            agent_resolved_count: Number(row.agent_resolved_count ?? 0),
            satisfaction_sum: Number(row.satisfaction_sum ?? 0),
            satisfaction_count: Number(row.satisfaction_count ?? 0),
            agent_resolution_minutes_sum: Number(row.agent_resolution_minutes_sum ?? 0),
          }),
      };
    },

    async list(context: CompanyContext, params: ListQueryParams): Promise<PageOf<SupportQuery>> {
      const filters: read.QueryFilters = {
        ...filterBounds(params.start_date, params.end_date),
        ...(params.query_type ? { queryType: params.query_type } : {}),
        ...(params.status ? { status: params.status } : {}),
        ...(params.priority ? { priority: params.priority } : {}),
        ...(params.agent_id ? { agentId: params.agent_id } : {}),
        ...(params.user_id ? { userId: params.user_id } : {}),
      };
      const { rows, total } = await read.listQueryRows(db, context.companyId, filters, params.skip, params.limit);
      return { data: await hydrate(context, rows), total, skip: params.skip, limit: params.limit };
    },

    async get(context: CompanyContext, queryId: string): Promise<SupportQuery> {
      const row = await read.findQueryRow(db, context.companyId, queryId);
      if (!row) throw AppErrors.notFound('Support query', queryId);
      return (await hydrate(context, [row]))[0]!;
    },

    async notes(
      context: CompanyContext,
      queryId: string,
      params: { skip: number; limit: number; include_internal: boolean },
    ): Promise<PageOf<SupportNote>> {
      if (!(await read.queryExists(db, context.companyId, queryId))) throw AppErrors.notFound('Support query', queryId);
      const { rows, total } = await read.listNoteRows(
        db,
        context.companyId,
        queryId,
        params.include_internal,
        params.skip,
        params.limit,
      );
      return { data: rows.map(toNote), total, skip: params.skip, limit: params.limit };
    },

    async dashboard(context: CompanyContext, params: WindowParams & { recent_limit: number }): Promise<Dashboard> {
      const window = windowOf(params);
      const [summary, recent, top] = await Promise.all([
        analytics.windowSummary(db, context.companyId, window),
        analytics.recentQueries(db, context.companyId, window, params.recent_limit),
        analytics.topAgents(db, context.companyId, window, TOP_AGENTS),
      ]);
      return {
        total_queries: summary.total,
        open_queries: summary['status:open'] ?? 0,
        in_progress_queries: summary['status:in_progress'] ?? 0,
        resolved_queries: summary['status:resolved'] ?? 0,
        closed_queries: summary['status:closed'] ?? 0,
        avg_resolution_time: summary.avg_resolution,
        agent_handled_queries: summary.agent_handled,
        human_escalated_queries: summary.escalated,
        agent_success_rate: summary.total ? round2((100 * summary.agent_resolved) / summary.total) : 0,
        avg_customer_satisfaction: summary.avg_satisfaction,
        queries_by_type: pick(summary, 'query_type', QUERY_TYPES),
        queries_by_priority: pick(summary, 'priority', PRIORITIES),
        recent_queries: recent.map((row) => ({
          ...row,
          created_at: row.created_at.toISOString(),
          resolved_at: row.resolved_at?.toISOString() ?? null,
        })),
        top_performing_agents: top,
      };
    },

    async stats(context: CompanyContext, params: WindowParams & { group_by?: Granularity }): Promise<Stats> {
      const window = windowOf(params);
      if (params.group_by) checkPeriods(window, params.group_by, 'group_by');
      const [summary, median, agents, periods] = await Promise.all([
        analytics.windowSummary(db, context.companyId, window),
        analytics.medianResolution(db, context.companyId, window),
        analytics.agentPerformance(db, context.companyId, window, deps.agentSuccessTarget),
        params.group_by ? analytics.periods(db, context.companyId, window, params.group_by) : undefined,
      ]);
      return {
        total_queries: summary.total,
        by_status: pick(summary, 'status', QUERY_STATUSES),
        by_type: pick(summary, 'query_type', QUERY_TYPES),
        by_priority: pick(summary, 'priority', PRIORITIES),
        resolution_metrics: {
          avg_resolution_time: summary.avg_resolution,
          median_resolution_time: median,
          total_resolved: summary.resolved,
          agent_resolved: summary.agent_resolved,
          human_resolved: summary.resolved - summary.agent_resolved,
          automated_resolution_rate: summary.resolved ? round2((100 * summary.agent_resolved) / summary.resolved) : 0,
        },
        agent_performance: agents,
        ...(periods ? { periods } : {}),
      };
    },

    async analytics(context: CompanyContext, params: WindowParams & { granularity: Granularity }): Promise<Analytics> {
      const window = windowOf(params);
      checkPeriods(window, params.granularity, 'granularity');
      const [first, second] = analytics.halves(window);
      const [series, early, late] = await Promise.all([
        analytics.timeSeries(db, context.companyId, window, params.granularity),
        analytics.windowSummary(db, context.companyId, first),
        analytics.windowSummary(db, context.companyId, second),
      ]);
      const total = early.total + late.total;
      const earlyTypes = pick(early, 'query_type', QUERY_TYPES);
      const lateTypes = pick(late, 'query_type', QUERY_TYPES);
      return {
        time_series: series,
        trends: {
          query_volume_trend: volumeTrend(early.total, late.total),
          resolution_time_trend: resolutionTrend(
            early.resolved ? early.resolution_minutes_sum / early.resolved : null,
            late.resolved ? late.resolution_minutes_sum / late.resolved : null,
          ),
        },
        top_categories: QUERY_TYPES.map((category) => ({ category, count: earlyTypes[category] + lateTypes[category] }))
          .filter((entry) => entry.count > 0)
          .sort((a, b) => b.count - a.count || a.category.localeCompare(b.category))
          .map((entry) => ({ ...entry, percentage: round2((100 * entry.count) / total) })),
      };
    },
  };
}

export type SupportQueriesService = ReturnType<typeof createSupportQueriesService>;
