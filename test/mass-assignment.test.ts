/**
 * Mass assignment: no write route takes an id, a company, a timestamp, an author or a key it does
 * not know. Every JSON body (and the chat form) refuses unknown properties with a 400 in the
 * family's error shape naming the property, and nothing is written; the repositories name their
 * columns, so even a body that slipped past validation could not move a row.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateAgent } from '../src/modules/agents/agents.repo.js';
import { updateCompany } from '../src/modules/companies/companies.repo.js';
import { updateDeployment } from '../src/modules/deployments/deployments.repo.js';
import { updateCollection } from '../src/modules/knowledge/knowledge.repo.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createDeployment } from './helpers/deployments.js';
import { createTenant, uniqueEmail, type TestTenant } from './helpers/factories.js';
import { uploadArticle } from './knowledge/helpers.js';

let t: TestApp;
let tenant: TestTenant;
let other: TestTenant;
/** The tenant's records every route is tried on (filled once in beforeAll). */
const ids = {} as Record<
  | 'user'
  | 'agent'
  | 'agentKey'
  | 'deployment'
  | 'collection'
  | 'document'
  | 'integration'
  | 'conversation'
  | 'notification'
  | 'voiceAgent'
  | 'voiceId'
  | 'workflow'
  | 'widgetKey'
  | 'webhook',
  string
>;
let chatHeaders: { 'x-api-token': string };
let visitorHeaders: { authorization: string };

beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
  tenant = await createTenant(t.container);
  other = await createTenant(t.container);
  const post = async (url: string, payload: unknown, headers: Record<string, string> = tenant.headers) => {
    const res = await t.app.inject({ method: 'POST', url, headers, payload: payload as object });
    if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  ids.user = tenant.userId;
  ids.agent = (await post('/api/public/agents', { title: 'Desk' })).id;
  ids.deployment = (await createDeployment(t.app, tenant, ids.agent)).id;
  ids.agentKey = `agent:${ids.agent}:web:us-east`;
  ids.collection = (await post('/api/public/collections', { name: 'FAQ', company_id: tenant.companyId })).id;
  ids.document = (
    await uploadArticle(t.app, tenant.headers, { document_title: 'Doc', content: 'Some text.' })
  ).document_id;
  ids.integration = (
    await t.container.db
      .insertInto('integrations')
      .values({ company_id: tenant.companyId, name: 'Hub', type: 'custom_api' })
      .returning('id')
      .executeTakeFirstOrThrow()
  ).id;
  chatHeaders = (await tenant.chatToken()).headers;
  ids.widgetKey = (
    await t.app.inject({
      method: 'GET',
      url: `/api/public/deployments/${ids.deployment}/widget`,
      headers: tenant.headers,
    })
  ).json<{ key: string }>().key;
  visitorHeaders = {
    authorization: `Bearer ${(await post(`/widget/v1/${ids.widgetKey}/sessions`, {}, {})).visitor_token}`,
  };
  ids.conversation = (await post('/api/v1/chat/conversations', { agent_id: ids.agent }, chatHeaders)).id;
  ids.notification = (
    await t.container.notifications.notify(t.container.db, {
      companyId: tenant.companyId,
      notificationType: 'system',
      category: 'system',
      title: 'Hello',
      message: 'A notification to set a status on',
    })
  ).id;
  ids.webhook = (
    await post('/api/public/webhooks', { url: 'https://hooks.example.com/in', events: ['document.ingested'] })
  ).id;
  ids.voiceId = '21m00Tcm4TlvDq8ikWAM';
  ids.voiceAgent = (await post('/api/public/voice-agents', { name: 'Desk', voice_id: '21m00Tcm4TlvDq8ikWAM' })).id;
  ids.workflow = (
    await post('/api/public/workflows', {
      name: 'Desk',
      steps: [{ name: 'all', agent_id: ids.agent }],
      default_agent_id: ids.agent,
    })
  ).id;
});
afterAll(async () => t.close());

type Family = 'detail-status' | 'detail' | 'chat' | 'insights' | 'openai' | 'elevenlabs';
const SHAPES: Record<Family, string[]> = {
  // ElevenLabs' `{detail: {status, message}}` (/elevenlabs): the message is detail.message.
  elevenlabs: ['detail'],
  // OpenAI's `{error: {message, type, param, code}}` (/v1): the message is error.message.
  openai: ['error'],
  'detail-status': ['detail', 'status_code'],
  detail: ['detail'],
  chat: ['error', 'message', 'statusCode'],
  insights: ['error', 'message', 'path', 'statusCode', 'timestamp'],
};

