import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

/** Sends `count` cheap requests (each refused after the limit check) and returns their statuses. */
async function burst(count: number, request: () => Promise<{ statusCode: number }>) {
  const statuses: number[] = [];
  for (let i = 0; i < count; i += 1) statuses.push((await request()).statusCode);
  return statuses;
}

describe('chat rate limits per token', () => {
  it.each([
    ['conversation management', 100, 'GET', '/api/v1/chat/conversations', undefined],
    ['non-streaming chat', 60, 'POST', '/api/v1/chat/agent/chat', { agent_key: 'agent:bad', query: 'x' }],
    ['streaming chat', 30, 'POST', '/api/v1/chat/agent/stream', { agent_key: 'agent:bad', query: 'x' }],
  ] as const)('allows %s %i requests a minute, then 429 with Retry-After', async (_name, max, method, url, payload) => {
    const tenant = await createTenant(t.container);
    const { headers } = await tenant.chatToken();
    const send = () => t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    const statuses = await burst(max, send);
    expect(statuses.every((status) => status !== 429)).toBe(true);
    const limited = await send();
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: 'TooManyRequests', statusCode: 429 });
    expect(limited.headers['ratelimit-limit']).toBe(String(max));
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another token of the same company has its own counter.
    const fresh = (await tenant.chatToken()).headers;
    expect((await t.app.inject({ method, url, headers: fresh, ...(payload ? { payload } : {}) })).statusCode).not.toBe(
      429,
    );
  });

  it('counts the three kinds separately', async () => {
    const tenant = await createTenant(t.container);
    const { headers } = await tenant.chatToken();
    await burst(30, () =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/chat/agent/stream',
        headers,
        payload: { agent_key: 'bad', query: 'x' },
      }),
    );
    const stream = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/stream',
      headers,
      payload: { agent_key: 'bad', query: 'x' },
    });
    expect(stream.statusCode).toBe(429);
    const chatRes = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers,
      payload: { agent_key: 'bad', query: 'x' },
    });
    expect(chatRes.statusCode).toBe(400);
    expect(chatRes.headers['ratelimit-remaining']).toBe('59');
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations', headers })).headers['ratelimit-limit'],
    ).toBe('100');
  });
});
