/**
 * The Zendesk, HubSpot and Notion connectors against peers that answer like their vendors:
 * the live check (good token, bad token, 429 with Retry-After, 5xx), each tool's success and the
 * vendor's refusals, and `POST /integrations/{id}/test` for each kind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubspotConnector, type HubspotConfig } from '../src/adapters/connectors/hubspot/hubspot.connector.js';
import { createConnectorHttp, type ConnectorHttp } from '../src/adapters/connectors/http.js';
import { notionConnector, splitText, type NotionConfig } from '../src/adapters/connectors/notion/notion.connector.js';
import { zendeskConnector, type ZendeskConfig } from '../src/adapters/connectors/zendesk/zendesk.connector.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { startFakeHubspot, type FakeHubspot } from './helpers/fake-hubspot.js';
import { startFakeNotion, type FakeNotion } from './helpers/fake-notion.js';
import { startFakeZendesk, type FakeZendesk } from './helpers/fake-zendesk.js';
import { integrationsApi } from './helpers/integrations.js';
import { failure, signal, tool } from './helpers/connectors.js';

let http: ConnectorHttp;
let zendesk: FakeZendesk;
let hubspot: FakeHubspot;
let notion: FakeNotion;
beforeAll(async () => {
  http = createConnectorHttp({ allowPrivate: true, timeoutMs: 5_000, maxResponseBytes: 256 * 1024 });
  [zendesk, hubspot, notion] = await Promise.all([startFakeZendesk(), startFakeHubspot(), startFakeNotion()]);
});
afterAll(async () => {
  await http.close();
  await Promise.all([zendesk.close(), hubspot.close(), notion.close()]);
});

describe('Zendesk connector', () => {
  const config = (overrides: Partial<ZendeskConfig> = {}): ZendeskConfig => ({
    subdomain: 'acme',
    email: zendesk.email,
    api_token: zendesk.token,
    base_url: zendesk.baseUrl,
    ...overrides,
  });
  const run = (name: string, input: Record<string, unknown>, c = config()) =>
    tool(zendeskConnector(http), c, name).run(input, { config: c, signal: signal() });

  it('tests with users/me.json over basic auth {email}/token:{api_token}', async () => {
    expect(await zendeskConnector(http).test({ config: config(), signal: signal() })).toEqual({
      detail: 'Connected to Zendesk acme as Switchboard Agent (agent)',
    });
    const sent = zendesk.requests.at(-1)!;
    expect(sent.path).toBe('/api/v2/users/me.json');
    expect(Buffer.from(String(sent.headers.authorization).replace('Basic ', ''), 'base64').toString()).toBe(
      `${zendesk.email}/token:${zendesk.token}`,
    );
  });

  it('fails the test on a bad token (401), a rate limit (429, Retry-After) and an outage', async () => {
    const test = (c = config()) => zendeskConnector(http).test({ config: c, signal: signal() });
    expect(await failure(test(config({ api_token: 'not-the-token-000000' })))).toMatchObject({
      status: 401,
      retryable: false,
      message: "Zendesk: credentials were refused (HTTP 401): Couldn't authenticate you",
    });
    zendesk.fail({ kind: 'status', status: 429, headers: { 'retry-after': '12' }, body: 'Too Many Requests' });
    expect(await failure(test())).toMatchObject({ status: 429, retryable: true, retryAfterMs: 12_000 });
    zendesk.fail({ kind: 'status', status: 503, body: { error: 'ServiceUnavailable', description: 'Maintenance' } });
    expect(await failure(test())).toMatchObject({
      status: 503,
      retryable: true,
      message: 'Zendesk: server error (HTTP 503): ServiceUnavailable: Maintenance',
    });
  });

  it('opens a ticket with the transcript, requester and priority, then reads its status', async () => {
    const opened = await run('create_ticket', {
      subject: 'Customer asks for a person',
      body: 'Customer: where is my order?\nAssistant: …',
      requester_email: 'ana@example.com',
      requester_name: 'Ana Lima',
      priority: 'high',
    });
    const ticket = zendesk.tickets.at(-1)!;
    expect(opened).toEqual({
      summary: `Opened ticket #${ticket.id}`,
      data: { id: ticket.id, status: 'new', priority: 'high' },
    });
    expect(zendesk.requests.at(-1)!.json).toEqual({
      ticket: {
        subject: 'Customer asks for a person',
        comment: { body: 'Customer: where is my order?\nAssistant: …', public: false },
        requester: { email: 'ana@example.com', name: 'Ana Lima' },
        priority: 'high',
      },
    });
    // The reason and transcript are an internal note: Zendesk does not e-mail them to the requester.
    expect(ticket.public).toBe(false);
    expect(await run('get_ticket_status', { ticket_id: ticket.id })).toMatchObject({
      summary: `Ticket #${ticket.id}: new`,
      data: { id: ticket.id, found: true, status: 'new', subject: 'Customer asks for a person' },
    });
  });

  it('answers a missing ticket as not found, and maps refusals', async () => {
    expect(await run('get_ticket_status', { ticket_id: 999999 })).toEqual({
      summary: 'Ticket #999999 not found',
      data: { id: 999999, found: false },
    });
    expect(
      (await failure(run('get_ticket_status', { ticket_id: 1 }, config({ api_token: 'wrong-token-0000000' })))).status,
    ).toBe(401);
    zendesk.fail({
      kind: 'status',
      status: 422,
      body: {
        error: 'RecordInvalid',
        description: 'Record validation errors',
        details: { requester: [{ description: 'Requester: Email is invalid' }] },
      },
    });
    expect(await failure(run('create_ticket', { subject: 'x', body: 'y' }))).toMatchObject({
      status: 422,
      retryable: false,
      message:
        'Zendesk: request refused (HTTP 422): RecordInvalid: Record validation errors: requester Requester: Email is invalid',
    });
  });
});

describe('HubSpot connector', () => {
  const config = (overrides: Partial<HubspotConfig> = {}): HubspotConfig => ({
    access_token: hubspot.token,
    portal_id: '1234567',
    base_url: hubspot.baseUrl,
    ...overrides,
  });
  const run = (name: string, input: Record<string, unknown>, c = config()) =>
    tool(hubspotConnector(http), c, name).run(input, { config: c, signal: signal() });

  it('tests with one contact read (bearer), and fails on a bad token, 429 and 5xx', async () => {
    const test = (c = config()) => hubspotConnector(http).test({ config: c, signal: signal() });
    expect(await test()).toEqual({ detail: 'Connected to HubSpot account 1234567 (contacts readable)' });
    expect(hubspot.requests.at(-1)).toMatchObject({
      method: 'GET',
      path: '/crm/v3/objects/contacts?limit=1&archived=false',
    });
    const refused = await failure(test(config({ access_token: 'pat-wrong' })));
    expect(refused).toMatchObject({ status: 401, retryable: false });
    expect(refused.message).toMatch(
      /^HubSpot: credentials were refused \(HTTP 401\): Authentication credentials not found.*\(INVALID_AUTHENTICATION\)$/,
    );
    hubspot.fail({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '1', 'x-hubspot-ratelimit-interval-milliseconds': '10000' },
      body: {
        status: 'error',
        message: 'You have reached your secondly limit.',
        errorType: 'RATE_LIMIT',
        correlationId: 'c1',
        policyName: 'SECONDLY',
      },
    });
    expect(await failure(test())).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 1000,
      message: 'HubSpot: rate limit reached (HTTP 429) (retry after 1 s): You have reached your secondly limit.',
    });
    hubspot.fail({
      kind: 'status',
      status: 502,
      body: { status: 'error', message: 'Bad gateway', category: 'INTERNAL_ERROR' },
    });
    expect(await failure(test())).toMatchObject({ status: 502, retryable: true });
  });

  it('finds a contact by e-mail with an EQ filter, or says there is none', async () => {
    expect(await run('find_contact', { email: 'ana@example.com' })).toEqual({
      summary: 'Found contact Ana Lima (501)',
      data: {
        found: true,
        id: '501',
        email: 'ana@example.com',
        firstname: 'Ana',
        lastname: 'Lima',
        phone: '+351 555 0101',
        company: 'Lima Lda',
      },
    });
    expect(hubspot.requests.at(-1)!.json).toEqual({
      filterGroups: [{ filters: [{ propertyName: 'email', operator: 'EQ', value: 'ana@example.com' }] }],
      properties: ['email', 'firstname', 'lastname', 'phone', 'company'],
      limit: 1,
    });
    expect(await run('find_contact', { email: 'nobody@example.com' })).toEqual({
      summary: 'No contact for nobody@example.com',
      data: { found: false, email: 'nobody@example.com' },
    });
  });

  it('logs a note associated to the contact (type 202), HTML-escaped, and maps a refused association', async () => {
    expect(await run('log_note', { contact_id: '501', text: 'Asked about <refunds> & returns\nResolved' })).toEqual({
      summary: 'Logged note 9001 on contact 501',
      data: { id: '9001', contact_id: '501' },
    });
    expect(hubspot.notes.at(-1)).toMatchObject({
      contactId: '501',
      body: 'Asked about &lt;refunds&gt; &amp; returns<br>Resolved',
    });
    expect(Number.isNaN(Date.parse(hubspot.notes.at(-1)!.timestamp))).toBe(false);
    // 60,000 characters (the tool's bound) of '&' are 300,000 of HTML: cut to HubSpot's 65,536.
    expect(await run('log_note', { contact_id: '501', text: `${'&'.repeat(59_990)}\r\nend` })).toMatchObject({
      summary: expect.stringMatching(/^Logged note \d+ on contact 501$/),
    });
    const long = hubspot.notes.at(-1)!.body;
    expect(long.length).toBeLessThanOrEqual(65_536);
    expect(long).toMatch(/^(&amp;)+<br>… \(cut: the note was longer than HubSpot allows\)$/);
    expect(await run('log_note', { contact_id: '501', text: 'a\r\nb' })).toBeTruthy();
    expect(hubspot.notes.at(-1)!.body).toBe('a<br>b');
    expect(await failure(run('log_note', { contact_id: '777', text: 'x' }))).toMatchObject({
      status: 400,
      retryable: false,
      message:
        'HubSpot: request refused (HTTP 400): One or more associations are invalid: contact 777 does not exist (VALIDATION_ERROR)',
    });
  });
});

describe('Notion connector', () => {
  const config = (overrides: Partial<NotionConfig> = {}): NotionConfig => ({
    access_token: notion.token,
    database_id: notion.databaseId.replace(/-/g, ''),
    base_url: notion.baseUrl,
    ...overrides,
  });
  const run = (name: string, input: Record<string, unknown>, c = config()) =>
    tool(notionConnector(http), c, name).run(input, { config: c, signal: signal() });

  it('tests with users/me (bearer and Notion-Version), and fails on a bad token, 429 and 5xx', async () => {
    const test = (c = config()) => notionConnector(http).test({ config: c, signal: signal() });
    expect(await test()).toEqual({ detail: 'Connected to Notion workspace Acme as Switchboard' });
    expect(notion.requests.at(-1)!.headers['notion-version']).toBe('2022-06-28');
    expect(await failure(test(config({ access_token: 'ntn_wrong' })))).toMatchObject({
      status: 401,
      retryable: false,
      message: 'Notion: credentials were refused (HTTP 401): unauthorized: API token is invalid.',
    });
    notion.fail({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '3' },
      body: { object: 'error', status: 429, code: 'rate_limited', message: 'You have been rate limited.' },
    });
    expect(await failure(test())).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 3000,
      message: 'Notion: rate limit reached (HTTP 429) (retry after 3 s): rate_limited: You have been rate limited.',
    });
    notion.fail({
      kind: 'status',
      status: 503,
      body: { object: 'error', status: 503, code: 'service_unavailable', message: 'Notion is unavailable.' },
    });
    expect(await failure(test())).toMatchObject({ status: 503, retryable: true });
  });

  it('searches pages, following next_cursor', async () => {
    notion.pages.push(...Array.from({ length: 30 }, (_, i) => `Shipping note ${i + 1}`));
    try {
      const found = await run('search_pages', { query: 'shipping' });
      const pages = (found.data as { pages: { title: string }[] }).pages;
      expect(pages).toHaveLength(25);
      expect(pages[0]).toEqual({ id: 'page-1', title: 'Shipping times', url: 'https://www.notion.so/page-1' });
      expect(found.summary).toBe(
        'Found 25 page(s): Shipping times, Shipping note 1, Shipping note 2, Shipping note 3, Shipping note 4 and 20 more',
      );
      const searches = notion.requests.filter((request) => request.path === '/v1/search').slice(-1);
      expect(searches[0]!.json).toMatchObject({ query: 'shipping', filter: { property: 'object', value: 'page' } });
      expect(await run('search_pages', { query: 'nothing like it' })).toEqual({
        summary: 'No pages found for "nothing like it"',
        data: { pages: [] },
      });
    } finally {
      notion.pages.splice(3);
    }
  });

  it("adds a note under the database's own title property, text in ≤ 2000-character pieces", async () => {
    const text = `${'a'.repeat(2000)}${'b'.repeat(2000)}tail`;
    const added = await run('add_note', { title: 'Call with Ana', text });
    expect(added.summary).toBe('Added note "Call with Ana" to Notion');
    expect(notion.created.at(-1)).toEqual({
      title: 'Call with Ana',
      texts: ['a'.repeat(2000), 'b'.repeat(2000), 'tail'],
    });
    const page = notion.requests.at(-1)!.json as Record<string, unknown>;
    expect(page.parent).toEqual({ database_id: config().database_id });
    expect(Object.keys(page.properties as object)).toEqual(['Subject']);
    expect(splitText('😀'.repeat(1500), 2000).every((piece) => !/[\ud800-\udbff]$/.test(piece))).toBe(true);
  });

  it('maps a database not shared with the integration (404) and a validation error (400)', async () => {
    const missing = await failure(run('add_note', { title: 't', text: 'x' }, config({ database_id: '0'.repeat(32) })));
    expect(missing).toMatchObject({ status: 404, retryable: false });
    expect(missing.message).toMatch(/^Notion: request refused \(HTTP 404\): object_not_found: Could not find database/);
    notion.fail({
      kind: 'status',
      status: 400,
      body: { object: 'error', status: 400, code: 'validation_error', message: 'body.query should be a string' },
    });
    expect(await failure(run('search_pages', { query: 'x' }))).toMatchObject({
      status: 400,
      message: 'Notion: request refused (HTTP 400): validation_error: body.query should be a string',
    });
  });
});

describe('POST /integrations/{id}/test for each kind', () => {
  let t: TestApp;
  let tenant: TestTenant;
  beforeAll(async () => {
    t = await createTestApp({ ALLOW_PRIVATE_URLS: 'true' });
    tenant = await createTenant(t.container);
  });
  afterAll(async () => {
    await t.close();
  });

  async function check(body: Record<string, unknown>) {
    const api = integrationsApi(t.app, tenant);
    const created = await api.create(body);
    expect(created.statusCode).toBe(201);
    const res = await api.test(created.json().id);
    expect(res.statusCode).toBe(200);
    return res.json() as { ok: boolean; detail: string; latency_ms: number };
  }

  it('is ok with good credentials and fails, without echoing them, on bad ones', async () => {
    const zendeskConfig = {
      subdomain: 'acme',
      email: zendesk.email,
      api_token: zendesk.token,
      base_url: zendesk.baseUrl,
    };
    expect(await check({ name: 'Desk', type: 'zendesk', config: zendeskConfig })).toMatchObject({
      ok: true,
      detail: 'Connected to Zendesk acme as Switchboard Agent (agent)',
    });
    const badZendesk = await check({
      name: 'Desk',
      type: 'zendesk',
      config: { ...zendeskConfig, api_token: 'zendesk-wrong-token-000000000' },
    });
    expect(badZendesk).toMatchObject({
      ok: false,
      detail: "Zendesk: credentials were refused (HTTP 401): Couldn't authenticate you",
    });

    const hubspotConfig = { access_token: hubspot.token, base_url: hubspot.baseUrl };
    expect(await check({ name: 'CRM', type: 'hubspot', config: hubspotConfig })).toMatchObject({
      ok: true,
      detail: 'Connected to HubSpot (contacts readable)',
    });
    const badHubspot = await check({
      name: 'CRM',
      type: 'hubspot',
      config: { ...hubspotConfig, access_token: 'pat-na1-wrong-000000' },
    });
    expect(badHubspot.ok).toBe(false);
    expect(badHubspot.detail).toMatch(/INVALID_AUTHENTICATION/);

    const notionConfig = { access_token: notion.token, database_id: notion.databaseId, base_url: notion.baseUrl };
    expect(await check({ name: 'Notes', type: 'notion', config: notionConfig })).toMatchObject({
      ok: true,
      detail: 'Connected to Notion workspace Acme as Switchboard',
    });
    notion.fail({
      kind: 'status',
      status: 429,
      headers: { 'retry-after': '5' },
      body: { object: 'error', status: 429, code: 'rate_limited', message: 'You have been rate limited.' },
    });
    expect(await check({ name: 'Notes', type: 'notion', config: notionConfig })).toMatchObject({
      ok: false,
      detail: 'Notion: rate limit reached (HTTP 429) (retry after 5 s): rate_limited: You have been rate limited.',
    });
    for (const result of [badZendesk, badHubspot]) {
      expect(result.detail).not.toContain(zendesk.token);
      expect(result.detail).not.toContain(hubspot.token);
    }
  });
});