interface WriteRoute {
  method: 'POST' | 'PUT' | 'PATCH';
  /** `:agent`, `:collection` … stand for the ids made in beforeAll. */
  path: string;
  body: () => Record<string, unknown>;
  family: Family;
  chat?: boolean;
  /** A widget route, called with a visitor token. */
  visitor?: boolean;
  /** Fields the route legitimately takes among the ones probed (checked elsewhere). */
  takes?: string[];
}

const ROUTES: WriteRoute[] = [
  { method: 'POST', path: '/api/public/companies', body: () => ({ name: 'New' }), family: 'detail-status' },
  { method: 'PUT', path: '/api/public/companies', body: () => ({ name: 'Renamed' }), family: 'detail-status' },
  {
    method: 'POST',
    path: '/api/public/companies/members',
    body: () => ({ user_id: other.userId }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/companies/admins',
    body: () => ({ user_id: other.userId }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/companies/invitations',
    body: () => ({ email: uniqueEmail('invited') }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/companies/invitations/accept',
    body: () => ({ token: 'inv_not-a-real-token' }),
    family: 'detail-status',
  },
  { method: 'POST', path: '/api/public/users', body: () => ({ email: uniqueEmail('new') }), family: 'detail-status' },
  { method: 'POST', path: '/api/public/api-keys', body: () => ({ name: 'ci' }), family: 'detail-status' },
  { method: 'POST', path: '/api/public/chat-tokens', body: () => ({ name: 'web' }), family: 'detail-status' },
  { method: 'POST', path: '/api/public/agents', body: () => ({ title: 'Another' }), family: 'detail-status' },
  {
    method: 'PATCH',
    path: '/api/public/agents/:agent',
    body: () => ({ title: 'Patched' }),
    family: 'detail-status',
  },
  {
    method: 'PUT',
    path: '/api/public/agents/:agent',
    body: () => ({ title: 'Put' }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/workflows',
    body: () => ({ name: 'Another', steps: [{ name: 'all', agent_id: ids.agent }], default_agent_id: ids.agent }),
    family: 'detail-status',
  },
  {
    method: 'PUT',
    path: '/api/public/workflows/:workflow',
    body: () => ({ name: 'Put' }),
    family: 'detail-status',
  },
  {
    method: 'PATCH',
    path: '/api/public/workflows/:workflow',
    body: () => ({ name: 'Patched' }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/deployments',
    body: () => ({
      deployable_type: 'agent',
      deployable_id: ids.agent,
      channel: 'slack',
      region_id: '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001',
    }),
    family: 'detail-status',
  },
  {
    method: 'PUT',
    path: '/api/public/deployments/:deployment',
    body: () => ({ channel: 'teams' }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/collections',
    body: () => ({ name: 'Other', company_id: tenant.companyId }),
    family: 'detail',
    takes: ['company_id'],
  },
  {
    method: 'PUT',
    path: '/api/public/collections/:collection',
    body: () => ({ name: 'Renamed' }),
    family: 'detail',
  },
  { method: 'POST', path: '/api/public/documents/list', body: () => ({}), family: 'detail' },
  {
    method: 'POST',
    path: '/api/public/documents/search',
    body: () => ({ query: 'text', search_method: {}, categories: [] }),
    family: 'detail',
  },
  {
    method: 'POST',
    path: '/api/public/documents/upload/article',
    body: () => ({ content: 'More text.', document_title: 'Article' }),
    family: 'detail',
  },
  {
    method: 'POST',
    path: '/api/public/documents/upload/website',
    body: () => ({ url: 'https://example.com/', document_title: 'Site' }),
    family: 'detail',
  },
  {
    method: 'POST',
    path: '/api/public/documents/upload/crawl',
    body: () => ({ url: 'https://example.com/', collection_id: ids.collection }),
    family: 'detail',
  },
  {
    method: 'PUT',
    path: '/api/public/documents/:document',
    body: () => ({ document_title: 'Renamed' }),
    family: 'detail',
  },
  {
    method: 'POST',
    path: '/api/public/documents/check-similarity',
    body: () => ({ document: 'Some text.', customer_id: tenant.companyId }),
    family: 'detail',
  },
  {
    method: 'POST',
    path: '/api/public/integrations',
    body: () => ({ name: 'Shop', type: 'custom_api' }),
    family: 'detail',
  },
  {
    method: 'PUT',
    path: '/api/public/integrations/:integration',
    body: () => ({ name: 'Renamed' }),
    family: 'detail',
  },
  {
    method: 'POST',
    path: '/api/public/webhooks',
    body: () => ({ url: 'https://hooks.example.com/new', events: ['document.failed'] }),
    family: 'detail-status',
  },
  {
    method: 'PATCH',
    path: '/api/public/webhooks/:webhook',
    body: () => ({ description: 'Renamed' }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/voice-agents',
    body: () => ({ name: 'Voice', voice_id: '21m00Tcm4TlvDq8ikWAM' }),
    family: 'detail',
  },
  {
    method: 'PUT',
    path: '/api/public/voice-agents/:voiceAgent',
    body: () => ({ name: 'Renamed' }),
    family: 'detail',
  },
  ...(['vendor', 'elevenlabs'] as const).map((vendor): WriteRoute => ({
    method: 'POST',
    path: `/api/public/voice-agents/${vendor}/voices/:voiceId/tts`,
    body: () => ({ text: 'Hello.' }),
    family: 'detail',
  })),
  {
    method: 'POST',
    path: '/api/v1/chat/conversations',
    body: () => ({ agent_id: ids.agent }),
    family: 'chat',
    chat: true,
  },
  {
    method: 'PATCH',
    path: '/api/v1/chat/conversations/:conversation',
    body: () => ({ title: 'Renamed' }),
    family: 'chat',
    chat: true,
  },
  {
    method: 'POST',
    path: '/api/v1/chat/conversations/:conversation/feedback',
    body: () => ({ rating: 5 }),
    family: 'chat',
    chat: true,
  },
  {
    method: 'POST',
    path: '/api/v1/chat/agent/chat',
    body: () => ({ agent_key: ids.agentKey, query: 'hello' }),
    family: 'chat',
    chat: true,
  },
  {
    method: 'POST',
    path: '/api/v1/chat/agent/stream',
    body: () => ({ agent_key: ids.agentKey, query: 'hello' }),
    family: 'chat',
    chat: true,
  },
  {
    // The body tolerates the documented OpenAI request fields it does not use (n, top_p …);
    // none of the probed names is one of them, so every probe is still refused by name.
    method: 'POST',
    path: '/v1/chat/completions',
    body: () => ({ model: ids.agentKey, messages: [{ role: 'user', content: 'hello' }] }),
    family: 'openai',
    chat: true,
  },
  { method: 'POST', path: '/widget/v1/:widgetKey/sessions', body: () => ({}), family: 'detail-status', visitor: true },
  {
    method: 'POST',
    path: '/widget/v1/:widgetKey/messages',
    body: () => ({ text: 'hello' }),
    family: 'detail-status',
    visitor: true,
  },
  {
    method: 'POST',
    path: '/widget/v1/:widgetKey/conversations/:conversation/feedback',
    body: () => ({ rating: 5 }),
    family: 'detail-status',
    visitor: true,
  },
  {
    method: 'POST',
    path: '/api/public/auth/sign-in',
    body: () => ({ email: 'a@b.example', password: 'x' }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/auth/invitations/accept',
    body: () => ({ token: 'inv_nothing', password: 'a long enough passphrase 42' }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/auth/password-reset',
    body: () => ({ email: 'a@b.example' }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/auth/password',
    body: () => ({ token: 'reset_nothing', password: 'a long enough passphrase 42' }),
    family: 'detail-status',
  },
  { method: 'POST', path: '/api/public/conversations/:conversation/assign', body: () => ({}), family: 'detail-status' },
  {
    method: 'POST',
    path: '/api/public/conversations/:conversation/takeover',
    body: () => ({}),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/api/public/conversations/:conversation/release',
    body: () => ({}),
    family: 'detail-status',
  },
  { method: 'POST', path: '/api/public/conversations/:conversation/close', body: () => ({}), family: 'detail-status' },
  {
    method: 'POST',
    path: '/api/public/conversations/:conversation/messages',
    body: () => ({ content: 'hello' }),
    family: 'detail-status',
  },
  {
    method: 'POST',
    path: '/v1/responses',
    body: () => ({ model: ids.agentKey, input: 'hello' }),
    family: 'openai',
    chat: true,
  },
  {
    method: 'POST',
    path: '/v1/embeddings',
    body: () => ({ model: 'local:any', input: 'hello' }),
    family: 'openai',
    chat: true,
  },
  {
    method: 'POST',
    path: '/v1/audio/speech',
    body: () => ({ model: 'tts-1', voice: '21m00Tcm4TlvDq8ikWAM', input: 'hello' }),
    family: 'openai',
    chat: true,
  },
  {
    method: 'POST',
    path: '/elevenlabs/v1/text-to-speech/:voiceId',
    body: () => ({ text: 'hello' }),
    family: 'elevenlabs',
  },
  {
    method: 'POST',
    path: '/elevenlabs/v1/text-to-speech/:voiceId/stream',
    body: () => ({ text: 'hello' }),
    family: 'elevenlabs',
  },
  {
    method: 'PATCH',
    path: '/team-notifications/:notification/users/:user/status',
    body: () => ({ status: 'read' }),
    family: 'insights',
  },
];

const urlOf = (route: WriteRoute) => route.path.replace(/:(\w+)/g, (_, name: string) => ids[name as keyof typeof ids]);

const PROBES = (): Record<string, unknown> => ({
  id: randomUUID(),
  company_id: other.companyId,
  created_at: '2000-01-01T00:00:00.000Z',
  created_by: other.userId,
  zz_unknown: 1,
});

/** Every row of the two companies (and of their users), so that any write shows. */
async function snapshot(): Promise<string> {
  const db = t.container.db;
  const companies = [tenant.companyId, other.companyId];
  const users = [tenant.userId, other.userId];
  const tables = await sql<{ table_name: string }>`
    select table_name from information_schema.columns
    where table_schema = current_schema() and column_name = 'company_id'
      and table_name in (select table_name from information_schema.tables
                         where table_schema = current_schema() and table_type = 'BASE TABLE')
    order by table_name`.execute(db);
  const names = tables.rows.map((row) => row.table_name);
  expect(names).toEqual(expect.arrayContaining(['agents', 'deployments', 'kb_collections', 'notification_recipients']));
  const parts: unknown[] = [];
  for (const { table_name: table } of tables.rows) {
    const rows = await sql`select coalesce(jsonb_agg(to_jsonb(r) order by to_jsonb(r)::text), '[]') as rows
      from ${sql.table(table)} r where r.company_id = any(${companies}::uuid[])`.execute(db);
    parts.push([table, rows.rows]);
  }
  for (const [label, query] of [
    ['companies', sql`select to_jsonb(c) as row from companies c where id = any(${companies}::uuid[]) order by id`],
    [
      'users',
      sql`select to_jsonb(u) as row from users u
          where id = any(${users}::uuid[]) or created_in_company_id = any(${companies}::uuid[]) order by id`,
    ],
    ['api_keys', sql`select to_jsonb(k) as row from api_keys k where user_id = any(${users}::uuid[]) order by id`],
  ] as const) {
    parts.push([label, (await query.execute(db)).rows]);
  }
  return JSON.stringify(parts);
}

describe('write routes refuse ids, tenancy, timestamps, authors and unknown keys', () => {
  it('covers every route that takes a body', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { requestBody?: unknown }>>;
    }>();
    const withBody = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => operation.requestBody)
        .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
    );
    expect(withBody.length).toBeGreaterThanOrEqual(ROUTES.length);
    const multipartOnly = (operation: { requestBody?: unknown }) => {
      const content = (operation.requestBody as { content?: Record<string, unknown> }).content ?? {};
      return Object.keys(content).every((type) => type === 'multipart/form-data');
    };
    const tested = new Set(ROUTES.map((route) => `${route.method} ${route.path.replace(/:\w+/g, '*')}`));
    // The MCP endpoint's body is a JSON-RPC envelope, not a record: what it carries is a tool's
    // input, refused field by field by the tool's strict schema (test/mcp-server.test.ts).
    tested.add('POST /mcp');
    const untested = withBody
      .filter(({ operation }) => !multipartOnly(operation))
      .map(({ path, method }) => `${method} ${path.replace(/\{[^}]+\}/g, '*')}`)
      .filter((route) => !tested.has(route));
    expect(untested).toEqual([]);
  });

  for (const route of ROUTES) {
    it(`${route.method} ${route.path} answers 400 naming each one and writes nothing`, async () => {
      const before = await snapshot();
      for (const [key, value] of Object.entries(PROBES())) {
        if (route.takes?.includes(key)) continue;
        const res = await t.app.inject({
          method: route.method,
          url: urlOf(route),
          headers: route.chat ? chatHeaders : route.visitor ? visitorHeaders : tenant.headers,
          payload: { ...route.body(), [key]: value },
        });
        expect(res.statusCode, `${key}: ${res.body}`).toBe(400);
        const body = res.json();
        expect(Object.keys(body).sort(), key).toEqual(SHAPES[route.family]);
        const message = body.detail?.message ?? body.detail ?? body.message ?? body.error?.message;
        expect(message).toBe(`Invalid request body: unknown field '${key}'`);
      }
      expect(await snapshot()).toBe(before);
    });
  }

  it('names an unknown key inside a nested object', async () => {
    const res = await t.app.inject({
      method: 'PATCH',
      url: `/api/public/agents/${ids.agent}`,
      headers: tenant.headers,
      payload: { escalation: { enabled: false, company_id: other.companyId } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      detail: "Invalid request body: unknown field 'escalation.company_id'",
      status_code: 400,
    });
    const search = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/search',
      headers: tenant.headers,
      payload: { query: 'x', categories: [], search_method: { enable_everything: true } },
    });
    expect(search.json()).toEqual({ detail: "Invalid request body: unknown field 'search_method.enable_everything'" });
  });

  it('refuses an unknown field of the multipart chat form too', async () => {
    const boundary = 'ma55a55ignment';
    const field = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers: { ...chatHeaders, 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `${field('agent_key', ids.agentKey)}${field('query', 'hi')}${field('company_id', other.companyId)}--${boundary}--\r\n`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'ValidationError',
      message: "Invalid request body: unknown field 'company_id'",
      statusCode: 400,
    });
  });

  it('keeps tolerating unknown query parameters (they write nothing)', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/public/agents?limit=5&utm_source=mail&_=1700000000',
      headers: tenant.headers,
    });
    expect(res.statusCode).toBe(200);
  });

  it('declares additionalProperties on every object of every body in the OpenAPI document', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
    }>();
    const open: string[] = [];
    const walk = (schema: unknown, where: string): void => {
      if (!schema || typeof schema !== 'object') return;
      const node = schema as Record<string, unknown>;
      // false, or true for a deliberately free-form object (an integration's config): never left unsaid.
      if (node.type === 'object' && node.properties && !('additionalProperties' in node)) open.push(where);
      for (const [key, value] of Object.entries(node.properties ?? {})) walk(value, `${where}.${key}`);
      for (const key of ['items', 'anyOf', 'oneOf', 'allOf'] as const) {
        const value = node[key];
        if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${where}.${key}[${i}]`));
        else walk(value, `${where}.${key}`);
      }
    };
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        // JSON bodies (the chat form shares its schema with its JSON form); a multipart form read
        // by its handler field by field (the file upload) is documented, not compiled.
        const media = operation.requestBody?.content['application/json'];
        if (media) walk(media.schema, `${method.toUpperCase()} ${path}`);
      }
    }
    expect(open).toEqual([]);
  });
});

describe('repositories write named columns only', () => {
  it('does not move an agent, a collection or a deployment, nor rewrite a company timestamp, whatever the object carries', async () => {
    const before = await snapshot();
    const smuggled = { company_id: other.companyId, id: randomUUID(), created_at: new Date(0), created_by: null };
    await updateAgent(t.container.db, tenant.companyId, ids.agent, { ...smuggled } as never);
    await updateCollection(t.container.db, tenant.companyId, ids.collection, { ...smuggled } as never, new Date());
    await updateDeployment(t.container.db, tenant.companyId, ids.deployment, { ...smuggled } as never);
    await updateCompany(t.container.db, tenant.companyId, { ...smuggled } as never);
    const agent = await t.container.db.selectFrom('agents').selectAll().where('id', '=', ids.agent).executeTakeFirst();
    expect(agent?.company_id).toBe(tenant.companyId);
    const collection = await t.container.db
      .selectFrom('kb_collections')
      .selectAll()
      .where('id', '=', ids.collection)
      .executeTakeFirst();
    expect(collection?.company_id).toBe(tenant.companyId);
    const deployment = await t.container.db
      .selectFrom('deployments')
      .selectAll()
      .where('id', '=', ids.deployment)
      .executeTakeFirst();
    expect(deployment?.company_id).toBe(tenant.companyId);
    const company = await t.container.db
      .selectFrom('companies')
      .selectAll()
      .where('id', '=', tenant.companyId)
      .executeTakeFirstOrThrow();
    expect(company.created_at.getTime()).not.toBe(0);
    // Only updated_at may have moved.
    const strip = (text: string) => text.replace(/"updated_at": ?"[^"]+"/g, '');
    expect(strip(await snapshot())).toBe(strip(before));
  });
});
