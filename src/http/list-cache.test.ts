import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createListPages, listCacheHooks } from './list-cache.js';

const page = (body: string) => ({ contentType: 'application/json; charset=utf-8', body });

function pages(options: { maxEntries?: number; ttlMs?: number; enabled?: boolean } = {}) {
  let time = 1_000;
  const cache = createListPages({
    ttlMs: options.ttlMs ?? 60_000,
    maxEntries: options.maxEntries ?? 100,
    isEnabled: () => options.enabled ?? true,
    now: () => time,
  });
  return { cache, advance: (ms: number) => (time += ms) };
}

describe('list pages', () => {
  it("clears one company's pages without touching another's", () => {
    const { cache } = pages();
    cache.set('a', 'GET /agents', page('A'), cache.stamp('a'));
    cache.set('b', 'GET /agents', page('B'), cache.stamp('b'));
    cache.clearCompany('a');
    expect(cache.get('a', 'GET /agents')).toBeUndefined();
    expect(cache.get('b', 'GET /agents')?.body).toBe('B');
    cache.clear();
    expect(cache.get('b', 'GET /agents')).toBeUndefined();
  });

  it('drops a page read before its company was cleared, and keeps other companies’ reads', () => {
    const { cache } = pages();
    const a = cache.stamp('a');
    const b = cache.stamp('b');
    cache.clearCompany('a');
    cache.set('a', 'k', page('stale'), a);
    cache.set('b', 'k', page('fresh'), b);
    expect(cache.get('a', 'k')).toBeUndefined();
    expect(cache.get('b', 'k')?.body).toBe('fresh');
    // A whole clearing makes every earlier stamp stale, a company's own clearing included.
    const before = cache.stamp('a');
    cache.clear();
    cache.set('a', 'k', page('stale'), before);
    expect(cache.get('a', 'k')).toBeUndefined();
    cache.set('a', 'k', page('after'), cache.stamp('a'));
    expect(cache.get('a', 'k')?.body).toBe('after');
    // …and a company cleared before the whole clearing gets a stamp different from its old one.
    const stamps = new Set([a, before, cache.stamp('a')]);
    expect(stamps.size).toBe(3);
  });

  it('keeps a page for the shorter of the cache’s lifetime and the route’s maximum age', () => {
    const { cache, advance } = pages({ ttlMs: 60_000 });
    cache.set('a', 'agents', page('figures'), cache.stamp('a'), 1_000);
    cache.set('a', 'deployments', page('rows'), cache.stamp('a'));
    advance(999);
    expect(cache.get('a', 'agents')?.body).toBe('figures');
    advance(1);
    expect(cache.get('a', 'agents')).toBeUndefined();
    expect(cache.get('a', 'deployments')?.body).toBe('rows');
    advance(59_000);
    expect(cache.get('a', 'deployments')).toBeUndefined();
  });

  it('holds at most maxEntries pages, the oldest company’s oldest first out', () => {
    const { cache } = pages({ maxEntries: 3 });
    cache.set('a', '1', page('a1'), cache.stamp('a'));
    cache.set('a', '2', page('a2'), cache.stamp('a'));
    cache.set('b', '1', page('b1'), cache.stamp('b'));
    cache.set('b', '1', page('b1 again'), cache.stamp('b'));
    expect(cache.get('a', '1')?.body).toBe('a1');
    cache.set('c', '1', page('c1'), cache.stamp('c'));
    cache.set('c', '2', page('c2'), cache.stamp('c'));
    expect(cache.get('a', '1')).toBeUndefined();
    expect(cache.get('a', '2')).toBeUndefined();
    expect(['b1 again', 'c1', 'c2']).toEqual(
      [cache.get('b', '1'), cache.get('c', '1'), cache.get('c', '2')].map((p) => p?.body),
    );
  });

  it('stores nothing while disabled or with no lifetime', () => {
    for (const options of [{ enabled: false }, { ttlMs: 0 }]) {
      const { cache } = pages(options);
      cache.set('a', 'k', page('x'), cache.stamp('a'));
      expect(cache.get('a', 'k')).toBeUndefined();
    }
  });
});

describe('list cache hooks', () => {
  /** The parts of a Fastify request and reply the hooks read. */
  function request(method: string, companyId: string | null, listCache?: boolean) {
    return {
      method,
      caller: companyId ? { kind: 'user', companyId, role: 'owner', userId: 'u' } : null,
      routeOptions: { url: '/api/public/deployments', config: listCache ? { listCache } : {} },
      query: {},
      body: undefined,
    } as unknown as FastifyRequest;
  }
  const reply = { statusCode: 200, getHeader: () => 'application/json', header: () => reply, send: () => reply };

  it("clears the writing company's pages only, and every page for a write without a company", async () => {
    const { cache } = pages();
    const hooks = listCacheHooks(cache);
    for (const company of ['a', 'b']) {
      const read = request('GET', company, true);
      await hooks.preHandler(read, reply as unknown as FastifyReply);
      await hooks.onSend(read, reply as unknown as FastifyReply, `page of ${company}`);
    }
    const key = 'GET /api/public/deployments\n{}';
    expect([cache.get('a', key)?.body, cache.get('b', key)?.body]).toEqual(['page of a', 'page of b']);
    await hooks.onSend(request('GET', 'a'), reply as unknown as FastifyReply, 'a read of another route');
    expect(cache.get('a', key)?.body).toBe('page of a');
    await hooks.onSend(request('PATCH', 'a'), reply as unknown as FastifyReply, '{}');
    expect([cache.get('a', key), cache.get('b', key)?.body]).toEqual([undefined, 'page of b']);
    await hooks.onSend(request('POST', null), reply as unknown as FastifyReply, '{}');
    expect(cache.get('b', key)).toBeUndefined();
  });
});
