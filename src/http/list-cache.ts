/**
 * Serialized list pages, per company, kept in a coherent cache (src/lib/coherent-cache.ts).
 *
 * A route opts in with `config: { listCache: true }`. Its 200 response is stored as the exact
 * bytes sent (and their content type), keyed by the caller's company, the route and the
 * validated query or body with its keys sorted; a later request with the same key is answered
 * with those bytes without running the handler. Lists answer the same to every member of a
 * company, so the role is not part of the key.
 *
 * Coherence: every table the cached lists read has a statement-level trigger notifying
 * `switchboard_lists_changed` (migration 0092), which clears the cache on every instance, for
 * every write path (API, workers, other instances, direct SQL). This instance also clears it
 * itself when any other write request (a method other than GET/HEAD/OPTIONS) is answered, so a
 * list right after a write through this instance shows it without waiting for the notification.
 * A page read while the cache was cleared is not stored (the generation check).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CoherentCache } from '../lib/coherent-cache.js';
import { companyContext } from './auth.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Serve this list route's 200 responses from the per-company list cache. */
    listCache?: boolean;
  }
}

export interface CachedPage {
  contentType: string;
  body: string;
}

/** Pages larger than this are served uncached (the cache's memory stays bounded by entries × this). */
export const MAX_CACHED_PAGE_BYTES = 64 * 1024;

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** JSON with object keys sorted, so that the same query in another order maps to one key. */
function normalised(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

export function listCacheHooks(cache: CoherentCache<CachedPage>) {
  const pending = new WeakMap<FastifyRequest, { key: string; generation: number }>();
  return {
    /** preHandler: answers from the cache, or notes the key to store the page under. */
    async preHandler(request: FastifyRequest, reply: FastifyReply) {
      if (!request.routeOptions.config?.listCache) return;
      const { companyId } = companyContext(request);
      const input = request.method === 'GET' ? request.query : request.body;
      const key = `${companyId}\n${request.method} ${request.routeOptions.url}\n${normalised(input)}`;
      const hit = cache.get(key);
      if (hit) return reply.header('content-type', hit.contentType).send(hit.body);
      pending.set(request, { key, generation: cache.generation });
    },
    /** onSend: stores a fresh page; any other write request clears this instance's cache. */
    async onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
      const entry = pending.get(request);
      if (entry) {
        pending.delete(request);
        const contentType = reply.getHeader('content-type');
        if (
          reply.statusCode === 200 &&
          typeof payload === 'string' &&
          typeof contentType === 'string' &&
          Buffer.byteLength(payload) <= MAX_CACHED_PAGE_BYTES
        ) {
          cache.set(entry.key, { contentType, body: payload }, entry.generation);
        }
      } else if (!READ_METHODS.has(request.method) && !request.routeOptions.config?.listCache) {
        cache.clear();
      }
      return payload;
    },
  };
}
