/**
 * A vendor that quotes back the credentials it was sent, in every encoding (the Authorization
 * header, what it decodes to, the password's base64, base64url, URL and form encodings, a
 * `Bearer` and a `Basic` credential, a URL with `user:password@`, a query `access_token=` and a
 * base64 blob of the whole header), on the Zendesk protocol and on a custom_api with basic auth.
 * None of it reaches the live check's answer, the deployment logs, the chat stream's tool events,
 * the model, the team notifications, the database rows or the logs.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatSetup, type ChatSetup } from './helpers/chat.js';
import { REGIONS, control, createDeployment, logsOf, waitForRollout } from './helpers/deployments.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { createLoggedTestApp, integrationsApi, type LoggedTestApp } from './helpers/integrations.js';
import { startVendorPeer, type PeerAnswer, type PeerRequest, type VendorPeer } from './helpers/vendor-peer.js';

const ZENDESK_EMAIL = 'agent@acme.test';
const ZENDESK_TOKEN = 'zdTok/en+42=&x?é-peer-secret-0001';
const CUSTOM_USER = 'svc-orders';
const CUSTOM_PASSWORD = 'Pa ss/wo+rd=&?é-peer-secret-0002';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const lowerHex = (text: string) => text.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase());

/** Every form a secret must not appear in. */
function forbidden(user: string, password: string): string[] {
  const component = encodeURIComponent(password);
  const form = new URLSearchParams({ p: password }).toString().slice(2);
  return [
    password,
    b64(password),
    Buffer.from(password).toString('base64url'),
    b64(`${user}:${password}`),
    component,
    lowerHex(component),
    form,
    lowerHex(form),
    JSON.stringify(password).slice(1, -1),
  ];
}
const FORBIDDEN = [
  ...forbidden(`${ZENDESK_EMAIL}/token`, ZENDESK_TOKEN),
  ...forbidden(CUSTOM_USER, CUSTOM_PASSWORD),
  b64(CUSTOM_USER),
];

/** What the peer quotes back of the credentials it received. */
function quotes(request: PeerRequest): Record<string, string> {
  const header = String(request.headers.authorization ?? '');
  const token = header.replace(/^Basic /, '');
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.lastIndexOf(':');
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  return {
    header,
    lower_scheme: `basic ${token}`,
    decoded,
    password,
    password_b64: b64(password),
    password_b64url: Buffer.from(password).toString('base64url'),
    user_b64: b64(user),
    password_url: encodeURIComponent(password),
    password_url_lower: lowerHex(encodeURIComponent(password)),
    password_form: new URLSearchParams({ p: password }).toString().slice(2),
    password_form_lower: lowerHex(new URLSearchParams({ p: password }).toString().slice(2)),
    bearer: `Bearer ${password}`,
    url: `https://${encodeURIComponent(user)}:${encodeURIComponent(password)}@api.example.com/v1`,
    query: `/callback?access_token=${encodeURIComponent(password)}&page=2`,
    blob: b64(`{"authorization":"${header}","password":"${password}"}`),
  };
}

function said(request: PeerRequest): string {
  return Object.entries(quotes(request))
    .map(([name, value]) => `${name}=${value}`)
    .join(' | ');
}

let t: LoggedTestApp;
let openai: FakeOpenAi;
let peer: VendorPeer;
/** Whether the peer accepts the credentials (it quotes them either way). */
let accept = true;

function answer(request: PeerRequest): PeerAnswer {
  const path = request.path.split('?')[0]!;
  if (!accept) {
    return path.startsWith('/api/v2/')
      ? { status: 401, body: { error: "Couldn't authenticate you", description: said(request) } }
      : { status: 401, body: { error: 'unauthorized', message: said(request) } };
  }
  if (path === '/api/v2/users/me.json') {
    return { status: 200, body: { user: { id: 7, name: `Agent ${quotes(request).decoded}`, role: 'agent' } } };
  }
  if (path === '/api/v2/tickets.json' && request.method === 'POST') {
    return { status: 201, body: { ticket: { id: 101, status: 'new', priority: null, subject: said(request) } } };
  }
  if (path === '/api/v2/tickets/101.json') {
    return { status: 200, body: { ticket: { id: 101, status: 'open', subject: said(request) } } };
  }
  if (path === '/api/v1/echo') return { status: 200, body: { received: quotes(request) } };
  if (path === '/api/v1/fail') return { status: 422, body: { message: said(request), details: quotes(request) } };
  if (path === '/api/v1' || path === '/api/v1/') return { status: 200, body: { name: 'Orders API' } };
  return { status: 404, body: { error: 'not_found', message: said(request) } };
}

