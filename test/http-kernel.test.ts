import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppErrors } from '../src/http/errors.js';
import { HOUR, MINUTE, rateLimitHook } from '../src/http/rate-limit.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_PUBLIC_PER_MINUTE: '5' }, (app) => {
    // Test-only routes under each family prefix: one that fails unexpectedly, one that conflicts.
    for (const prefix of [
      '/customer-support',
      '/team-notifications',
      '/api/v1/chat',
      '/api/public/deployments',
      '/api/public/documents',
      '/api/public/collections',
      '/api/public/voice-agents',
      '/api/public/integrations',
      '/api/public/companies',
    ]) {
      app.get(`${prefix}/__boom`, async () => {
        throw new Error('secret internal detail at /srv/app.ts:42');
      });
      app.get(`${prefix}/__conflict`, async () => {
        throw AppErrors.conflict('Deployment is active; cannot start');
      });
    }
    app.register(async (scope) => {
      scope.addHook(
        'onRequest',
        rateLimitHook(scope, 'x-api-key', [
          { name: 'test-hour', max: 4, windowMs: HOUR },
          { name: 'test-minute', max: 3, windowMs: MINUTE },
        ]),
      );
      scope.get('/__limited', async () => ({ ok: true }));
    });
  });
});
afterAll(async () => t.close());

describe('error shapes per family', () => {
  const families: [string, string[]][] = [
    ['/customer-support', ['error', 'message', 'path', 'statusCode', 'timestamp']],
    ['/team-notifications', ['error', 'message', 'path', 'statusCode', 'timestamp']],
    ['/api/v1/chat', ['error', 'message', 'statusCode']],
    ['/api/public/deployments', ['detail', 'status_code']],
    ['/api/public/companies', ['detail', 'status_code']],
    ['/api/public/documents', ['detail']],
    ['/api/public/collections', ['detail']],
    ['/api/public/voice-agents', ['detail']],
    ['/api/public/integrations', ['detail']],
  ];
  for (const [prefix, keys] of families) {
    it(`writes ${keys.join(', ')} under ${prefix} for 404, 409 and 500, and never leaks internals`, async () => {
      const notFound = await t.app.inject({ method: 'GET', url: `${prefix}/no/such/route?x=1` });
      expect(notFound.statusCode).toBe(404);
      expect(Object.keys(notFound.json()).sort()).toEqual(keys);

      const conflict = await t.app.inject({ method: 'GET', url: `${prefix}/__conflict` });
      expect(conflict.statusCode).toBe(409);
      const body = conflict.json();
      expect(Object.keys(body).sort()).toEqual(keys);
      if ('detail' in body) expect(body.detail).toBe('Deployment is active; cannot start');
      if ('error' in body)
        expect(body).toMatchObject({
          error: 'Conflict',
          message: 'Deployment is active; cannot start',
          statusCode: 409,
        });
      if ('path' in body) {
        expect(body.path).toBe(`${prefix}/__conflict`);
        expect(body.timestamp).toMatch(/Z$/);
      }

      const boom = await t.app.inject({ method: 'GET', url: `${prefix}/__boom` });
      expect(boom.statusCode).toBe(500);
      expect(Object.keys(boom.json()).sort()).toEqual(keys);
      expect(boom.body).not.toContain('secret');
      expect(boom.body).not.toContain('.ts');
      expect(boom.body).toContain('Internal server error');
    });
  }

  it('answers 401 for a missing and for an unknown key in the public family', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/api/public/companies/current' });
    expect(missing.json()).toEqual({ detail: 'Missing x-api-key header', status_code: 401 });
    const unknown = await t.app.inject({
      method: 'GET',
      url: '/api/public/companies/current',
      headers: { 'x-api-key': 'sk_made_up_key_value' },
    });
    expect(unknown.json()).toEqual({ detail: 'Invalid or revoked API key', status_code: 401 });
  });
});

describe('rate limits', () => {
  it('sends RateLimit headers and a 429 with Retry-After past the public limit, per key', async () => {
    const tenant = await createTenant(t.container);
    const other = await createTenant(t.container);
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/api/public/companies/current', headers: tenant.headers });
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('5');
      seen.push(Number(res.headers['ratelimit-remaining']));
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    const limited = await t.app.inject({
      method: 'GET',
      url: '/api/public/companies/current',
      headers: tenant.headers,
    });
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({
      detail: expect.stringMatching(/^Rate limit exceeded: 5 requests per minute; retry in \d+ s$/),
      status_code: 429,
    });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/public/companies/current', headers: other.headers })).statusCode,
    ).toBe(200);
  });

  it('applies every window of a route and reports the tightest one', async () => {
    const key = { 'x-api-key': `sk_window_test_${Date.now()}` };
    const first = await t.app.inject({ method: 'GET', url: '/__limited', headers: key });
    expect(first.headers['ratelimit-limit']).toBe('3');
    expect(first.headers['ratelimit-remaining']).toBe('2');
    await t.app.inject({ method: 'GET', url: '/__limited', headers: key });
    await t.app.inject({ method: 'GET', url: '/__limited', headers: key });
    const fourth = await t.app.inject({ method: 'GET', url: '/__limited', headers: key });
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json().detail).toContain('3 requests per minute');
  });

  it('shares counters between instances through Redis', async () => {
    const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    const env = { REDIS_URL: redisUrl, RATE_LIMIT_PUBLIC_PER_MINUTE: '4' };
    const one = await createTestApp(env);
    const two = await createTestApp(env);
    try {
      const tenant = await createTenant(one.container);
      const results: number[] = [];
      for (const instance of [one, two, one, two, one, two]) {
        results.push(
          (await instance.app.inject({ method: 'GET', url: '/api/public/companies/current', headers: tenant.headers }))
            .statusCode,
        );
      }
      expect(results).toEqual([200, 200, 200, 200, 429, 429]);
      const probe = new Redis(redisUrl);
      const keys = await probe.keys('switchboard:ratelimit:*');
      await probe.quit();
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.join(' ')).not.toContain(tenant.apiKey);
    } finally {
      await one.close();
      await two.close();
    }
  });
});

describe('operations', () => {
  it('reports health, readiness and Prometheus metrics', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.headers['content-type']).toContain('text/plain');
    expect(metrics.body).toContain('switchboard_http_request_duration_seconds_bucket');
    expect(metrics.body).toContain('route="/readyz"');
  });

  it('names metrics as Prometheus conventions ask: only counters end in _total (promtool check metrics)', async () => {
    const body = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const types = new Map([...body.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1]!, match[2]!]));
    expect(types.size).toBeGreaterThan(10);
    const misnamed = [...types].filter(([name, type]) => name.endsWith('_total') && type !== 'counter');
    expect(misnamed).toEqual([]);
    const counters = [...types].filter(([, type]) => type === 'counter').map(([name]) => name);
    expect(counters.filter((name) => !name.endsWith('_total'))).toEqual([]);
  });

  it('publishes an OpenAPI 3.1 document covering every route, and serves the docs UI', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    for (const expected of [
      'POST /api/public/companies',
      'GET /api/public/companies/current',
      'POST /api/public/companies/switch/{companyId}',
      'DELETE /api/public/companies/members/{memberId}',
      'POST /api/public/companies/invitations/accept',
      'GET /api/public/users/me',
      'POST /api/public/chat-tokens',
      'GET /healthz',
    ]) {
      expect(documented, expected).toContain(expected);
    }
    const op = doc.paths['/api/public/companies/current'].get;
    expect(op.responses['401'].content['application/json'].schema.$ref).toBe('#/components/schemas/DetailStatusError');
    const docs = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('swagger');
  });
});
