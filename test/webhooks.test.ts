/**
 * The webhooks family (`/api/public/webhooks`, `{detail, status_code}` errors): the event-type
 * catalog, create/list/get/update/delete, the secret shown once and rotated, every bad input of a
 * body, tenancy (another company's ids are 404s) and roles (members read, developers manage).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';

let t: TestApp;
let owner: TestTenant;
beforeAll(async () => {
  t = await createTestApp({ ALLOW_PRIVATE_URLS: 'false' });
  owner = await createTenant(t.container);
});
afterAll(async () => t.close());

const BASE = '/api/public/webhooks';
const VALID = { url: 'https://hooks.example.com/switchboard', events: ['support_query.created'] };
const RECORD_KEYS = [
  'company_id',
  'created_at',
  'description',
  'disabled_reason',
  'enabled',
  'events',
  'id',
  'previous_secret_expires_at',
  'updated_at',
  'url',
];

function api(user: { headers: Record<string, string> }) {
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: user.headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  return {
    create: (body: unknown) => call('POST', BASE, body),
    list: () => call('GET', BASE),
    get: (id: string) => call('GET', `${BASE}/${id}`),
    update: (id: string, body: unknown) => call('PATCH', `${BASE}/${id}`, body),
    remove: (id: string) => call('DELETE', `${BASE}/${id}`),
    rotate: (id: string) => call('POST', `${BASE}/${id}/rotate-secret`),
    test: (id: string) => call('POST', `${BASE}/${id}/test`),
    deliveries: (id: string, query = '') => call('GET', `${BASE}/${id}/deliveries${query}`),
    retry: (id: string, deliveryId: string) => call('POST', `${BASE}/${id}/deliveries/${deliveryId}/retry`),
    eventTypes: () => call('GET', `${BASE}/event-types`),
  };
}

describe('GET /webhooks/event-types', () => {
  it('lists the catalog, each type with a description and an example payload, to members', async () => {
    const member = await owner.member('member');
    const res = await api(member).eventTypes();
    expect(res.statusCode).toBe(200);
    const types =
      res.json<
        { type: string; description: string; example_payload: { type: string; timestamp: string; data: object } }[]
      >();
    expect(types.map((entry) => entry.type)).toEqual([
      'support_query.created',
      'support_query.updated',
      'support_query.resolved',
      'conversation.handoff',
      'notification.created',
      'deployment.status_changed',
      'document.ingested',
      'document.failed',
    ]);
    for (const entry of types) {
      expect(entry.description.length).toBeGreaterThan(10);
      expect(entry.example_payload.type).toBe(entry.type);
      expect(Number.isNaN(Date.parse(entry.example_payload.timestamp))).toBe(false);
      expect(Object.keys(entry.example_payload.data)).toContain('id');
    }
  });

  it('asks for a key (401 in the family shape)', async () => {
    const res = await t.app.inject({ method: 'GET', url: `${BASE}/event-types` });
    expect(res.statusCode).toBe(401);
    expect(Object.keys(res.json()).sort()).toEqual(['detail', 'status_code']);
  });
});

describe('create, read, update, delete', () => {
  it('creates (201) with defaults and shows the whsec_ secret only in that answer', async () => {
    const res = await api(owner).create({ ...VALID, description: 'CRM sync' });
    expect(res.statusCode).toBe(201);
    const created = res.json<Record<string, unknown> & { id: string; secret: string }>();
    expect(Object.keys(created).sort()).toEqual([...RECORD_KEYS, 'secret'].sort());
    expect(created).toMatchObject({
      url: VALID.url,
      events: VALID.events,
      description: 'CRM sync',
      enabled: true,
      disabled_reason: null,
      company_id: owner.companyId,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const got = await api(owner).get(created.id);
    expect(got.statusCode).toBe(200);
    expect(Object.keys(got.json()).sort()).toEqual(RECORD_KEYS);
    expect(got.body).not.toContain(created.secret.slice(6, 20));
    const listed = await api(owner).list();
    expect(listed.body).not.toContain(created.secret.slice(6, 20));
    expect(listed.json<{ id: string }[]>().map((item) => item.id)).toContain(created.id);
    // Sealed at rest: the stored value is not the secret.
    const row = await t.container.db
      .selectFrom('webhook_endpoints')
      .select('secret')
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(row.secret.startsWith('enc:v1:')).toBe(true);
    expect(row.secret).not.toContain(created.secret.slice(6));
  });

  it('updates only the fields sent and deletes (204), after which it is a 404', async () => {
    const { id } = (await api(owner).create(VALID)).json<{ id: string }>();
    const updated = await api(owner).update(id, { events: ['document.ingested', 'document.failed'], enabled: false });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({
      url: VALID.url,
      events: ['document.ingested', 'document.failed'],
      enabled: false,
    });
    expect((await api(owner).remove(id)).statusCode).toBe(204);
    expect((await api(owner).get(id)).statusCode).toBe(404);
    expect((await api(owner).remove(id)).statusCode).toBe(404);
  });

  it('rotates the secret: a new one shown once, the previous one signing for 24 hours', async () => {
    const created = (await api(owner).create(VALID)).json<{ id: string; secret: string }>();
    const res = await api(owner).rotate(created.id);
    expect(res.statusCode).toBe(200);
    const rotated = res.json<{ secret: string; previous_secret_expires_at: string }>();
    expect(Object.keys(rotated).sort()).toEqual(['previous_secret_expires_at', 'secret']);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    const hours = (Date.parse(rotated.previous_secret_expires_at) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23);
    expect(hours).toBeLessThanOrEqual(24);
    const got = (await api(owner).get(created.id)).json<{ previous_secret_expires_at: string }>();
    expect(got.previous_secret_expires_at).toBe(rotated.previous_secret_expires_at);
  });
});

describe('bad input', () => {
  const cases: [string, unknown, RegExp][] = [
    ['ftp scheme', { ...VALID, url: 'ftp://hooks.example.com/x' }, /url.*http or https/],
    ['credentials in the URL', { ...VALID, url: 'https://user:pass@hooks.example.com/x' }, /url.*credentials/],
    ['not a URL', { ...VALID, url: 'hooks example' }, /url.*not a valid URL/],
    ['a private address', { ...VALID, url: 'http://10.1.2.3/hooks' }, /url.*private or reserved/],
    ['loopback', { ...VALID, url: 'http://127.0.0.1:9/hooks' }, /url.*private or reserved/],
    ['localhost', { ...VALID, url: 'http://localhost:9/hooks' }, /url.*private or reserved/],
    ['a URL too long', { ...VALID, url: `https://hooks.example.com/${'a'.repeat(2100)}` }, /url/],
    ['no events', { ...VALID, events: [] }, /events/],
    ['an unknown event', { ...VALID, events: ['support_query.deleted'] }, /events/],
    ['the same event twice', { ...VALID, events: ['document.failed', 'document.failed'] }, /events/],
    ['events not an array', { ...VALID, events: 'document.failed' }, /events/],
    ['an unknown field', { ...VALID, secret: 'whsec_mine' }, /secret/],
    ['a company id', { ...VALID, company_id: randomUUID() }, /company_id/],
    ['enabled not a boolean', { ...VALID, enabled: 'yes' }, /enabled/],
    ['a description too long', { ...VALID, description: 'x'.repeat(501) }, /description/],
    ['a NUL byte', { ...VALID, description: 'a\u0000b' }, /NUL|description/],
    ['no url', { events: VALID.events }, /url/],
  ];
  it.each(cases)('refuses %s with a 400 naming the field, writing nothing', async (_name, body, pattern) => {
    const before = (await api(owner).list()).json<unknown[]>().length;
    const res = await api(owner).create(body);
    expect(res.statusCode).toBe(400);
    expect(Object.keys(res.json()).sort()).toEqual(['detail', 'status_code']);
    expect(res.json<{ detail: string }>().detail).toMatch(pattern);
    expect((await api(owner).list()).json<unknown[]>().length).toBe(before);
  });

  it('refuses an empty PATCH, an unknown field and a bad url on update', async () => {
    const { id } = (await api(owner).create(VALID)).json<{ id: string }>();
    expect((await api(owner).update(id, {})).statusCode).toBe(400);
    expect((await api(owner).update(id, { secret: 'x' })).statusCode).toBe(400);
    const bad = await api(owner).update(id, { url: 'https://a:b@hooks.example.com/' });
    expect(bad.statusCode).toBe(400);
    expect((await api(owner).get(id)).json()).toMatchObject({ url: VALID.url });
  });

  it('refuses a body that is not JSON and a malformed id', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: BASE,
      headers: { ...owner.headers, 'content-type': 'application/json' },
      payload: '{"url": ',
    });
    expect(res.statusCode).toBe(400);
    expect((await api(owner).get('not-a-uuid')).statusCode).toBe(400);
    expect((await api(owner).deliveries(randomUUID(), '?limit=1000')).statusCode).toBe(400);
    expect((await api(owner).deliveries(randomUUID(), '?status=lost')).statusCode).toBe(400);
  });
});

describe('tenancy and roles', () => {
  it("answers 404 for another company's webhook and delivery on every route", async () => {
    const other = await createTenant(t.container);
    const { id } = (await api(other).create(VALID)).json<{ id: string }>();
    const mine = api(owner);
    for (const res of [
      await mine.get(id),
      await mine.update(id, { enabled: false }),
      await mine.rotate(id),
      await mine.test(id),
      await mine.deliveries(id),
      await mine.retry(id, randomUUID()),
      await mine.remove(id),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ status_code: 404 });
    }
    expect((await api(other).get(id)).json()).toMatchObject({ enabled: true });
    expect((await mine.list()).json<{ id: string }[]>().map((item) => item.id)).not.toContain(id);
  });

  it('lets members read and refuses them every change (403); developers manage', async () => {
    const { id } = (await api(owner).create(VALID)).json<{ id: string }>();
    const member = api(await owner.member('member'));
    expect((await member.list()).statusCode).toBe(200);
    expect((await member.get(id)).statusCode).toBe(200);
    expect((await member.deliveries(id)).statusCode).toBe(200);
    for (const res of [
      await member.create(VALID),
      await member.update(id, { enabled: false }),
      await member.rotate(id),
      await member.test(id),
      await member.retry(id, randomUUID()),
      await member.remove(id),
    ]) {
      expect(res.statusCode).toBe(403);
    }
    const developer = api(await owner.member('developer'));
    expect((await developer.create(VALID)).statusCode).toBe(201);
    expect((await developer.update(id, { description: 'by a developer' })).statusCode).toBe(200);
    expect((await developer.rotate(id)).statusCode).toBe(200);
  });

  it('refuses a test or a retry on a disabled endpoint (409) and an unknown delivery (404)', async () => {
    const { id } = (await api(owner).create({ ...VALID, enabled: false })).json<{ id: string }>();
    expect((await api(owner).test(id)).statusCode).toBe(409);
    await api(owner).update(id, { enabled: true });
    expect((await api(owner).retry(id, randomUUID())).statusCode).toBe(404);
  });
});
