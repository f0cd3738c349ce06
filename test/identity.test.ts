import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, uniqueEmail } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

async function call(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  headers: Record<string, string>,
  payload?: unknown,
) {
  const res = await t.app.inject({
    method,
    url,
    headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  return { status: res.statusCode, body: res.body ? res.json() : null };
}

describe('users', () => {
  it('GET /users/me shows the caller, their memberships and active company', async () => {
    const tenant = await createTenant(t.container);
    const me = await call('GET', '/api/public/users/me', tenant.headers);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      id: tenant.userId,
      email: tenant.email,
      active_company_id: tenant.companyId,
      role: 'owner',
    });
    expect(me.body.memberships).toEqual([expect.objectContaining({ company_id: tenant.companyId, role: 'owner' })]);
  });

  it('an admin creates a user as a member; the returned key works once and is never shown again', async () => {
    const tenant = await createTenant(t.container);
    const email = uniqueEmail('New.Person');
    const created = await call('POST', '/api/public/users', tenant.headers, {
      email,
      name: 'Noor Al Harbi',
      role: 'developer',
    });
    expect(created.status).toBe(201);
    expect(created.body.user).toMatchObject({ email: email.toLowerCase(), first_name: 'Noor', last_name: 'Al Harbi' });
    expect(created.body.member).toMatchObject({ role: 'developer', company_id: tenant.companyId });
    const key: string = created.body.api_key.key;
    expect(key).toMatch(/^sk_[\w-]{43}$/);
    const me = await call('GET', '/api/public/users/me', { 'x-api-key': key });
    expect(me.body).toMatchObject({ id: created.body.user.id, role: 'developer', active_company_id: tenant.companyId });
    const keys = await call('GET', '/api/public/api-keys', { 'x-api-key': key });
    expect(keys.body.data).toEqual([expect.not.objectContaining({ key: expect.anything() })]);
    expect(keys.body.data[0].hint).toBe(`sk_••••${key.slice(-4)}`);

    const duplicate = await call('POST', '/api/public/users', tenant.headers, { email: email.toUpperCase() });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.detail).toContain('already exists');
  });

  it('creates a user without membership, who then has no active company', async () => {
    const tenant = await createTenant(t.container);
    const created = await call('POST', '/api/public/users', tenant.headers, {
      email: uniqueEmail(),
      first_name: 'Sam',
    });
    expect(created.body.member).toBeNull();
    const headers = { 'x-api-key': created.body.api_key.key as string };
    expect((await call('GET', '/api/public/users/me', headers)).body).toMatchObject({
      active_company_id: null,
      role: null,
      memberships: [],
    });
    expect((await call('GET', '/api/public/companies/current', headers)).status).toBe(403);
    const company = await call('POST', '/api/public/companies', headers, { name: 'Sam & Co' });
    expect(company.status).toBe(201);
    expect((await call('GET', '/api/public/companies/current', headers)).body.id).toBe(company.body.id);
  });

  it('only an owner creates an owner; bad input is a 400 naming the field', async () => {
    const tenant = await createTenant(t.container);
    const admin = await tenant.member('admin');
    expect(
      (await call('POST', '/api/public/users', admin.headers, { email: uniqueEmail(), role: 'owner' })).status,
    ).toBe(403);
    expect(
      (await call('POST', '/api/public/users', tenant.headers, { email: uniqueEmail(), role: 'owner' })).status,
    ).toBe(201);
    expect((await call('POST', '/api/public/users', tenant.headers, { email: 'x' })).body.detail).toBe(
      "Invalid field 'email': must be an e-mail address",
    );
    expect((await call('POST', '/api/public/users', tenant.headers, { name: 'No Mail' })).body.detail).toBe(
      "Invalid field 'email': is required",
    );
  });
});

