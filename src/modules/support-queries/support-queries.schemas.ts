/** TypeBox schemas of the support-queries family (wire names as the interface spec prints them). */
import { Type, type Static } from '@sinclair/typebox';
import { IsoDate, Nullable, Page, SkipLimit, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { PRIORITIES, QUERY_STATUSES, QUERY_TYPES } from './support-queries.tables.js';

const Minutes = (description: string) => Type.Number({ description: `${description} (minutes)` });
const Percent = (description: string) => Type.Number({ description: `${description} (percent, 0–100)` });
const countsOf = (keys: readonly string[]) => Type.Object(Object.fromEntries(keys.map((key) => [key, Type.Integer()])));

export const Person = Type.Object({ id: Uuid(), email: Nullable(Type.String()), name: Type.String() });

export const PerformanceMetrics = Type.Object({
  total_queries_handled: Type.Integer(),
  avg_resolution_time: Minutes('mean time from creation to resolution'),
  success_rate: Percent('queries resolved by the agent without escalation over queries handled'),
  customer_satisfaction_avg: Type.Number({ description: 'mean rating on the 1–5 scale; 0 when unrated' }),
});

export const SupportNote = Type.Object(
  {
    id: Uuid(),
    query_id: Uuid(),
    user_id: Nullable(Uuid({ description: 'null when the agent or the platform wrote the note' })),
    content: Type.String(),
    is_internal: Type.Boolean(),
    created_at: Timestamp(),
    user: Nullable(Person),
  },
  { title: 'SupportNote' },
);
export type SupportNote = Static<typeof SupportNote>;

export const SupportQuery = Type.Object(
  {
    id: Uuid(),
    company_id: Uuid(),
    user_id: Uuid({ description: 'the end user who opened the query' }),
    agent_id: Nullable(Uuid()),
    deployment_id: Nullable(Uuid()),
    conversation_id: Nullable(Uuid()),
    query_type: StringEnum(QUERY_TYPES),
    status: StringEnum(QUERY_STATUSES),
    priority: StringEnum(PRIORITIES),
    subject: Type.String(),
    description: Type.String(),
    resolution: Type.String(),
    metadata: Type.Object({
      agent_actions_count: Type.Integer(),
      tools_used: Type.Array(Type.String()),
      customer_satisfaction: Nullable(Type.Number({ minimum: 1, maximum: 5 })),
      resolution_method: Nullable(StringEnum(['automated', 'human'] as const)),
      escalated_to_human: Type.Boolean(),
      resolved_by: Nullable(
        Uuid({ description: 'The person who resolved a query handed to the team (null: the agent, or not resolved)' }),
      ),
    }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    resolved_at: Nullable(Timestamp()),
    user: Person,
    agent: Nullable(
      Type.Object({
        id: Uuid(),
        title: Type.String(),
        task_description: Type.String(),
        performance_metrics: PerformanceMetrics,
      }),
    ),
    notes: Type.Array(SupportNote),
  },
  { title: 'SupportQuery' },
);
export type SupportQuery = Static<typeof SupportQuery>;

export const SupportQueryPage = Page(SupportQuery);
export const SupportNotePage = Page(SupportNote);

const windowParams = {
  start_date: Type.Optional(
    IsoDate({ description: 'ISO 8601; from this instant (inclusive). Default: end_date minus the default window.' }),
  ),
  end_date: Type.Optional(
    IsoDate({
      description: 'ISO 8601; up to this instant (inclusive); a bare date covers that whole day. Default: now.',
    }),
  ),
};

export const ListQueryParams = Type.Object({
  ...SkipLimit(50, 100),
  query_type: Type.Optional(StringEnum(QUERY_TYPES)),
  status: Type.Optional(StringEnum(QUERY_STATUSES)),
  priority: Type.Optional(StringEnum(PRIORITIES)),
  agent_id: Type.Optional(Uuid()),
  user_id: Type.Optional(Uuid()),
  start_date: Type.Optional(IsoDate({ description: 'ISO 8601; queries created at or after' })),
  end_date: Type.Optional(
    IsoDate({ description: 'ISO 8601; queries created at or before (a bare date covers that day)' }),
  ),
});
export type ListQueryParams = Static<typeof ListQueryParams>;

export const NotesQueryParams = Type.Object({
  ...SkipLimit(50, 100),
  include_internal: Type.Boolean({ default: true }),
});

export const DashboardParams = Type.Object({
  ...windowParams,
  recent_limit: Type.Integer({ minimum: 0, maximum: 100, default: 10 }),
});
export const StatsParams = Type.Object({
  ...windowParams,
  group_by: Type.Optional(StringEnum(['day', 'week', 'month'] as const)),
});
export const AnalyticsParams = Type.Object({
  ...windowParams,
  granularity: StringEnum(['day', 'week', 'month'] as const, { default: 'day' }),
});
export type Granularity = 'day' | 'week' | 'month';

export const Dashboard = Type.Object({
  total_queries: Type.Integer(),
  open_queries: Type.Integer(),
  in_progress_queries: Type.Integer(),
  resolved_queries: Type.Integer(),
  closed_queries: Type.Integer(),
  avg_resolution_time: Minutes('mean time to resolution'),
  agent_handled_queries: Type.Integer({ description: 'queries the agents handled without escalation' }),
  human_escalated_queries: Type.Integer(),
  agent_success_rate: Percent('resolved by an agent without escalation over all queries'),
  avg_customer_satisfaction: Type.Number(),
  queries_by_type: countsOf(QUERY_TYPES),
  queries_by_priority: countsOf(PRIORITIES),
  recent_queries: Type.Array(
    Type.Object({
      id: Uuid(),
      subject: Type.String(),
      status: StringEnum(QUERY_STATUSES),
      priority: StringEnum(PRIORITIES),
      created_at: Timestamp(),
      resolved_at: Nullable(Timestamp()),
      agent_id: Nullable(Uuid()),
      resolution_method: Nullable(Type.String()),
      customer_satisfaction: Nullable(Type.Number()),
    }),
  ),
  top_performing_agents: Type.Array(
    Type.Object({
      agent_id: Uuid(),
      agent_name: Type.String(),
      queries_handled: Type.Integer(),
      success_rate: Type.Number(),
      avg_resolution_time: Type.Number(),
      customer_satisfaction: Type.Number(),
    }),
  ),
});
export type Dashboard = Static<typeof Dashboard>;

export const Stats = Type.Object({
  total_queries: Type.Integer(),
  by_status: countsOf(QUERY_STATUSES),
  by_type: countsOf(QUERY_TYPES),
  by_priority: countsOf(PRIORITIES),
  resolution_metrics: Type.Object({
    avg_resolution_time: Type.Number(),
    median_resolution_time: Type.Number(),
    total_resolved: Type.Integer(),
    agent_resolved: Type.Integer(),
    human_resolved: Type.Integer(),
    automated_resolution_rate: Percent('resolved by an agent over all resolved'),
  }),
  agent_performance: Type.Object({
    total_agents_active: Type.Integer(),
    avg_queries_per_agent: Type.Number(),
    top_agent_success_rate: Type.Number(),
    agents_above_target: Type.Integer(),
  }),
  periods: Type.Optional(
    Type.Array(
      Type.Object({
        period: Type.String({ format: 'date', description: 'first day of the period (UTC; weeks start on Monday)' }),
        total_queries: Type.Integer(),
        resolved_queries: Type.Integer(),
        avg_resolution_time: Type.Number(),
      }),
      { description: 'present when group_by is given: one entry per period of the window, oldest first' },
    ),
  ),
});
export type Stats = Static<typeof Stats>;

export const Analytics = Type.Object({
  time_series: Type.Array(
    Type.Object({
      date: Type.String({ format: 'date' }),
      queries_created: Type.Integer(),
      queries_resolved: Type.Integer(),
    }),
  ),
  trends: Type.Object({
    query_volume_trend: StringEnum(['increasing', 'decreasing', 'stable'] as const),
    resolution_time_trend: StringEnum(['improving', 'worsening', 'stable'] as const),
  }),
  top_categories: Type.Array(
    Type.Object({ category: StringEnum(QUERY_TYPES), count: Type.Integer(), percentage: Type.Number() }),
  ),
});
export type Analytics = Static<typeof Analytics>;
