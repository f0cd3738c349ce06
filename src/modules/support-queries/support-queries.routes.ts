/**
 * The support-queries family, with full paths (`/customer-support`, `/customer-support/{query_id}` …).
 * Registered by app.ts inside the insights scope (x-api-key, 1000/hour and 100/minute per key).
 * Static paths (dashboard, stats, analytics) win over `/{query_id}` in Fastify's router.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { companyContext } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Uuid } from '../../http/schemas.js';
import {
  Analytics,
  AnalyticsParams,
  Dashboard,
  DashboardParams,
  ListQueryParams,
  NotesQueryParams,
  Stats,
  StatsParams,
  SupportNotePage,
  SupportQuery,
  SupportQueryPage,
} from './support-queries.schemas.js';
import type { SupportQueriesService } from './support-queries.service.js';

const errors = errorResponses('insights', [400, 401, 403, 404, 429, 500]);
const tags = ['support queries'];
const QueryIdParams = Type.Object({ query_id: Uuid() });

export function supportQueriesRoutes(service: SupportQueriesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/customer-support',
      {
        schema: {
          operationId: 'listSupportQueries',
          tags,
          summary: 'Support queries of the company, newest first, with filters',
          description:
            'Support queries of the company, newest first, filtered by type, status, priority, agent, user and creation dates (`skip`, `limit`).',
          querystring: ListQueryParams,
          response: { 200: SupportQueryPage, ...errors },
        },
      },
      async (request) => service.list(companyContext(request), request.query),
    );

    app.get(
      '/customer-support/dashboard',
      {
        schema: {
          operationId: 'supportDashboard',
          tags,
          summary: 'Performance dashboard of a window',
          description:
            'Totals by status, type and priority, resolution time, agent success rate, satisfaction, recent queries and top agents, for a window (default: the last INSIGHTS_DEFAULT_WINDOW_DAYS days).',
          querystring: DashboardParams,
          response: { 200: Dashboard, ...errors },
        },
      },
      async (request) => service.dashboard(companyContext(request), request.query),
    );

    app.get(
      '/customer-support/stats',
      {
        schema: {
          operationId: 'supportStats',
          tags,
          summary: 'Statistics of a window; group_by adds a per-period breakdown',
          description:
            'Counts by status, type and priority, resolution metrics and agent performance for a window; `group_by` adds a breakdown per day, week or month.',
          querystring: StatsParams,
          response: { 200: Stats, ...errors },
        },
      },
      async (request) => service.stats(companyContext(request), request.query),
    );

    app.get(
      '/customer-support/analytics',
      {
        schema: {
          operationId: 'supportAnalytics',
          tags,
          summary: 'Time series, trends and top categories of a window',
          description:
            'Queries created and resolved per day, week or month, volume and resolution-time trends, and the top categories of a window.',
          querystring: AnalyticsParams,
          response: { 200: Analytics, ...errors },
        },
      },
      async (request) => service.analytics(companyContext(request), request.query),
    );

    app.get(
      '/customer-support/:query_id',
      {
        schema: {
          operationId: 'getSupportQuery',
          tags,
          summary: 'One support query with its user, agent and notes',
          description: 'One support query of the company with its user, agent (and its performance metrics) and notes.',
          params: QueryIdParams,
          response: { 200: SupportQuery, ...errors },
        },
      },
      async (request) => service.get(companyContext(request), request.params.query_id),
    );

    app.get(
      '/customer-support/:query_id/notes',
      {
        schema: {
          operationId: 'listSupportNotes',
          tags,
          summary: 'Notes of a support query, oldest first',
          description:
            'Notes of a support query, oldest first; internal notes are left out with `include_internal=false`.',
          params: QueryIdParams,
          querystring: NotesQueryParams,
          response: { 200: SupportNotePage, ...errors },
        },
      },
      async (request) => service.notes(companyContext(request), request.params.query_id, request.query),
    );
  };
}