beforeAll(async () => {
  [openai, peer] = await Promise.all([startFakeOpenAi(), startVendorPeer((request) => answer(request))]);
  t = await createLoggedTestApp({
    LLM_PROVIDERS: fakeProviders(openai),
    ALLOW_PRIVATE_URLS: 'true',
    RUN_WORKERS: 'true',
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([openai?.close(), peer?.close()]);
});

async function integrations(setup: ChatSetup) {
  const api = integrationsApi(t.app, setup.tenant);
  const zendesk = await api.create({
    name: 'Help desk',
    type: 'zendesk',
    agent_id: setup.agentId,
    config: { subdomain: 'acme', email: ZENDESK_EMAIL, api_token: ZENDESK_TOKEN, base_url: peer.url },
  });
  const custom = await api.create({
    name: 'Orders',
    type: 'custom_api',
    agent_id: setup.agentId,
    config: {
      base_url: `${peer.url}/api/v1`,
      auth_type: 'basic',
      auth_token: `${CUSTOM_USER}:${CUSTOM_PASSWORD}`,
      operations: [
        { name: 'echo', description: 'Echo', method: 'GET', path: '/echo' },
        { name: 'fail', description: 'Fail', method: 'POST', path: '/fail' },
      ],
    },
  });
  expect(zendesk.statusCode, zendesk.body).toBe(201);
  expect(custom.statusCode, custom.body).toBe(201);
  return { api, zendesk: zendesk.json<{ id: string }>().id, custom: custom.json<{ id: string }>().id };
}

function expectClean(what: string, text: string) {
  for (const form of FORBIDDEN) expect(text.includes(form), `${what} holds ${form}`).toBe(false);
}

/** Every row of the company's records, as JSON text. */
async function rowsOf(companyId: string): Promise<string> {
  const tables = [
    'integrations',
    'conversations',
    'conversation_messages',
    'notifications',
    'support_queries',
    'deployments',
  ];
  const texts: string[] = [];
  for (const table of tables) {
    const result = await sql<{
      row: string;
    }>`select row_to_json(x)::text as row from ${sql.table(table)} x where company_id = ${companyId}`.execute(
      t.container.db,
    );
    texts.push(...result.rows.map((row) => row.row));
  }
  const logs = await sql<{ row: string }>`select row_to_json(l)::text as row from deployment_logs l
    join deployments d on d.id = l.deployment_id where d.company_id = ${companyId}`.execute(t.container.db);
  texts.push(...logs.rows.map((row) => row.row));
  return texts.join('\n');
}

describe('a vendor quoting the credentials back', () => {
  it('the peer really quotes them (the test would see a leak)', async () => {
    const request = { headers: { authorization: `Basic ${b64(`${CUSTOM_USER}:${CUSTOM_PASSWORD}`)}` } };
    const text = JSON.stringify(quotes(request as unknown as PeerRequest));
    for (const form of forbidden(CUSTOM_USER, CUSTOM_PASSWORD)) expect(text).toContain(form);
  });

  it('live checks: neither the answer, the deployment logs, the rows nor the logs hold them', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    const { api, zendesk, custom } = await integrations(setup);
    accept = true;
    const okZendesk = await api.test(zendesk);
    expect(okZendesk.json()).toMatchObject({ ok: true, detail: expect.stringContaining('Connected to Zendesk acme') });
    accept = false;
    const failed = [await api.test(zendesk), await api.test(custom)];
    expect(failed[0]!.json()).toMatchObject({
      ok: false,
      detail: expect.stringContaining("Zendesk: credentials were refused (HTTP 401): Couldn't authenticate you"),
    });
    expect(failed[1]!.json()).toMatchObject({ ok: false, detail: expect.stringContaining('Custom API') });
    // Something of the quote is left, masked: the peer's words are shown, its credentials are not.
    expect(failed[0]!.json<{ detail: string }>().detail).toContain('password_b64=••••');

    const deployment = await createDeployment(t.app, setup.tenant, setup.agentId, { region_id: REGIONS.euWest });
    expect((await control(t.app, setup.tenant, deployment.id, 'start')).statusCode).toBe(200);
    const done = await waitForRollout(t.app, setup.tenant, deployment.id);
    expect(done.status).toBe('failed');
    const logs = await logsOf(t.app, setup.tenant, deployment.id);
    expect(logs.map((log) => log.message).join('\n')).toContain('failed its live check');

    expectClean('the live check answers', [okZendesk, ...failed].map((res) => res.body).join('\n'));
    expectClean('the deployment', JSON.stringify({ done, logs }));
    expectClean('the rows', await rowsOf(setup.tenant.companyId));
    expectClean('the logs', t.logs.join('\n'));
  });

  it('tool calls: the stream, the model, the notifications, the rows and the logs hold none of them', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    await integrations(setup);
    accept = true;
    const before = openai.requests.length;
    openai.reply = (request) =>
      request.messages.some((message) => message.role === 'tool')
        ? { tokens: ['Done.'] }
        : {
            toolCalls: [
              { name: 'zendesk_create_ticket', arguments: { subject: 'Help', body: 'The customer needs help.' } },
              { name: 'zendesk_get_ticket_status', arguments: { ticket_id: 101 } },
              { name: 'custom_api_echo', arguments: {} },
              { name: 'custom_api_fail', arguments: {} },
            ],
          };
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/stream',
      headers: { ...setup.token, accept: 'text/event-stream' },
      payload: { agent_key: setup.agentKey, query: 'Please open a ticket' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('"tool":"custom_api_fail","status":"failed"');
    expect(res.body).toContain('"tool":"custom_api_echo","status":"ok"');
    const seen = JSON.stringify(openai.requests.slice(before));
    // The model got the data (masked where it quoted a credential).
    expect(seen).toContain('password_b64');
    expect(seen).toContain('Custom API: request refused (HTTP 422): header=••••');

    const notifications = await t.container.db
      .selectFrom('notifications')
      .select(['message', 'metadata'])
      .where('company_id', '=', setup.tenant.companyId)
      .execute();
    expect(notifications.length).toBeGreaterThanOrEqual(4);

    expectClean('the stream', res.body);
    expectClean('what the model saw', seen);
    expectClean('the rows', await rowsOf(setup.tenant.companyId));
    expectClean('the logs', t.logs.join('\n'));
  });
});
