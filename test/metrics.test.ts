import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chat, chatSetup } from './helpers/chat.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { createTenant } from './helpers/factories.js';
import { uploadArticle } from './knowledge/helpers.js';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';
const bearer = { authorization: `Bearer ${METRICS_TOKEN}` };

let t: TestApp;
let fake: FakeOpenAi;
beforeAll(async () => {
  fake = await startFakeOpenAi(() => ({ tokens: ['Hello', ' there', '!'] }));
  t = await createTestApp({
    LLM_PROVIDERS: fakeProviders(fake),
    METRICS_TOKEN,
    RUN_WORKERS: 'true',
    EMBEDDINGS_PROVIDER: 'none',
    RATE_LIMIT_CHAT_CONVERSATIONS_PER_MINUTE: '1',
  });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

async function scrape(): Promise<string> {
  const response = await t.app.inject({ method: 'GET', url: '/metrics', headers: bearer });
  expect(response.statusCode).toBe(200);
  return response.body;
}

/** The value of one sample, `name{labels} value`, or undefined when it is not exposed. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf('}'));
    const found = Object.fromEntries([...body.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(line.split(' ').at(-1));
  }
  return undefined;
}

describe('GET /metrics', () => {
  it('refuses a scrape without the METRICS_TOKEN bearer or with another token, in constant-time comparison', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(missing.json()).toEqual({ detail: expect.stringContaining('metrics token'), status_code: 401 });
    const wrong = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer nope' } });
    expect(wrong.statusCode).toBe(401);
    const basic = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: METRICS_TOKEN } });
    expect(basic.statusCode).toBe(401);
    const ok = await t.app.inject({ method: 'GET', url: '/metrics', headers: bearer });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain/);
  });

  it('counts a chat turn, its model call (latency, first token, tokens) and its knowledge search as a tool call', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test', temperature: 0.2 });
    const before = await scrape();
    const turns = (text: string) => sample(text, 'switchboard_chat_turns_total', { finish: 'stop', provider: 'fake' });
    const response = await chat(t.app, setup, { query: 'Hello?' });
    expect(response.statusCode).toBe(200);
    const after = await scrape();
    expect(turns(after)).toBe((turns(before) ?? 0) + 1);
    const latency = { model: 'fake:gpt-test', outcome: 'ok' };
    expect(sample(after, 'switchboard_model_request_duration_seconds_count', latency)).toBeGreaterThanOrEqual(1);
    expect(
      sample(after, 'switchboard_model_first_token_seconds_count', { model: 'fake:gpt-test' }),
    ).toBeGreaterThanOrEqual(1);
    // The fake reports 10 prompt tokens and one completion token per streamed token.
    expect(
      sample(after, 'switchboard_model_tokens_total', { model: 'fake:gpt-test', direction: 'input' }),
    ).toBeGreaterThanOrEqual(10);
    expect(
      sample(after, 'switchboard_model_tokens_total', { model: 'fake:gpt-test', direction: 'output' }),
    ).toBeGreaterThanOrEqual(3);
    expect(after).toContain('# TYPE switchboard_tool_calls_total counter');
  });

  it('counts a rate-limit refusal by its window', async () => {
    const tenant = await createTenant(t.container);
    const { headers } = await tenant.chatToken();
    const refused = (text: string) =>
      sample(text, 'switchboard_rate_limit_rejections_total', { limit: 'chat-conversations' }) ?? 0;
    const before = refused(await scrape());
    const first = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations', headers });
    expect(first.statusCode).toBe(200);
    const second = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations', headers });
    expect(second.statusCode).toBe(429);
    expect(refused(await scrape())).toBe(before + 1);
  });

  it('times a job run by a worker and reports queue depth and database pool use', async () => {
    const tenant = await createTenant(t.container, 'developer');
    await uploadArticle(t.app, tenant.headers, { document_title: 'Returns', content: 'Returns are free for 30 days.' });
    let text = '';
    // The worker polls once a second; the deadline is generous, only a stuck worker reaches it.
    for (let attempt = 0; attempt < 300; attempt++) {
      text = await scrape();
      if (/^switchboard_job_duration_seconds_count\{[^}]*outcome="completed"[^}]*\} [1-9]/m.test(text)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(text).toMatch(/^switchboard_job_duration_seconds_count\{[^}]*outcome="completed"[^}]*\} [1-9]/m);
    expect(text).toContain('# TYPE switchboard_job_queue_depth gauge');
    expect(sample(text, 'switchboard_db_pool_connections', { pool: 'app', state: 'total' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'switchboard_db_pool_connections', { pool: 'app', state: 'waiting' })).toBe(0);
  });
});

describe('request ids', () => {
  it('echoes a plain x-request-id in the response', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'edge-7f3a:42' },
    });
    expect(response.headers['x-request-id']).toBe('edge-7f3a:42');
  });

  it('generates one when none is sent, and replaces one that is too long or has unsafe characters', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const none = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(none.headers['x-request-id']).toMatch(uuid);
    for (const unsafe of ['x'.repeat(129), 'id with spaces', 'id"<script>', '']) {
      const response = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': unsafe } });
      expect(response.headers['x-request-id']).toMatch(uuid);
    }
    // Error responses carry it too.
    const missing = await t.app.inject({
      method: 'GET',
      url: '/api/public/nothing-here',
      headers: { 'x-request-id': 'r-1' },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['x-request-id']).toBe('r-1');
  });
});
