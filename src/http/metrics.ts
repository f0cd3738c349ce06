/**
 * Prometheus metrics over HTTP: request latencies per route, rate-limit refusals (counted by
 * src/http/rate-limit.ts through the `metrics` decoration), and the bearer check of /metrics.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import type { Metrics } from '../lib/metrics.js';
import { AppErrors } from './errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The container's instruments (src/lib/metrics.ts). */
    metrics: Metrics;
  }
}

export function registerMetrics(app: FastifyInstance, metrics: Metrics): Metrics {
  app.decorate('metrics', metrics);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpDuration.observe(
      { method: request.method, route, status_code: reply.statusCode },
      reply.elapsedTime / 1000,
    );
  });
  return metrics;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * `Authorization: Bearer <token>` when METRICS_TOKEN is set (else every scrape is answered). The
 * comparison is of SHA-256 digests in constant time, so neither the token nor its length leaks.
 */
export function metricsTokenAuth(token: string | undefined): onRequestAsyncHookHandler {
  if (token === undefined) return async () => undefined;
  const expected = digest(token);
  return async (request, reply) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (match && timingSafeEqual(digest(match[1]!), expected)) return;
    reply.header('www-authenticate', 'Bearer realm="metrics"');
    throw AppErrors.unauthorized('A valid metrics token is required: Authorization: Bearer <METRICS_TOKEN>');
  };
}
