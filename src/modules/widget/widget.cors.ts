/**
 * CORS of the widget's public routes, per key: a browser request (it has `Origin`) is served
 * only when its origin is in the deployment's `allowed_origins` (403 otherwise, without CORS
 * headers, so the page cannot read even that); a request without `Origin` (a server, curl) is
 * served. The hooks run in this order: `cors` finds the key's deployment and sets the headers
 * for an allowed origin (so a 429 that follows is readable by the widget), the rate limits,
 * then `enforce` refuses what `cors` did not allow.
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { AppError, AppErrors, truncateQuoted } from '../../http/errors.js';
import { originAllowed } from './widget.settings.js';
import type { WidgetRecord, WidgetService } from './widget.service.js';

const EXPOSED = 'retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset, x-request-id';
const ALLOWED_HEADERS = 'authorization, content-type, accept, last-event-id';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

type Verdict = { record: WidgetRecord; allowed: boolean } | { error: AppError };

export function createWidgetCors(service: WidgetService) {
  const verdicts = new WeakMap<FastifyRequest, Verdict>();

  const cors: onRequestAsyncHookHandler = async (request, reply) => {
    const key = (request.params as { key?: string }).key ?? '';
    let verdict: Verdict;
    try {
      const record = await service.resolve(key);
      const origin = request.headers.origin;
      verdict = { record, allowed: origin === undefined || originAllowed(record.settings, origin) };
      if (origin !== undefined && verdict.allowed) {
        reply.header('access-control-allow-origin', origin);
        reply.header('access-control-expose-headers', EXPOSED);
      }
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      verdict = { error };
    }
    reply.header('vary', 'Origin');
    verdicts.set(request, verdict);
  };

  const enforce: onRequestAsyncHookHandler = async (request) => {
    const verdict = verdicts.get(request);
    if (!verdict) throw AppErrors.notFound('Widget key');
    if ('error' in verdict) throw verdict.error;
    if (!verdict.allowed) {
      const origin = truncateQuoted(request.headers.origin ?? '', 120);
      throw AppErrors.forbidden(
        `Origin ${origin} may not use this widget: add it to the deployment's config.widget.allowed_origins`,
      );
    }
  };

  return {
    cors,
    enforce,
    /** The key's deployment, as `cors` found it (the routes run after `enforce`). */
    record(request: FastifyRequest): WidgetRecord {
      const verdict = verdicts.get(request);
      if (!verdict || 'error' in verdict) throw AppErrors.notFound('Widget key');
      return verdict.record;
    },
    /** The answer to a CORS preflight (the origin was allowed by the hooks). */
    preflight(_request: FastifyRequest, reply: FastifyReply) {
      return reply
        .header('access-control-allow-methods', 'GET, POST, OPTIONS')
        .header('access-control-allow-headers', ALLOWED_HEADERS)
        .header('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS)
        .code(204)
        .send();
    },
  };
}

export type WidgetCors = ReturnType<typeof createWidgetCors>;
