/**
 * `POST /integrations/{id}/test` against the vendor peers: `{ok, detail, latency_ms}` for a good
 * config, a bad token, a rate limit, a vendor outage, a vendor that never answers, a huge answer,
 * a redirect, a private address when private addresses are not allowed, and kinds whose
 * connector is not built yet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { startFakeShopify, type FakeShopify } from './helpers/fake-shopify.js';
import { startFakeSlack, type FakeSlack } from './helpers/fake-slack.js';
import { integrationsApi } from './helpers/integrations.js';
import { startSmtpPeer, type SmtpPeer } from './helpers/smtp-peer.js';

let t: TestApp;
let guarded: TestApp;
let slack: FakeSlack;
let shop: FakeShopify;
let smtp: SmtpPeer;
let tenant: TestTenant;
beforeAll(async () => {
  [t, guarded, slack, shop, smtp] = await Promise.all([
    createTestApp({ ALLOW_PRIVATE_URLS: 'true', INTEGRATION_TIMEOUT_MS: '3000', INTEGRATION_MAX_RESPONSE_KB: '64' }),
    createTestApp({ ALLOW_PRIVATE_URLS: 'false' }),
    startFakeSlack(),
    startFakeShopify(),
    startSmtpPeer(),
  ]);
  tenant = await createTenant(t.container);
});
afterAll(async () => {
  await Promise.all([slack.close(), shop.close(), smtp.close()]);
  await Promise.all([t.close(), guarded.close()]);
});

async function check(app: TestApp, body: Record<string, unknown>) {
  const api = integrationsApi(app.app, tenant);
  const created = await api.create(body);
  expect(created.statusCode).toBe(201);
  const res = await api.test(created.json().id);
  expect(res.statusCode).toBe(200);
  const result = res.json() as { ok: boolean; detail: string; latency_ms: number };
  expect(Object.keys(result).sort()).toEqual(['detail', 'latency_ms', 'ok']);
  expect(Number.isInteger(result.latency_ms) && result.latency_ms >= 0).toBe(true);
  return result;
}

const slackBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'Slack',
  type: 'slack',
  config: { bot_token: slack.token, channel: '#support', base_url: slack.baseUrl, ...overrides },
});

describe('Slack', () => {
  it('is ok with a good token, even while the integration is inactive', async () => {
    expect(await check(t, { ...slackBody(), is_active: false })).toMatchObject({
      ok: true,
      detail: 'Connected to Slack workspace Acme as switchboard',
    });
  });

  it('fails with the vendor words for a bad token, a rate limit and an outage', async () => {
    expect(await check(t, slackBody({ bot_token: 'xoxb-not-the-right-token' }))).toMatchObject({
      ok: false,
      detail: 'Slack: invalid_auth (the bot token was refused)',
    });
    slack.fail({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '30' },
      body: { ok: false, error: 'ratelimited' },
    });
    expect((await check(t, slackBody())).detail).toBe(
      'Slack: rate limit reached (HTTP 429) (retry after 30 s): ratelimited',
    );
    slack.fail({ kind: 'status', status: 503, body: { ok: false, error: 'service_unavailable' } });
    expect((await check(t, slackBody())).detail).toBe('Slack: server error (HTTP 503): service_unavailable');
  });

  it('fails after INTEGRATION_TIMEOUT_MS when the vendor never answers', async () => {
    slack.fail({ kind: 'hang' });
    expect(await check(t, slackBody())).toMatchObject({ ok: false, detail: 'Slack: no answer within 3000 ms' });
  });

  it('refuses an answer larger than INTEGRATION_MAX_RESPONSE_KB', async () => {
    slack.fail({ kind: 'huge', bytes: 2 * 1024 * 1024 });
    expect(await check(t, slackBody())).toMatchObject({
      ok: false,
      detail: 'Slack: the answer is larger than 65536 bytes',
    });
  });

  it('does not follow a redirect to a private address', async () => {
    slack.fail({ kind: 'redirect', location: 'http://169.254.169.254/latest/meta-data/iam' });
    expect(await check(t, slackBody())).toMatchObject({
      ok: false,
      detail: 'Slack: redirected (HTTP 302) to 169.254.169.254; redirects are not followed',
    });
  });

  it('refuses a private base_url when private addresses are not allowed', async () => {
    const before = slack.requests.length;
    const result = await check(guarded, slackBody());
    expect(result.ok).toBe(false);
    expect(result.detail).toMatch(
      /^Slack: refused to call 127\.0\.0\.1:\d+: 127\.0\.0\.1 is a private or reserved address$/,
    );
    expect(slack.requests.length).toBe(before);
  });
});

describe('Shopify', () => {
  const shopBody = (overrides: Record<string, unknown> = {}) => ({
    name: 'Shop',
    type: 'shopify',
    config: { shop_domain: 'acme.myshopify.com', access_token: shop.token, base_url: shop.url, ...overrides },
  });

  it('is ok with a good token and fails on a bad one, throttling and an outage', async () => {
    expect(await check(t, shopBody())).toMatchObject({ ok: true, detail: 'Connected to Shopify shop Acme Store' });
    expect((await check(t, shopBody({ access_token: 'shpat_wrong_token_000000' }))).detail).toBe(
      'Shopify: credentials were refused (HTTP 401): [API] Invalid API key or access token (unrecognized login or wrong password)',
    );
    shop.throttle();
    expect((await check(t, shopBody())).detail).toBe(
      'Shopify: throttled (query cost above the available limit): Throttled',
    );
    shop.fail({ kind: 'status', status: 502, body: { errors: 'Bad Gateway' } });
    expect((await check(t, shopBody())).detail).toBe('Shopify: server error (HTTP 502): Bad Gateway');
  });
});

describe('SMTP', () => {
  const smtpBody = (overrides: Record<string, unknown> = {}) => ({
    name: 'Mail',
    type: 'smtp',
    config: {
      host: smtp.host,
      port: smtp.port,
      require_tls: false,
      username: smtp.username,
      password: smtp.password,
      from: 'support@acme.test',
      ...overrides,
    },
  });

  it('is ok with the right password and fails with a wrong one', async () => {
    expect(await check(t, smtpBody())).toMatchObject({
      ok: true,
      detail: `Connected to 127.0.0.1:${smtp.port} and signed in`,
    });
    const refused = await check(t, smtpBody({ password: 'not-the-password' }));
    expect(refused.ok).toBe(false);
    expect(refused.detail).toMatch(/^SMTP: 127\.0\.0\.1 refused the credentials: 535/);
  });
});
