/**
 * The integrations family (`/api/public/integrations`, `{detail}` errors): the kinds' listing,
 * create/list/get/update/delete with the spec's record, every bad input of a body, tenancy and
 * roles. Secrets and live checks have their own files.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createAgent } from './helpers/deployments.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { integrationsApi } from './helpers/integrations.js';

let t: TestApp;
let owner: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  owner = await createTenant(t.container);
});
afterAll(async () => t.close());

const SLACK = {
  name: 'Team Slack',
  type: 'slack',
  config: { bot_token: 'xoxb-1234-5678-abcdefghijklmnop', channel: '#support' },
};
const RECORD_KEYS = [
  'agent_id',
  'company_id',
  'config',
  'created_at',
  'id',
  'is_active',
  'name',
  'type',
  'updated_at',
  'visibility',
];

describe('GET /integrations/types', () => {
  it('lists every kind but business messaging and ERP, each with type, name and description', async () => {
    const member = await owner.member('member');
    const res = await integrationsApi(t.app, member).types();
    expect(res.statusCode).toBe(200);
    const types = res.json() as { type: string; name: string; description: string }[];
    expect(types.map((item) => item.type).sort()).toEqual(
      [
        'custom_api',
        'gmail',
        'google_calendar',
        'hubspot',
        'mcp',
        'notion',
        'shopify',
        'slack',
        'smtp',
        'teams',
        'zendesk',
      ].sort(),
    );
    for (const item of types) {
      expect(Object.keys(item).sort()).toEqual(['description', 'name', 'type']);
      expect(item.name && item.description).toBeTruthy();
    }
  });

  it('asks for a key (401 in the family shape)', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/public/integrations/types' });
    expect(res.statusCode).toBe(401);
    expect(Object.keys(res.json())).toEqual(['detail']);
  });
});

describe('create, read, update, delete', () => {
  it('creates (201) the record of the spec with defaults, and reads it back masked', async () => {
    const api = integrationsApi(t.app, owner);
    const created = await api.create(SLACK);
    expect(created.statusCode).toBe(201);
    const record = created.json();
    expect(Object.keys(record).sort()).toEqual(RECORD_KEYS);
    expect(record).toMatchObject({
      name: 'Team Slack',
      type: 'slack',
      is_active: true,
      visibility: 'private',
      company_id: owner.companyId,
      agent_id: null,
      config: { bot_token: '••••mnop', channel: '#support' },
    });
    const got = await api.get(record.id);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(record);
  });

  it('creates kinds that are not listed (whatsapp, odoo) and links an agent of the company', async () => {
    const api = integrationsApi(t.app, owner);
    const agent = await createAgent(t.container, owner);
    const whatsapp = await api.create({
      name: 'WhatsApp',
      type: 'whatsapp',
      visibility: 'public',
      is_active: false,
      agent_id: agent.id,
      config: { access_token: 'EAAG-whatsapp-token-0000000000', phone_number_id: '1234567890' },
    });
    expect(whatsapp.statusCode).toBe(201);
    expect(whatsapp.json()).toMatchObject({ visibility: 'public', is_active: false, agent_id: agent.id });
    const odoo = await api.create({
      name: 'ERP',
      type: 'odoo',
      config: {
        url: 'https://erp.example.com',
        database: 'prod',
        username: 'bot',
        api_key: 'odoo-api-key-000000000001',
      },
    });
    expect(odoo.statusCode).toBe(201);
    expect(odoo.json().config.api_key).toBe('••••0001');
  });

  it("lists the company's integrations, newest first, and none of another company's", async () => {
    const tenant = await createTenant(t.container);
    const other = await createTenant(t.container);
    const api = integrationsApi(t.app, tenant);
    const first = (await api.create({ ...SLACK, name: 'First' })).json();
    const second = (await api.create({ ...SLACK, name: 'Second' })).json();
    await integrationsApi(t.app, other).create({ ...SLACK, name: 'Theirs' });
    const member = await tenant.member('member');
    const list = await integrationsApi(t.app, member).list();
    expect(list.statusCode).toBe(200);
    expect(list.json().map((item: { id: string }) => item.id)).toEqual([second.id, first.id]);
  });

  it('pages the list (skip, limit) newest first, keeping the array the interface gives', async () => {
    const tenant = await createTenant(t.container);
    const api = integrationsApi(t.app, tenant);
    const ids: string[] = [];
    for (const name of ['One', 'Two', 'Three']) ids.unshift((await api.create({ ...SLACK, name })).json().id);
    const page = (query: string) =>
      t.app.inject({ method: 'GET', url: `/api/public/integrations${query}`, headers: tenant.headers });
    expect((await page('?limit=2')).json().map((item: { id: string }) => item.id)).toEqual(ids.slice(0, 2));
    expect((await page('?skip=2&limit=2')).json().map((item: { id: string }) => item.id)).toEqual([ids[2]]);
    expect((await page('?skip=3')).json()).toEqual([]);
    for (const query of ['?limit=0', '?limit=1001', '?skip=-1', '?limit=x']) {
      const res = await page(query);
      expect(res.statusCode, query).toBe(400);
      expect(Object.keys(res.json()), query).toEqual(['detail']);
    }
  });

  it('updates only what is sent: name, flags, config keys (secrets kept when omitted or sent back masked)', async () => {
    const api = integrationsApi(t.app, owner);
    const { id } = (await api.create(SLACK)).json();
    const renamed = await api.update(id, { name: 'Renamed', is_active: false, visibility: 'public' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'Renamed', is_active: false, visibility: 'public' });
    const channel = await api.update(id, { config: { channel: 'C0SUPPORT' } });
    expect(channel.json().config).toEqual({ bot_token: '••••mnop', channel: 'C0SUPPORT' });
    const maskedBack = await api.update(id, { config: { bot_token: '••••mnop', channel: '#ops' } });
    expect(maskedBack.statusCode).toBe(200);
    expect(maskedBack.json().config).toEqual({ bot_token: '••••mnop', channel: '#ops' });
    const replaced = await api.update(id, { config: { bot_token: 'xoxb-new-token-value-9999' } });
    expect(replaced.json().config.bot_token).toBe('••••9999');
    const withBase = await api.update(id, { config: { base_url: 'https://slack.example.com/api' } });
    expect(withBase.json().config.base_url).toBe('https://slack.example.com/api');
    const removed = await api.update(id, { config: { base_url: null } });
    expect(removed.json().config).toEqual({ bot_token: '••••9999', channel: '#ops' });
    expect(new Date(removed.json().updated_at) >= new Date(renamed.json().updated_at)).toBe(true);
  });

  it('links and unlinks an agent on update', async () => {
    const api = integrationsApi(t.app, owner);
    const agent = await createAgent(t.container, owner);
    const { id } = (await api.create(SLACK)).json();
    expect((await api.update(id, { agent_id: agent.id })).json().agent_id).toBe(agent.id);
    expect((await api.update(id, { agent_id: null })).json().agent_id).toBeNull();
  });

  it('deletes (204), after which the integration is a 404', async () => {
    const api = integrationsApi(t.app, owner);
    const { id } = (await api.create(SLACK)).json();
    const deleted = await api.remove(id);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    const gone = await api.get(id);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ detail: `Integration not found: ${id}` });
    expect((await api.remove(id)).statusCode).toBe(404);
  });

  it('agents may list the integrations (integration_ids) as before', async () => {
    const { id } = (await integrationsApi(t.app, owner).create(SLACK)).json();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: owner.headers,
      payload: { title: 'With Slack', integration_ids: [id] },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().integration_ids).toEqual([id]);
  });
});

describe('tenancy and roles', () => {
  it("answers 404 naming the integration for another company's id, on every route", async () => {
    const other = await createTenant(t.container);
    const { id } = (await integrationsApi(t.app, other).create(SLACK)).json();
    const api = integrationsApi(t.app, owner);
    for (const res of [
      await api.get(id),
      await api.update(id, { name: 'x' }),
      await api.remove(id),
      await api.test(id),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: `Integration not found: ${id}` });
    }
    expect((await integrationsApi(t.app, other).get(id)).json().name).toBe('Team Slack');
  });

  it('answers 400 for a malformed id', async () => {
    const res = await integrationsApi(t.app, owner).get('not-a-uuid');
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toContain("'id'");
  });

  it('lets members read but not write or test (403)', async () => {
    const { id } = (await integrationsApi(t.app, owner).create(SLACK)).json();
    const member = integrationsApi(t.app, await owner.member('member'));
    expect((await member.list()).statusCode).toBe(200);
    expect((await member.get(id)).statusCode).toBe(200);
    for (const res of [
      await member.create(SLACK),
      await member.update(id, { name: 'x' }),
      await member.remove(id),
      await member.test(id),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toMatch(/developer role; your role is member/);
    }
    const developer = integrationsApi(t.app, await owner.member('developer'));
    expect((await developer.create(SLACK)).statusCode).toBe(201);
  });
});

describe('bad input (400 naming the field)', () => {
  const cases: [string, unknown, RegExp][] = [
    ['name missing', { type: 'slack', config: SLACK.config }, /'name'.*required/],
    ['name not a string', { ...SLACK, name: 123 }, /'name'.*string/],
    ['name too long', { ...SLACK, name: 'n'.repeat(201) }, /'name'/],
    ['name with NUL', { ...SLACK, name: 'a\u0000b' }, /'name'.*NUL/],
    ['type missing', { name: 'x', config: {} }, /'type'.*required/],
    ['unknown type', { ...SLACK, type: 'myspace' }, /'type': unknown integration type 'myspace'; one of: .*slack/],
    ['config not an object', { ...SLACK, config: 'token' }, /'config'.*object/],
    ['config an array', { ...SLACK, config: [] }, /'config'.*object/],
    ['is_active not a boolean', { ...SLACK, is_active: 'yes' }, /'is_active'.*boolean/],
    ['visibility unknown', { ...SLACK, visibility: 'secret' }, /'visibility'.*private, public/],
    ['agent_id malformed', { ...SLACK, agent_id: 'agent-1' }, /'agent_id'/],
    ['agent_id unknown', { ...SLACK, agent_id: randomUUID() }, /'agent_id': no agent .* in your company/],
    ['unknown body field', { ...SLACK, company_id: randomUUID() }, /unknown field 'company_id'/],
    [
      'required config key missing',
      { ...SLACK, config: { channel: '#support' } },
      /'config.bot_token': is required for type slack/,
    ],
    [
      'config key of the wrong type',
      { ...SLACK, config: { ...SLACK.config, channel: 42 } },
      /'config.channel': must be string/,
    ],
    [
      'unknown config keys',
      { ...SLACK, config: { ...SLACK.config, webhook: 'x', team: 'y' } },
      /'config': unknown key\(s\) for type slack: webhook, team \(allowed: bot_token, channel, signing_secret, base_url\)/,
    ],
    [
      'oversized secret',
      { ...SLACK, config: { ...SLACK.config, bot_token: 'x'.repeat(5000) } },
      /'config.bot_token': must be at most 4096/,
    ],
    ['NUL in a config value', { ...SLACK, config: { ...SLACK.config, channel: '#a\u0000' } }, /'config.channel'.*NUL/],
    [
      'base_url not http(s)',
      { ...SLACK, config: { ...SLACK.config, base_url: 'file:///etc/passwd' } },
      /'config.base_url': has an invalid format/,
    ],
    [
      'masked secret on create',
      { ...SLACK, config: { ...SLACK.config, bot_token: '••••mnop' } },
      /'config.bot_token': is a masked value/,
    ],
    [
      'smtp port out of range',
      { name: 'Mail', type: 'smtp', config: { host: 'mail.example.com', port: 70000, from: 'a@example.com' } },
      /'config.port'/,
    ],
    [
      'smtp password without username',
      { name: 'Mail', type: 'smtp', config: { host: 'mail.example.com', password: 'p', from: 'a@example.com' } },
      /'config.username': is required when a password is set/,
    ],
    [
      'shopify api_version malformed',
      {
        name: 'Shop',
        type: 'shopify',
        config: { shop_domain: 'acme.myshopify.com', access_token: 'shpat_x', api_version: 'latest' },
      },
      /'config.api_version'/,
    ],
    [
      'calendar time zone unknown',
      {
        name: 'Cal',
        type: 'google_calendar',
        config: {
          calendar_id: 'c@example.com',
          timezone: 'Mars/Olympus',
          credentials: { client_email: 'sa@p.iam.gserviceaccount.com', private_key: 'k' },
        },
      },
      /'config.timezone': is not a known time zone/,
    ],
    [
      'calendar credentials not an object',
      { name: 'Cal', type: 'google_calendar', config: { calendar_id: 'c@example.com', credentials: 'json' } },
      /'config.credentials': must be object/,
    ],
    [
      'custom_api token missing for bearer',
      { name: 'API', type: 'custom_api', config: { base_url: 'https://api.example.com', auth_type: 'bearer' } },
      /'config.auth_token': is required when auth_type is bearer/,
    ],
    [
      'custom_api unknown operation key',
      {
        name: 'API',
        type: 'custom_api',
        config: {
          base_url: 'https://api.example.com',
          operations: [{ name: 'get_order', description: 'd', method: 'GET', path: '/o', verb: 'x' }],
        },
      },
      /'config.operations.0': unknown key\(s\) for type custom_api: verb/,
    ],
  ];
  for (const [what, body, message] of cases) {
    it(`refuses ${what}`, async () => {
      const res = await integrationsApi(t.app, owner).create(body);
      expect(res.statusCode).toBe(400);
      expect(Object.keys(res.json())).toEqual(['detail']);
      expect(res.json().detail).toMatch(message);
    });
  }

  it("refuses another company's agent as agent_id (400, as a field of the body)", async () => {
    const other = await createTenant(t.container);
    const theirs = await createAgent(t.container, other);
    const res = await integrationsApi(t.app, owner).create({ ...SLACK, agent_id: theirs.id });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toBe(`Invalid field 'agent_id': no agent ${theirs.id} in your company`);
  });

  it('refuses on update: an empty body, a type change, a stale mask, a config made invalid', async () => {
    const api = integrationsApi(t.app, owner);
    const { id } = (await api.create(SLACK)).json();
    const cases: [unknown, RegExp][] = [
      [{}, /request body/],
      [{ type: 'smtp' }, /'type': the type of an integration cannot change \(it is slack\)/],
      [{ config: { bot_token: '••••zzzz' } }, /'config.bot_token': is a masked value that does not match/],
      [{ config: { channel: null } }, /'config.channel': is required for type slack/],
      [{ config: { extra: 1 } }, /unknown key\(s\) for type slack: extra/],
      [{ id: randomUUID() }, /unknown field 'id'/],
    ];
    for (const [body, message] of cases) {
      const res = await api.update(id, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().detail).toMatch(message);
    }
    expect((await api.get(id)).json().config).toEqual(SLACK.config && { bot_token: '••••mnop', channel: '#support' });
  });
});