describe('api keys', () => {
  it("creates, lists and revokes the caller's own keys; a revoked key is rejected at once", async () => {
    const tenant = await createTenant(t.container);
    const created = await call('POST', '/api/public/api-keys', tenant.headers, { name: 'ci' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ci' });
    const second = { 'x-api-key': created.body.key as string };
    expect((await call('GET', '/api/public/users/me', second)).status).toBe(200);
    const list = await call('GET', '/api/public/api-keys', tenant.headers);
    expect(list.body.total).toBe(2);

    expect((await call('DELETE', `/api/public/api-keys/${created.body.id}`, tenant.headers)).status).toBe(204);
    const rejected = await call('GET', '/api/public/users/me', second);
    expect(rejected.status).toBe(401);
    expect(rejected.body).toEqual({ detail: 'Invalid or revoked API key', status_code: 401 });
    expect((await call('DELETE', `/api/public/api-keys/${created.body.id}`, tenant.headers)).status).toBe(404);
  });

  it("cannot see or revoke another user's key", async () => {
    const tenant = await createTenant(t.container);
    const colleague = await tenant.member('admin');
    const theirs = await call('POST', '/api/public/api-keys', colleague.headers, {});
    expect((await call('DELETE', `/api/public/api-keys/${theirs.body.id}`, tenant.headers)).status).toBe(404);
    expect((await call('GET', '/api/public/api-keys', tenant.headers)).body.total).toBe(1);
  });
});

describe('chat tokens', () => {
  it('creates company tokens (optionally bound to an agent of the company) that authenticate chat calls', async () => {
    const tenant = await createTenant(t.container);
    const agent = await t.container.db
      .insertInto('agents')
      .values({ company_id: tenant.companyId, title: 'Helper' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const bound = await call('POST', '/api/public/chat-tokens', tenant.headers, {
      name: 'web widget',
      agent_id: agent.id,
    });
    expect(bound.status).toBe(201);
    expect(bound.body).toMatchObject({ name: 'web widget', agent_id: agent.id, created_by: tenant.userId });
    expect(bound.body.token).toMatch(/^ct_/);
    const caller = await t.container.identity.authenticateChatToken(bound.body.token);
    expect(caller).toMatchObject({ kind: 'chat', companyId: tenant.companyId, agentId: agent.id });

    const other = await createTenant(t.container);
    const foreign = await call('POST', '/api/public/chat-tokens', other.headers, { agent_id: agent.id });
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toBe(`Agent not found: ${agent.id}`);

    const list = await call('GET', '/api/public/chat-tokens', tenant.headers);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).not.toHaveProperty('token');
    expect((await call('DELETE', `/api/public/chat-tokens/${bound.body.id}`, tenant.headers)).status).toBe(204);
    expect(await t.container.identity.authenticateChatToken(bound.body.token)).toBeNull();
  });

  it('does not accept a chat token as an API key, nor an API key as a chat token', async () => {
    const tenant = await createTenant(t.container);
    const { token } = await tenant.chatToken();
    expect((await call('GET', '/api/public/users/me', { 'x-api-key': token })).status).toBe(401);
    expect(await t.container.identity.authenticateChatToken(tenant.apiKey)).toBeNull();
  });
});

describe('credential cache across instances', () => {
  it('a key revoked on one instance is rejected by another as soon as the change notification lands', async () => {
    const other = await createTestApp();
    try {
      const tenant = await createTenant(t.container);
      const created = await call('POST', '/api/public/api-keys', tenant.headers, {});
      const headers = { 'x-api-key': created.body.key as string };
      // Warm the other instance's cache with this key.
      for (let i = 0; i < 3; i++) {
        expect((await other.app.inject({ method: 'GET', url: '/api/public/users/me', headers })).statusCode).toBe(200);
      }
      expect((await call('DELETE', `/api/public/api-keys/${created.body.id}`, tenant.headers)).status).toBe(204);
      const deadline = Date.now() + 2000;
      let status = 200;
      while (status === 200 && Date.now() < deadline) {
        status = (await other.app.inject({ method: 'GET', url: '/api/public/users/me', headers })).statusCode;
        if (status === 200) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(status).toBe(401);
    } finally {
      await other.close();
    }
  });
});
