/**
 * custom_api header values are secrets: sealed in the row, masked in every answer, kept when sent
 * back masked, refused when a mask does not match; `plain_headers` are declared not secret and
 * shown as they are. Headers stored in clear before keep working and are sealed at start-up.
 * Addresses carrying credentials (`user:password@`) are refused at create and update, wherever
 * they sit in a config (custom_api base_url, Odoo url, a Google key's token_uri).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { startFakeCustomApi, type FakeCustomApi } from './helpers/fake-custom-api.js';
import { createLoggedTestApp, integrationsApi, type LoggedTestApp } from './helpers/integrations.js';

const KEY = 'partner-key-7f3a9c2e41d08b65aa10';

let t: LoggedTestApp;
let peer: FakeCustomApi;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createLoggedTestApp({ ALLOW_PRIVATE_URLS: 'true' });
  peer = await startFakeCustomApi({ type: 'api_key', header: 'X-Partner-Key', key: KEY }, 'acme');
  tenant = await createTenant(t.container);
});
afterAll(async () => {
  await peer?.close();
  await t?.close();
});

const config = (extra: Record<string, unknown> = {}) => ({
  base_url: peer.baseUrl,
  headers: { 'X-Partner-Key': KEY },
  plain_headers: { 'X-Tenant': 'acme' },
  ...extra,
});

async function storedConfig(id: string) {
  const row = await sql<{ config: string }>`select config::text as config from integrations where id = ${id}`.execute(
    t.container.db,
  );
  return row.rows[0]!.config;
}

describe('custom_api header secrets', () => {
  it('are sealed in the row, masked in answers, sent to the API; plain headers are shown', async () => {
    const api = integrationsApi(t.app, tenant);
    const created = await api.create({ name: 'Partner', type: 'custom_api', config: config() });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = created.json<{ id: string }>();
    expect(created.json().config).toEqual({
      base_url: peer.baseUrl,
      headers: { 'X-Partner-Key': `••••${KEY.slice(-4)}` },
      plain_headers: { 'X-Tenant': 'acme' },
    });
    const stored = await storedConfig(id);
    expect(stored).not.toContain(KEY);
    expect(JSON.parse(stored).headers['X-Partner-Key']).toMatch(/^enc:v1:/);
    expect(JSON.parse(stored).plain_headers).toEqual({ 'X-Tenant': 'acme' });

    const check = await api.test(id);
    expect(check.json()).toMatchObject({ ok: true });
    expect(peer.requests.at(-1)!.headers['x-partner-key']).toBe(KEY);
    expect(peer.requests.at(-1)!.headers['x-tenant']).toBe('acme');

    const answers = [created, await api.get(id), await api.list(), check];
    for (const answer of answers) expect(answer.body).not.toContain(KEY);
    expect(t.logs.join('\n')).not.toContain(KEY);
  });

  it('keeps a header sent back masked, and refuses a mask that is not the stored one', async () => {
    const api = integrationsApi(t.app, tenant);
    const { id } = (await api.create({ name: 'Partner', type: 'custom_api', config: config() })).json<{ id: string }>();
    const masked = `••••${KEY.slice(-4)}`;
    const kept = await api.update(id, {
      config: { headers: { 'X-Partner-Key': masked, 'X-Extra': 'extra-secret-value-000001' } },
    });
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json().config.headers).toEqual({ 'X-Partner-Key': masked, 'X-Extra': '••••0001' });
    expect((await api.test(id)).json()).toMatchObject({ ok: true });
    expect(peer.requests.at(-1)!.headers['x-extra']).toBe('extra-secret-value-000001');

    for (const headers of [{ 'X-Partner-Key': '••••zzzz' }, { 'X-Other': masked }]) {
      const refused = await api.update(id, { config: { headers } });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().detail).toMatch(
        /^Invalid field 'config\.headers\.X-(Partner-Key|Other)': is a masked value/,
      );
    }
    const createdMasked = await api.create({
      name: 'P',
      type: 'custom_api',
      config: config({ headers: { 'X-Partner-Key': masked } }),
    });
    expect(createdMasked.statusCode).toBe(400);
    expect(createdMasked.json().detail).toMatch(/'config\.headers\.X-Partner-Key': is a masked value/);
    // Nothing was half-written.
    expect(JSON.parse(await storedConfig(id)).headers['X-Partner-Key']).toMatch(/^enc:v1:/);
  });

  it('refuses one header both secret and plain, and credential headers in plain_headers', async () => {
    const api = integrationsApi(t.app, tenant);
    const both = await api.create({
      name: 'P',
      type: 'custom_api',
      config: config({ plain_headers: { 'x-partner-key': 'plain' } }),
    });
    expect(both.statusCode).toBe(400);
    expect(both.json().detail).toBe(
      "Invalid field 'config.plain_headers.x-partner-key': is also in headers; a header is either secret or plain",
    );
    const cookie = await api.create({
      name: 'P',
      type: 'custom_api',
      config: config({ plain_headers: { Cookie: 'a' } }),
    });
    expect(cookie.statusCode).toBe(400);
    expect(cookie.json().detail).toMatch(/'config\.plain_headers\.Cookie': cannot be set here/);
  });

  it('keeps headers stored in clear working, and seals them at start-up', async () => {
    const [row] = await t.container.db
      .insertInto('integrations')
      .values({
        company_id: tenant.companyId,
        name: 'Legacy',
        type: 'custom_api',
        config: JSON.stringify({
          base_url: peer.baseUrl,
          headers: { 'X-Partner-Key': KEY, 'X-Tenant': 'acme' },
        }) as never,
      })
      .returning(['id'])
      .execute();
    const api = integrationsApi(t.app, tenant);
    const shown = await api.get(row!.id);
    expect(shown.body).not.toContain(KEY);
    expect((await api.test(row!.id)).json()).toMatchObject({ ok: true });

    expect(await t.container.integrations.sealClearSecrets()).toBeGreaterThanOrEqual(1);
    const stored = JSON.parse(await storedConfig(row!.id));
    expect(stored.headers['X-Partner-Key']).toMatch(/^enc:v1:/);
    expect(stored.headers['X-Tenant']).toMatch(/^enc:v1:/);
    expect((await api.test(row!.id)).json()).toMatchObject({ ok: true });
    expect(peer.requests.at(-1)!.headers['x-partner-key']).toBe(KEY);
    expect(await t.container.integrations.sealClearSecrets()).toBe(0);
  });
});

describe('addresses with credentials', () => {
  const refused = [
    ['custom_api base_url', 'custom_api', { base_url: 'https://user:pw@api.example.com/v1' }, 'config.base_url'],
    [
      'Odoo url',
      'odoo',
      { url: 'https://admin:pw@odoo.example.com', database: 'prod', username: 'admin', api_key: 'odoo-key-000000001' },
      'config.url',
    ],
    [
      'a Google key token_uri',
      'google_calendar',
      {
        calendar_id: 'primary',
        timezone: 'Europe/Paris',
        credentials: {
          type: 'service_account',
          client_email: 'bot@project.iam.gserviceaccount.com',
          private_key: '-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n',
          token_uri: 'https://svc:pw@oauth2.example.com/token',
        },
      },
      'config.credentials.token_uri',
    ],
    ['a user name alone', 'custom_api', { base_url: 'https://token@api.example.com' }, 'config.base_url'],
  ] as const;

  it.each(refused)('%s → 400 at create', async (_what, type, body, field) => {
    const res = await integrationsApi(t.app, tenant).create({ name: 'X', type, config: body });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toBe(
      `Invalid field '${field}': must not carry credentials (user:password@); put them in the integration's secret fields`,
    );
  });

  it('→ 400 at update, the stored address unchanged', async () => {
    const api = integrationsApi(t.app, tenant);
    const { id } = (await api.create({ name: 'P', type: 'custom_api', config: config() })).json<{ id: string }>();
    const res = await api.update(id, { config: { base_url: 'http://u:p@127.0.0.1:1/api' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/^Invalid field 'config\.base_url': must not carry credentials/);
    expect((await api.get(id)).json().config.base_url).toBe(peer.baseUrl);
  });
});
