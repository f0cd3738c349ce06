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
          params: QueryIdParams,
          querystring: NotesQueryParams,
          response: { 200: SupportNotePage, ...errors },
        },
      },
      async (request) => service.notes(companyContext(request), request.params.query_id, request.query),
    );
  };
}
