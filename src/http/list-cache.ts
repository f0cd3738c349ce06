/**
 * Serialized list pages, per company, kept in a coherent in-process cache.
 *
 * A route opts in with `config: { listCache: true }` (or `{ maxAgeMs }`, below). Its 200 response
 * is stored as the exact bytes sent (and their content type), keyed by the caller's company, the
 * route and the validated query or body with its keys sorted; a later request with the same key
 * is answered with those bytes without running the handler. Lists answer the same to every member
 * of a company, so the role is not part of the key.
 *
 * Coherence: every table the cached lists read has triggers notifying `switchboard_lists_changed`
 * (or, for documents, `switchboard_knowledge_changed`) with the id of each company whose rows
 * changed (migration 0094), which clears those companies' pages on every instance, for every write
 * path (API, workers, other instances, direct SQL); a truncate, a change to regions (every company
 * reads them) or a listener that reconnects clears every page (`pagesChanged`). This instance also
 * clears a company's pages itself when a write request of that company is answered (or the whole
 * cache, for a write without a company), so a list right after a write through this instance
 * shows it without waiting for the notification; the chat module clears a company's pages when a
 * turn it answered has committed. A page read while its company's pages were cleared is not
 * stored (the stamp check).
 *
 * Pages that show figures moved by every chat turn (the agents list's performance metrics) are
 * not notified by those writes (a notification per turn would serialise the turns' commits):
 * their route gives a `maxAgeMs`, the bound on how far behind turns answered by *another*
 * instance they may be. Turns this instance answered show at once.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { companyContext } from './auth.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Serve this list route's 200 responses from the per-company list cache (for at most `maxAgeMs`). */
    listCache?: boolean | { maxAgeMs: number };
  }
}

export interface CachedPage {
  contentType: string;
  body: string;
}

/** Pages larger than this are served uncached (the cache's memory stays bounded by entries × this). */
export const MAX_CACHED_PAGE_BYTES = 64 * 1024;

export interface ListPages {
  get(companyId: string, key: string): CachedPage | undefined;
  /** Stores a page read under `stamp` (from `stamp(companyId)`); dropped if the company's pages were cleared since. */
  set(companyId: string, key: string, page: CachedPage, stamp: number, maxAgeMs?: number): void;
  stamp(companyId: string): number;
  /** Drops one company's pages. */
  clearCompany(companyId: string): void;
  /** Drops every page. */
  clear(): void;
}

export function createListPages(options: {
  ttlMs: number;
  maxEntries: number;
  isEnabled: () => boolean;
  now?: () => number;
}): ListPages {
  const now = options.now ?? Date.now;
  // Pages per company; `count` is the sum of their sizes, bounded by maxEntries (oldest company first out).
  const companies = new Map<string, Map<string, { page: CachedPage; expiresAt: number }>>();
  let count = 0;
  // Every clearing takes a new value of one counter, so a stamp taken before any clearing of
  // its company never equals the stamp after it. `cleared` holds companies cleared since the
  // last whole clearing; the others' stamp is the whole clearing's.
  let counter = 0;
  let clearedAll = 0;
  const cleared = new Map<string, number>();

  function dropCompany(companyId: string) {
    const pages = companies.get(companyId);
    if (!pages) return;
    count -= pages.size;
    companies.delete(companyId);
  }

  return {
    get(companyId, key) {
      if (options.ttlMs <= 0 || !options.isEnabled()) return undefined;
      const pages = companies.get(companyId);
      const entry = pages?.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= now()) {
        pages!.delete(key);
        count -= 1;
        return undefined;
      }
      return entry.page;
    },
    set(companyId, key, page, stamp, maxAgeMs) {
      if (options.ttlMs <= 0 || !options.isEnabled() || stamp !== this.stamp(companyId)) return;
      if (!companies.get(companyId)?.has(key)) {
        // Full: the oldest company's oldest pages go first.
        while (count >= options.maxEntries && companies.size > 0) {
          const [oldest, oldestPages] = companies.entries().next().value!;
          const first = oldestPages.keys().next();
          if (!first.done) {
            oldestPages.delete(first.value);
            count -= 1;
          }
          if (oldestPages.size === 0) companies.delete(oldest);
        }
        count += 1;
      }
      let pages = companies.get(companyId);
      if (!pages) companies.set(companyId, (pages = new Map()));
      pages.set(key, { page, expiresAt: now() + Math.min(options.ttlMs, maxAgeMs ?? options.ttlMs) });
    },
    stamp(companyId) {
      return cleared.get(companyId) ?? clearedAll;
    },
    clearCompany(companyId) {
      cleared.set(companyId, ++counter);
      dropCompany(companyId);
    },
    clear() {
      clearedAll = ++counter;
      cleared.clear();
      companies.clear();
      count = 0;
    },
  };
}

const COMPANY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A change notification's effect: a company's id as the payload clears that company's pages;
 * anything else (a table's name, none: the listener reconnected) clears every page.
 */
export function pagesChanged(cache: ListPages, payload: string | undefined): void {
  if (payload && COMPANY_ID.test(payload)) cache.clearCompany(payload);
  else cache.clear();
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** JSON with object keys sorted, so that the same query in another order maps to one key. */
function normalised(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

/** The caller's company (a member's or an agent token's), or null for a request without one. */
function companyOf(request: FastifyRequest): string | null {
  return request.caller?.companyId ?? null;
}

export function listCacheHooks(cache: ListPages) {
  const pending = new WeakMap<
    FastifyRequest,
    { companyId: string; key: string; stamp: number; maxAgeMs: number | undefined }
  >();
  return {
    /** preHandler: answers from the cache, or notes the key to store the page under. */
    async preHandler(request: FastifyRequest, reply: FastifyReply) {
      const option = request.routeOptions.config?.listCache;
      if (!option) return;
      const { companyId } = companyContext(request);
      const input = request.method === 'GET' ? request.query : request.body;
      const key = `${request.method} ${request.routeOptions.url}\n${normalised(input)}`;
      const hit = cache.get(companyId, key);
      if (hit) return reply.header('content-type', hit.contentType).send(hit.body);
      const maxAgeMs = typeof option === 'object' ? option.maxAgeMs : undefined;
      pending.set(request, { companyId, key, stamp: cache.stamp(companyId), maxAgeMs });
    },
    /** onSend: stores a fresh page; any other write request clears its company's pages. */
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
          cache.set(entry.companyId, entry.key, { contentType, body: payload }, entry.stamp, entry.maxAgeMs);
        }
      } else if (!READ_METHODS.has(request.method) && !request.routeOptions.config?.listCache) {
        const companyId = companyOf(request);
        if (companyId) cache.clearCompany(companyId);
        else cache.clear();
      }
      return payload;
    },
  };
}
