/**
 * The connectors against peers that answer like their vendors: the HTTP client's policy
 * (private addresses, redirects, time limit, size cap, error mapping), Slack's Web API, Shopify's
 * Admin GraphQL API and SMTP through a real smtp-server.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnectorHttp, retryAfterMs, type ConnectorHttp } from '../src/adapters/connectors/http.js';
import {
  shopifyConnector,
  shopifyDefaultApiVersion,
  shopifySupportEnds,
  shopifyVersionWarning,
} from '../src/adapters/connectors/shopify/shopify.connector.js';
import { orderSearch, productSearch } from '../src/adapters/connectors/shopify/shopify.graphql.js';
import { slackConnector } from '../src/adapters/connectors/slack/slack.connector.js';
import { smtpConnector, type SmtpConfig } from '../src/adapters/connectors/smtp/smtp.connector.js';
import type { ConnectorDefinition } from '../src/ports/connectors.js';
import { startFakeShopify, type FakeShopify } from './helpers/fake-shopify.js';
import { startFakeSlack, type FakeSlack } from './helpers/fake-slack.js';
import { startSmtpPeer, type SmtpPeer } from './helpers/smtp-peer.js';
import { startVendorPeer, type VendorPeer } from './helpers/vendor-peer.js';
import { failure, signal, tool } from './helpers/connectors.js';

const options = { allowPrivate: true, timeoutMs: 2_000, maxResponseBytes: 64 * 1024 };

describe('connector HTTP client', () => {
  let peer: VendorPeer;
  let http: ConnectorHttp;
  beforeAll(async () => {
    peer = await startVendorPeer(() => ({ status: 200, body: { ok: true } }));
    http = createConnectorHttp(options);
  });
  afterAll(async () => {
    await http.close();
    await peer.close();
  });
  const call = (path = '/x', extra: Partial<Parameters<ConnectorHttp['request']>[0]> = {}) =>
    http.request({
      vendor: 'Vendor',
      method: 'POST',
      url: `${peer.url}${path}`,
      json: { a: 1 },
      signal: signal(),
      ...extra,
    });

  it('sends JSON and returns the parsed answer', async () => {
    expect((await call()).body).toEqual({ ok: true });
    expect(peer.requests.at(-1)).toMatchObject({ method: 'POST', json: { a: 1 } });
    expect(peer.requests.at(-1)!.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('maps 429 with Retry-After and 5xx to retryable errors, 401/403/4xx to final ones', async () => {
    peer.fail({ kind: 'status', status: 429, headers: { 'retry-after': '7' }, body: { message: 'slow down' } });
    expect(await failure(call())).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 7000,
      message: 'Vendor: rate limit reached (HTTP 429) (retry after 7 s): slow down',
    });
    peer.fail({ kind: 'status', status: 502, body: { error: { message: 'bad gateway' } } });
    expect(await failure(call())).toMatchObject({
      status: 502,
      retryable: true,
      message: 'Vendor: server error (HTTP 502): bad gateway',
    });
    peer.fail({ kind: 'status', status: 401, body: { error: 'invalid_token' } });
    expect(await failure(call())).toMatchObject({
      status: 401,
      retryable: false,
      message: 'Vendor: credentials were refused (HTTP 401): invalid_token',
    });
    peer.fail({ kind: 'status', status: 403, body: {} });
    expect(await failure(call())).toMatchObject({ status: 403, retryable: false });
    peer.fail({ kind: 'status', status: 422, body: { errors: [{ message: 'bad field' }] } });
    expect(await failure(call())).toMatchObject({
      status: 422,
      retryable: false,
      message: 'Vendor: request refused (HTTP 422): bad field',
    });
  });

  it('reads Retry-After as seconds or as a date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  it('refuses redirects (naming where they pointed), huge answers, and non-JSON success', async () => {
    peer.fail({ kind: 'redirect', location: 'http://169.254.169.254/latest/meta-data/' });
    expect(await failure(call())).toMatchObject({
      status: 302,
      retryable: false,
      message: 'Vendor: redirected (HTTP 302) to 169.254.169.254; redirects are not followed',
    });
    peer.fail({ kind: 'huge', bytes: 1024 * 1024 });
    expect(await failure(call())).toMatchObject({
      retryable: false,
      message: `Vendor: the answer is larger than ${64 * 1024} bytes`,
    });
    expect((await call()).body).toEqual({ ok: true });
  });

  it('gives up after the time limit with a retryable error', async () => {
    const quick = createConnectorHttp({ ...options, timeoutMs: 300 });
    try {
      peer.fail({ kind: 'hang' });
      const error = await failure(
        quick.request({ vendor: 'Vendor', method: 'GET', url: `${peer.url}/slow`, signal: signal() }),
      );
      expect(error).toMatchObject({ retryable: true, message: 'Vendor: no answer within 300 ms' });
    } finally {
      await quick.close();
    }
  });

  it('refuses private addresses unless allowed: literals, local names, and names resolving to them at connect time', async () => {
    const guarded = createConnectorHttp({
      ...options,
      allowPrivate: false,
      resolve: async (host) =>
        host === 'internal.vendor.test' ? [{ address: '10.0.0.7', family: 4 }] : [{ address: '127.0.0.1', family: 4 }],
    });
    try {
      for (const [url, words] of [
        [`${peer.url}/x`, /refused to call 127\.0\.0\.1:\d+: 127\.0\.0\.1 is a private or reserved address/],
        ['http://localhost/x', /refused to call localhost/],
        ['http://[::1]/x', /refused to call \[::1\]/],
        [
          'http://internal.vendor.test/x',
          /internal\.vendor\.test resolves to a private or reserved address \(10\.0\.0\.7\)/,
        ],
        ['ftp://vendor.test/x', /only http and https/],
        ['http://user:pw@vendor.test/x', /addresses with credentials/],
      ] as const) {
        const error = await failure(guarded.request({ vendor: 'Vendor', method: 'GET', url, signal: signal() }));
        expect(error.retryable).toBe(false);
        expect(error.message).toMatch(words);
      }
    } finally {
      await guarded.close();
    }
  });
});

describe('Slack connector', () => {
  let slack: FakeSlack;
  let http: ConnectorHttp;
  let connector: ConnectorDefinition<{ bot_token: string; channel: string; base_url?: string }>;
  beforeAll(async () => {
    slack = await startFakeSlack();
    http = createConnectorHttp(options);
    connector = slackConnector(http);
  });
  afterAll(async () => {
    await http.close();
    await slack.close();
  });
  const config = (overrides = {}) => ({
    bot_token: slack.token,
    channel: '#support',
    base_url: slack.baseUrl,
    ...overrides,
  });

  it('tests the token with auth.test (bearer)', async () => {
    expect(await connector.test({ config: config(), signal: signal() })).toEqual({
      detail: 'Connected to Slack workspace Acme as switchboard',
    });
    expect(slack.requests.at(-1)).toMatchObject({ method: 'POST', path: '/api/auth.test' });
  });

  it('posts to the configured channel with chat.postMessage', async () => {
    const post = tool(connector, config(), 'post_message');
    expect(post.notification).toBe('slack_message');
    const outcome = await post.run(
      { text: 'A customer asks for a person: order #1042' },
      { config: config(), signal: signal() },
    );
    expect(outcome).toEqual({
      summary: 'Posted a message to Slack #support',
      data: { channel: 'C0SUPPORT', ts: expect.any(String) },
    });
    expect(slack.posted.at(-1)).toEqual({ channel: 'C0SUPPORT', text: 'A customer asks for a person: order #1042' });
    expect(slack.requests.at(-1)!.json).toMatchObject({ channel: '#support', unfurl_links: false });
  });

  it("maps Slack's {ok:false} answers, 429 and 5xx", async () => {
    const bad = await failure(connector.test({ config: config({ bot_token: 'xoxb-wrong' }), signal: signal() }));
    expect(bad).toMatchObject({
      status: 200,
      code: 'invalid_auth',
      retryable: false,
      message: 'Slack: invalid_auth (the bot token was refused)',
    });
    const post = tool(connector, config({ channel: '#nowhere' }), 'post_message');
    expect(
      await failure(post.run({ text: 'x' }, { config: config({ channel: '#nowhere' }), signal: signal() })),
    ).toMatchObject({ code: 'channel_not_found', retryable: false });
    slack.fail({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '30' },
      body: { ok: false, error: 'ratelimited' },
    });
    expect(await failure(connector.test({ config: config(), signal: signal() }))).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 30_000,
    });
    // chat.postMessage's message limit: HTTP 200 {ok:false, error:"rate_limited"}, retried like a 429.
    slack.fail({
      kind: 'status',
      status: 200,
      headers: { 'retry-after': '3' },
      body: { ok: false, error: 'rate_limited' },
    });
    const post2 = tool(connector, config(), 'post_message');
    expect(await failure(post2.run({ text: 'x' }, { config: config(), signal: signal() }))).toMatchObject({
      status: 200,
      code: 'rate_limited',
      retryable: true,
      retryAfterMs: 3000,
      message: 'Slack: rate limit reached (rate_limited) (retry after 3 s)',
    });
    slack.fail({ kind: 'status', status: 200, body: { ok: false, error: 'rate_limited' } });
    expect(await failure(post2.run({ text: 'x' }, { config: config(), signal: signal() }))).toMatchObject({
      retryable: true,
      retryAfterMs: undefined,
    });
    slack.fail({ kind: 'status', status: 200, body: { ok: false, error: 'service_unavailable' } });
    expect(await failure(connector.test({ config: config(), signal: signal() }))).toMatchObject({
      retryable: true,
      code: 'service_unavailable',
    });
    slack.fail({ kind: 'status', status: 503, body: { ok: false, error: 'fatal_error' } });
    expect(await failure(connector.test({ config: config(), signal: signal() }))).toMatchObject({
      status: 503,
      retryable: true,
    });
  });
});

describe('Shopify connector', () => {
  let shop: FakeShopify;
  let http: ConnectorHttp;
  let connector: ReturnType<typeof shopifyConnector>;
  beforeAll(async () => {
    shop = await startFakeShopify();
    http = createConnectorHttp(options);
    connector = shopifyConnector(http);
  });
  afterAll(async () => {
    await http.close();
    await shop.close();
  });
  const config = (overrides = {}) => ({
    shop_domain: 'acme.myshopify.com',
    access_token: shop.token,
    base_url: shop.url,
    ...overrides,
  });
  const context = (overrides = {}) => ({ config: config(overrides), signal: signal() });

  it('tests with shop { name } on the Admin GraphQL endpoint', async () => {
    expect(await connector.test(context())).toEqual({ detail: 'Connected to Shopify shop Acme Store' });
    const request = shop.requests.at(-1)!;
    expect(request.path).toBe(`/admin/api/${shopifyDefaultApiVersion()}/graphql.json`);
    expect(request.headers['x-shopify-access-token']).toBe(shop.token);
    expect(request.json).toMatchObject({ query: expect.stringContaining('shop { name }'), variables: {} });
    const supported = shopifyDefaultApiVersion();
    expect(await connector.test(context({ api_version: supported }))).toEqual({
      detail: 'Connected to Shopify shop Acme Store',
    });
    expect(shop.requests.at(-1)!.path).toBe(`/admin/api/${supported}/graphql.json`);
  });

  it('defaults to a supported API version and warns when the configured one is past support', async () => {
    // The default is the previous quarter's stable version: released, and supported six months more.
    expect(shopifyDefaultApiVersion(new Date('2026-11-26T12:00:00Z'))).toBe('2026-07');
    expect(shopifyDefaultApiVersion(new Date('2027-02-01T00:00:00Z'))).toBe('2026-10');
    expect(shopifyDefaultApiVersion(new Date('2026-03-31T23:59:59Z'))).toBe('2025-10');
    for (const day of ['2026-01-01', '2026-05-15', '2026-09-30', '2026-12-31']) {
      const on = new Date(`${day}T12:00:00Z`);
      const ends = shopifySupportEnds(shopifyDefaultApiVersion(on))!;
      expect(ends.getTime() - on.getTime()).toBeGreaterThan(180 * 24 * 3600 * 1000);
    }
    expect(shopifySupportEnds('2025-07')!.toISOString()).toBe('2026-07-01T00:00:00.000Z');

    // 2025-07 left support on 2026-07-01: the peer serves the oldest supported version, and the check says so.
    const before = shop.requests.length;
    const old = await connector.test(context({ api_version: '2025-07' }));
    expect(shop.requests.slice(before).map((request) => request.path)).toEqual(['/admin/api/2025-07/graphql.json']);
    expect(old.detail).toMatch(
      /^Connected to Shopify shop Acme Store \(warning: API version 2025-07 left Shopify's support on 2026-07-01; set api_version to a supported one \(e\.g\. \d{4}-\d{2}\) or remove it\)$/,
    );
    // Judged on the connector's clock: on a date when 2025-07 was current, no warning from the date.
    const then = shopifyConnector(http, { now: () => new Date('2026-02-01T00:00:00Z') });
    expect(shopifyVersionWarning('2025-07', '2025-07', new Date('2026-02-01T00:00:00Z'))).toBeUndefined();
    // …but the version the peer served (today) is not the one asked for.
    expect((await then.test(context({ api_version: '2025-07' }))).detail).toMatch(
      /\(warning: Shopify served API version \d{4}-\d{2}, not 2025-07; set api_version/,
    );
  });

  it('looks an order up by number or e-mail, with fulfilment and tracking', async () => {
    const lookup = tool(connector, config(), 'lookup_order');
    expect(lookup.notification).toBe('tool_usage');
    const byNumber = await lookup.run({ order_number: '1042' }, context());
    expect(byNumber.summary).toBe('Order #1042: FULFILLED, tracking UPS 1Z999AA10123456784');
    expect(byNumber.data).toEqual({
      orders: [
        {
          order: '#1042',
          created_at: '2026-01-10T09:00:00Z',
          cancelled: false,
          payment_status: 'PAID',
          fulfillment_status: 'FULFILLED',
          total: '59.90 EUR',
          shipments: ['IN_TRANSIT'],
          tracking: [
            {
              company: 'UPS',
              number: '1Z999AA10123456784',
              url: 'https://www.ups.com/track?tracknum=1Z999AA10123456784',
            },
          ],
        },
      ],
    });
    expect(shop.requests.at(-1)!.json).toMatchObject({ variables: { query: 'name:"#1042"', first: 5 } });
    const byEmail = await lookup.run({ email: 'dana@example.com' }, context());
    expect(byEmail.summary).toBe('Order #1042: FULFILLED, tracking UPS 1Z999AA10123456784 (+1 more)');
    expect((await lookup.run({ order_number: '#9999' }, context())).summary).toBe('No order found (name:"#9999")');
  });

  it('quotes search values so input cannot change the search', () => {
    expect(orderSearch({ order_number: '10"42' })).toBe('name:"10\\"42"');
    expect(orderSearch({ order_number: '1042', email: 'a@b.c' })).toBe('name:"#1042" AND email:"a@b.c"');
    expect(productSearch('mug") OR (status:draft')).toBe('mug OR status draft status:active');
  });

  it('searches active products with price and stock', async () => {
    const search = tool(connector, config(), 'search_products');
    const outcome = await search.run({ query: 'teapot', limit: 3 }, context());
    expect(outcome.summary).toBe('Found 1 product(s): Red Teapot');
    expect(outcome.data).toEqual({
      products: [
        {
          title: 'Red Teapot',
          handle: 'red-teapot',
          price: '30.0–35.0 EUR',
          in_stock: 0,
          variants: [
            { title: '1 l', sku: 'TEA-1', price: '30.00', in_stock: 0, available: false },
            { title: '2 l', sku: 'TEA-2', price: '35.00', in_stock: 0, available: false },
          ],
        },
      ],
    });
    expect(shop.requests.at(-1)!.json).toMatchObject({ variables: { query: 'teapot status:active', first: 3 } });
  });

  it('maps a bad token (401), throttling (THROTTLED with the bucket), GraphQL errors and 5xx', async () => {
    const bad = await failure(connector.test(context({ access_token: 'shpat_wrong' })));
    expect(bad).toMatchObject({ status: 401, retryable: false });
    expect(bad.message).toBe(
      'Shopify: credentials were refused (HTTP 401): [API] Invalid API key or access token (unrecognized login or wrong password)',
    );
    shop.throttle();
    const throttled = await failure(connector.test(context()));
    expect(throttled).toMatchObject({ code: 'THROTTLED', retryable: true, retryAfterMs: 500 });
    shop.fail({
      kind: 'status',
      status: 200,
      body: { errors: [{ message: 'Access denied for orders field.', extensions: { code: 'ACCESS_DENIED' } }] },
    });
    expect(await failure(connector.test(context()))).toMatchObject({ code: 'ACCESS_DENIED', retryable: false });
    shop.fail({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '2.0' },
      body: { errors: 'Exceeded 2 calls per second for api client.' },
    });
    expect(await failure(connector.test(context()))).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 2000,
    });
    shop.fail({ kind: 'status', status: 500, body: { errors: 'Internal error' } });
    expect(await failure(connector.test(context()))).toMatchObject({ status: 500, retryable: true });
  });
});

describe('SMTP connector', () => {
  let smtp: SmtpPeer;
  let silent: Server;
  beforeAll(async () => {
    smtp = await startSmtpPeer();
    // Accepts connections and never greets.
    silent = createServer(() => undefined);
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
  });
  afterAll(async () => {
    silent.close();
    await smtp.close();
  });
  const connector = smtpConnector({ allowPrivate: true, timeoutMs: 5_000 });
  const config = (overrides: Partial<SmtpConfig> = {}): SmtpConfig => ({
    host: smtp.host,
    port: smtp.port,
    secure: false,
    // The peer offers no STARTTLS: a trusted relay, declared so.
    require_tls: false,
    username: smtp.username,
    password: smtp.password,
    from: 'Acme Support <support@acme.test>',
    ...overrides,
  });

  it('verifies the server and the credentials', async () => {
    expect(await connector.test({ config: config(), signal: signal() })).toEqual({
      detail: `Connected to 127.0.0.1:${smtp.port} and signed in`,
    });
  });

  it('requires TLS unless the integration says otherwise: no password is sent to a server without STARTTLS', async () => {
    const before = smtp.authAttempts;
    const received = smtp.received.length;
    const strict = config({ require_tls: undefined });
    const refused = await failure(connector.test({ config: strict, signal: signal() }));
    expect(refused).toMatchObject({ code: 'ETLS', retryable: false });
    expect(refused.message).toBe(
      `SMTP: 127.0.0.1 does not offer STARTTLS, and TLS is required (set secure for TLS from the start, or require_tls: false for a trusted relay)`,
    );
    const send = tool(connector, strict, 'send_email');
    expect(
      await failure(send.run({ to: 'team@acme.test', subject: 'x', text: 'y' }, { config: strict, signal: signal() })),
    ).toMatchObject({ code: 'ETLS' });
    expect(smtp.authAttempts).toBe(before);
    expect(smtp.received.length).toBe(received);
  });

  it('sends an e-mail that the server receives', async () => {
    const send = tool(connector, config(), 'send_email');
    expect(send.notification).toBe('email_sent');
    const outcome = await send.run(
      { to: 'team@acme.test', subject: 'Escalation: order #1042', text: 'The customer asks for a person.' },
      { config: config(), signal: signal() },
    );
    expect(outcome).toMatchObject({
      summary: 'E-mail sent to team@acme.test',
      data: { accepted: ['team@acme.test'], rejected: [] },
    });
    const mail = smtp.received.at(-1)!;
    expect(mail).toMatchObject({ from: 'support@acme.test', to: ['team@acme.test'] });
    expect(mail.raw).toContain('Subject: Escalation: order #1042');
    expect(mail.raw).toContain('The customer asks for a person.');
  });

  it('maps refused credentials (final), an unreachable server and a silent one (retryable), and private hosts when not allowed', async () => {
    const refused = await failure(connector.test({ config: config({ password: 'wrong-password' }), signal: signal() }));
    expect(refused).toMatchObject({ code: 'EAUTH', status: 535, retryable: false });
    expect(refused.message).not.toContain('wrong-password');
    const closedPort = await failure(connector.test({ config: config({ port: 1 }), signal: signal() }));
    expect(closedPort).toMatchObject({ retryable: true });
    const quiet = smtpConnector({ allowPrivate: true, timeoutMs: 300 });
    const port = (silent.address() as AddressInfo).port;
    expect(await failure(quiet.test({ config: config({ port }), signal: signal() }))).toMatchObject({
      retryable: true,
    });
    const guarded = smtpConnector({ allowPrivate: false, timeoutMs: 5_000 });
    const blocked = await failure(guarded.test({ config: config(), signal: signal() }));
    expect(blocked).toMatchObject({ retryable: false, code: 'EBLOCKED' });
    expect(blocked.message).toMatch(
      /refused to connect to 127\.0\.0\.1: 127\.0\.0\.1 is a private or reserved address/,
    );
  });
});
