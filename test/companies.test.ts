import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, createUser, uniqueEmail, type TestTenant } from './helpers/factories.js';
import { insertMember } from '../src/modules/companies/companies.repo.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });

async function call(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  headers: Record<string, string>,
  payload?: unknown,
) {
  const res = await t.app.inject({
    method,
    url,
    headers: payload === undefined ? headers : json(headers),
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  return { status: res.statusCode, body: res.body ? res.json() : null, headers: res.headers };
}

describe('companies', () => {
  let tenant: TestTenant;
  beforeAll(async () => {
    tenant = await createTenant(t.container);
  });

  it('creates a company whose creator is its owner, without switching the active company', async () => {
    const created = await call('POST', '/api/public/companies', tenant.headers, {
      name: 'Acme Support',
      industry: 'retail',
      contact_email: 'help@acme.test',
      website: 'https://acme.test',
      working_hours: 'Sun–Thu 09:00–17:00',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Acme Support',
      industry: 'retail',
      contact_phone: null,
      address: null,
    });
    expect(created.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const list = await call('GET', '/api/public/companies', tenant.headers);
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual(
      expect.arrayContaining([tenant.companyId, created.body.id]),
    );

    const current = await call('GET', '/api/public/companies/current', tenant.headers);
    expect(current.body.id).toBe(tenant.companyId);

    const switched = await call('POST', `/api/public/companies/switch/${created.body.id}`, tenant.headers);
    expect(switched.status).toBe(200);
    expect(switched.body.id).toBe(created.body.id);
    expect((await call('GET', '/api/public/companies/current', tenant.headers)).body.id).toBe(created.body.id);
    const members = await call('GET', '/api/public/companies/members', tenant.headers);
    expect(members.body.data).toEqual([expect.objectContaining({ user_id: tenant.userId, role: 'owner' })]);
    await call('POST', `/api/public/companies/switch/${tenant.companyId}`, tenant.headers);
  });

  it('updates the current company (admin) and leaves unspecified fields alone', async () => {
    const res = await call('PUT', '/api/public/companies', tenant.headers, {
      contact_phone: '+966 11 000 0000',
      address: null,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: tenant.companyId, contact_phone: '+966 11 000 0000', address: null });
    expect(res.body.name).toMatch(/^Company /);
    expect(new Date(res.body.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(res.body.created_at).getTime());
  });

  it('rejects bad company input with the family shape naming the field', async () => {
    const cases: [unknown, string][] = [
      [{}, "Invalid field 'name': is required"],
      [{ name: 42 }, "Invalid field 'name': must be string"],
      [{ name: '' }, "Invalid field 'name'"],
      [{ name: 'x'.repeat(201) }, "Invalid field 'name'"],
      [{ name: 'ok', contact_email: 'not-an-email' }, "Invalid field 'contact_email'"],
    ];
    for (const [payload, message] of cases) {
      const res = await call('POST', '/api/public/companies', tenant.headers, payload);
      expect(res.status, JSON.stringify(payload)).toBe(400);
      expect(Object.keys(res.body).sort()).toEqual(['detail', 'status_code']);
      expect(res.body.status_code).toBe(400);
      expect(res.body.detail).toContain(message);
    }
    const notJson = await t.app.inject({
      method: 'POST',
      url: '/api/public/companies',
      headers: json(tenant.headers),
      payload: '{"name":',
    });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json()).toMatchObject({ status_code: 400 });
    const xml = await t.app.inject({
      method: 'POST',
      url: '/api/public/companies',
      headers: { ...tenant.headers, 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    expect(xml.statusCode).toBe(415);
    expect(xml.json()).toMatchObject({ status_code: 415 });
    const huge = await t.app.inject({
      method: 'POST',
      url: '/api/public/companies',
      headers: json(tenant.headers),
      payload: JSON.stringify({ name: 'x', address: 'y'.repeat(2 * 1024 * 1024) }),
    });
    expect(huge.statusCode).toBe(413);
    expect(huge.json()).toMatchObject({ status_code: 413 });
  });

  it('switching to a company the caller does not belong to is a 404', async () => {
    const other = await createTenant(t.container);
    const res = await call('POST', `/api/public/companies/switch/${other.companyId}`, tenant.headers);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: `Company not found: ${other.companyId}`, status_code: 404 });
    expect((await call('POST', '/api/public/companies/switch/not-a-uuid', tenant.headers)).status).toBe(400);
  });
});

/** A user created by an administrator of `tenant` (POST /users, no role): the company may enroll them. */
async function userCreatedBy(tenant: TestTenant) {
  const res = await call('POST', '/api/public/users', tenant.headers, { email: uniqueEmail('created') });
  expect(res.status).toBe(201);
  return { userId: res.body.user.id as string, email: res.body.user.email as string };
}

describe('members and admins', () => {
  it('adds an existing user as a member once; a second time is a 409', async () => {
    const tenant = await createTenant(t.container);
    const outsider = await userCreatedBy(tenant);
    const added = await call('POST', '/api/public/companies/members', tenant.headers, {
      user_id: outsider.userId,
      role: 'developer',
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      user_id: outsider.userId,
      company_id: tenant.companyId,
      role: 'developer',
      user: { id: outsider.userId, email: outsider.email },
    });
    const again = await call('POST', '/api/public/companies/members', tenant.headers, { user_id: outsider.userId });
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain('already a member');
    const defaulted = await call('POST', '/api/public/companies/members', tenant.headers, {
      user_id: (await userCreatedBy(tenant)).userId,
    });
    expect(defaulted.body.role).toBe('member');
    const list = await call('GET', '/api/public/companies/members?limit=2', tenant.headers);
    expect(list.body).toMatchObject({ total: 3, skip: 0, limit: 2 });
    expect(list.body.data).toHaveLength(2);
  });

  it('rejects a member that is not a user, an owner role and bad ids', async () => {
    const tenant = await createTenant(t.container);
    const missing = await call('POST', '/api/public/companies/members', tenant.headers, {
      user_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain('User not found');
    expect(
      (
        await call('POST', '/api/public/companies/members', tenant.headers, {
          user_id: (await createUser(t.container, null)).userId,
          role: 'owner',
        })
      ).status,
    ).toBe(400);
    const badRole = await call('POST', '/api/public/companies/members', tenant.headers, {
      user_id: tenant.userId,
      role: 'superuser',
    });
    expect(badRole.body.detail).toBe("Invalid field 'role': must be one of: admin, developer, member");
    expect((await call('POST', '/api/public/companies/members', tenant.headers, { user_id: 'abc' })).body.detail).toBe(
      "Invalid field 'user_id': must be a UUID",
    );
  });

  it('promotes a member to admin (200), adds a non-member as admin (201), refuses an admin twice (409)', async () => {
    const tenant = await createTenant(t.container);
    const dev = await tenant.member('developer');
    const promoted = await call('POST', '/api/public/companies/admins', tenant.headers, { user_id: dev.userId });
    expect(promoted.status).toBe(200);
    expect(promoted.body.role).toBe('admin');
    const outsider = await userCreatedBy(tenant);
    const added = await call('POST', '/api/public/companies/admins', tenant.headers, { user_id: outsider.userId });
    expect(added.status).toBe(201);
    expect(
      (await call('POST', '/api/public/companies/admins', tenant.headers, { user_id: outsider.userId })).status,
    ).toBe(409);
    expect(
      (await call('POST', '/api/public/companies/admins', tenant.headers, { user_id: tenant.userId })).status,
    ).toBe(409);
    const admins = await call('GET', '/api/public/companies/admins', tenant.headers);
    expect(admins.body.data.map((m: { role: string }) => m.role).sort()).toEqual(['admin', 'admin', 'owner']);
  });

  it('removes members; the last owner cannot be removed; a removed user loses access at once', async () => {
    const tenant = await createTenant(t.container);
    const dev = await tenant.member('developer');
    const members = (await call('GET', '/api/public/companies/members', tenant.headers)).body.data as {
      id: string;
      user_id: string;
    }[];
    const devMember = members.find((m) => m.user_id === dev.userId)!;
    const ownerMember = members.find((m) => m.user_id === tenant.userId)!;

    const lastOwner = await call('DELETE', `/api/public/companies/members/${ownerMember.id}`, tenant.headers);
    expect(lastOwner.status).toBe(409);
    expect(lastOwner.body.detail).toBe('The last owner of a company cannot be removed');

    expect((await call('GET', '/api/public/companies/current', dev.headers)).status).toBe(200);
    const removed = await call('DELETE', `/api/public/companies/members/${devMember.id}`, tenant.headers);
    expect(removed.status).toBe(204);
    expect(removed.body).toBeNull();
    const after = await call('GET', '/api/public/companies/current', dev.headers);
    expect(after.status).toBe(403);
    expect(after.body.detail).toContain('No active company');
    expect((await call('DELETE', `/api/public/companies/members/${devMember.id}`, tenant.headers)).status).toBe(404);
  });

  it('moves a removed user to their oldest other company, and leaves another active company alone', async () => {
    const tenant = await createTenant(t.container);
    const elsewhere = await createTenant(t.container);
    const dev = await tenant.member('developer');
    const idle = await elsewhere.member('member');
    await insertMember(t.container.db, { company_id: elsewhere.companyId, user_id: dev.userId, role: 'member' });
    await insertMember(t.container.db, { company_id: tenant.companyId, user_id: idle.userId, role: 'member' });
    const members = (await call('GET', '/api/public/companies/members?limit=100', tenant.headers)).body.data as {
      id: string;
      user_id: string;
    }[];
    for (const user of [dev, idle]) {
      const member = members.find((m) => m.user_id === user.userId)!;
      expect((await call('DELETE', `/api/public/companies/members/${member.id}`, tenant.headers)).status).toBe(204);
    }
    const devNow = await call('GET', '/api/public/companies/current', dev.headers);
    expect(devNow.status).toBe(200);
    expect(devNow.body.id).toBe(elsewhere.companyId);
    const idleNow = await call('GET', '/api/public/companies/current', idle.headers);
    expect(idleNow.body.id).toBe(elsewhere.companyId);
  });

  it('lets anyone leave, but only admins remove others and only owners remove owners', async () => {
    const tenant = await createTenant(t.container);
    const secondOwner = await tenant.member('owner');
    const admin = await tenant.member('admin');
    const member = await tenant.member('member');
    const other = await tenant.member('member');
    const ids = Object.fromEntries(
      (
        (await call('GET', '/api/public/companies/members', tenant.headers)).body.data as {
          id: string;
          user_id: string;
        }[]
      ).map((m) => [m.user_id, m.id]),
    );
    expect((await call('DELETE', `/api/public/companies/members/${ids[other.userId]}`, member.headers)).status).toBe(
      403,
    );
    expect(
      (await call('DELETE', `/api/public/companies/members/${ids[secondOwner.userId]}`, admin.headers)).status,
    ).toBe(403);
    expect((await call('DELETE', `/api/public/companies/members/${ids[member.userId]}`, member.headers)).status).toBe(
      204,
    );
    expect(
      (await call('DELETE', `/api/public/companies/members/${ids[secondOwner.userId]}`, tenant.headers)).status,
    ).toBe(204);
    expect((await call('DELETE', `/api/public/companies/members/${ids[other.userId]}`, admin.headers)).status).toBe(
      204,
    );
  });

  it('two owners removing each other at once leave one owner', async () => {
    const tenant = await createTenant(t.container);
    const second = await tenant.member('owner');
    const ids = Object.fromEntries(
      (
        (await call('GET', '/api/public/companies/members', tenant.headers)).body.data as {
          id: string;
          user_id: string;
        }[]
      ).map((m) => [m.user_id, m.id]),
    );
    const results = await Promise.all([
      call('DELETE', `/api/public/companies/members/${ids[second.userId]}`, tenant.headers),
      call('DELETE', `/api/public/companies/members/${ids[tenant.userId]}`, second.headers),
    ]);
    // One removal wins. The other either met the last-owner check (409) or, when the winner had
    // committed before it was even authorised, came from an owner no longer a member (403): the
    // order is the machine's, the outcome the same.
    const [won, lost] = results[0]!.status === 204 ? [0, 1] : [1, 0];
    expect(results[won]!.status).toBe(204);
    expect([403, 409]).toContain(results[lost]!.status);
    const owners = await t.container.db
      .selectFrom('company_members')
      .select('id')
      .where('company_id', '=', tenant.companyId)
      .where('role', '=', 'owner')
      .execute();
    expect(owners).toHaveLength(1);
  });
});

describe('who can be enrolled', () => {
  const enroll = (tenant: TestTenant, route: 'members' | 'admins', userId: string) =>
    call('POST', `/api/public/companies/${route}`, tenant.headers, { user_id: userId });
  const membersOf = async (companyId: string) =>
    (
      await t.container.db
        .selectFrom('company_members')
        .select(['user_id', 'role'])
        .where('company_id', '=', companyId)
        .orderBy('user_id')
        .execute()
    ).map((row) => `${row.user_id}:${row.role}`);

  for (const route of ['members', 'admins'] as const) {
    it(`answers a user of another company on /${route} exactly like an unknown id (404), without their e-mail`, async () => {
      const tenant = await createTenant(t.container);
      const other = await createTenant(t.container);
      const theirs = await other.member('developer');
      const before = await membersOf(tenant.companyId);
      const foreign = await enroll(tenant, route, theirs.userId);
      const unknownId = '00000000-0000-4000-8000-000000000000';
      const unknown = await enroll(tenant, route, unknownId);
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ detail: `User not found: ${theirs.userId}`, status_code: 404 });
      expect(unknown.body).toEqual({ detail: `User not found: ${unknownId}`, status_code: 404 });
      expect(JSON.stringify(foreign.body)).not.toContain(theirs.email);
      expect(await membersOf(tenant.companyId)).toEqual(before);
    });

    it(`refuses on /${route} a user of no company whom this company did not create`, async () => {
      const tenant = await createTenant(t.container);
      const other = await createTenant(t.container);
      const loner = await createUser(t.container, null);
      expect((await enroll(tenant, route, loner.userId)).status).toBe(404);
      // Created by another company's administrator (POST /users without a role): that company's.
      const created = await call('POST', '/api/public/users', other.headers, { email: uniqueEmail('theirs') });
      expect(created.status).toBe(201);
      expect((await enroll(tenant, route, created.body.user.id)).status).toBe(404);
      expect((await enroll(other, route, created.body.user.id)).status).toBe(201);
    });
  }

  it('lets an admin enroll a user of another company where they are admin or owner, not where they are a member', async () => {
    const tenant = await createTenant(t.container);
    const second = await call('POST', '/api/public/companies', tenant.headers, { name: 'Sister company' });
    expect(second.status).toBe(201);
    const colleague = await createUser(t.container, second.body.id, 'member');
    const added = await enroll(tenant, 'members', colleague.userId);
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ user_id: colleague.userId, user: { email: colleague.email } });

    const elsewhere = await createTenant(t.container);
    await t.container.db
      .insertInto('company_members')
      .values({ company_id: elsewhere.companyId, user_id: tenant.userId, role: 'member' })
      .execute();
    const stranger = await elsewhere.member('developer');
    expect((await enroll(tenant, 'admins', stranger.userId)).status).toBe(404);
    expect((await enroll(tenant, 'members', stranger.userId)).status).toBe(404);
  });
});

describe('roles', () => {
  const adminOps: [string, 'GET' | 'POST' | 'PUT' | 'DELETE', string, unknown?][] = [
    ['update the company', 'PUT', '/api/public/companies', { name: 'x' }],
    ['add a member', 'POST', '/api/public/companies/members', { user_id: '00000000-0000-4000-8000-000000000000' }],
    ['add an admin', 'POST', '/api/public/companies/admins', { user_id: '00000000-0000-4000-8000-000000000000' }],
    ['invite', 'POST', '/api/public/companies/invitations', { email: 'a@b.test' }],
    ['revoke an invitation', 'DELETE', '/api/public/companies/invitations/00000000-0000-4000-8000-000000000000'],
    ['create a user', 'POST', '/api/public/users', { email: 'a@b.test' }],
  ];
  for (const role of ['member', 'developer'] as const) {
    for (const [what, method, url, payload] of adminOps) {
      it(`returns 403 when a ${role} tries to ${what}`, async () => {
        const tenant = await createTenant(t.container);
        const user = await tenant.member(role);
        const res = await call(method, url, user.headers, payload);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({
          detail: `This operation needs the admin role; your role is ${role}`,
          status_code: 403,
        });
      });
    }
  }

  it('lets members read the company, its members, admins and invitations', async () => {
    const tenant = await createTenant(t.container);
    const member = await tenant.member('member');
    for (const url of [
      '/api/public/companies',
      '/api/public/companies/current',
      '/api/public/companies/members',
      '/api/public/companies/admins',
      '/api/public/companies/invitations',
    ]) {
      expect((await call('GET', url, member.headers)).status, url).toBe(200);
    }
  });

  it('returns 403 to chat-token management below developer', async () => {
    const tenant = await createTenant(t.container);
    const member = await tenant.member('member');
    expect((await call('GET', '/api/public/chat-tokens', member.headers)).status).toBe(403);
    expect((await call('POST', '/api/public/chat-tokens', member.headers, {})).status).toBe(403);
    const dev = await tenant.member('developer');
    expect((await call('POST', '/api/public/chat-tokens', dev.headers, { name: 'web' })).status).toBe(201);
  });
});

describe('invitations', () => {
  it('invites by e-mail into the outbox, lists it pending, and the invitee joins with the role', async () => {
    const tenant = await createTenant(t.container);
    const email = uniqueEmail('invitee');
    const created = await call('POST', '/api/public/companies/invitations', tenant.headers, {
      email,
      role: 'developer',
      message: 'Welcome aboard',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email, role: 'developer', message: 'Welcome aboard', status: 'pending' });
    const token: string = created.body.token;
    expect(token).toMatch(/^inv_[\w-]{43}$/);
    const days =
      (new Date(created.body.expires_at).getTime() - new Date(created.body.created_at).getTime()) / 86_400_000;
    expect(days).toBeCloseTo(7, 3);

    const mail = await t.container.db
      .selectFrom('email_outbox')
      .selectAll()
      .where('recipient', '=', email)
      .executeTakeFirstOrThrow();
    expect(mail).toMatchObject({ company_id: tenant.companyId, kind: 'invitation', error: null });
    expect(mail.body_text).toContain(token);

    const pending = await call('GET', '/api/public/companies/invitations', tenant.headers);
    expect(pending.body.total).toBe(1);
    expect(pending.body.data[0].token).toBe(`inv_••••${token.slice(-4)}`);
    expect((await call('POST', '/api/public/companies/invitations', tenant.headers, { email })).status).toBe(409);

    const invitee = await createUser(t.container, null, 'member', email);
    const accepted = await call('POST', '/api/public/companies/invitations/accept', invitee.headers, { token });
    expect(accepted.status).toBe(200);
    expect(accepted.body.company.id).toBe(tenant.companyId);
    expect(accepted.body.member).toMatchObject({ user_id: invitee.userId, role: 'developer' });
    expect((await call('GET', '/api/public/companies/current', invitee.headers)).body.id).toBe(tenant.companyId);
    expect((await call('GET', '/api/public/companies/invitations', tenant.headers)).body.total).toBe(0);

    const reused = await call('POST', '/api/public/companies/invitations/accept', invitee.headers, { token });
    expect(reused.status).toBe(400);
    expect(reused.body.detail).toBe('This invitation has already been used');
    const invitedAgain = await call('POST', '/api/public/companies/invitations', tenant.headers, { email });
    expect(invitedAgain.status).toBe(409);
    expect(invitedAgain.body.detail).toContain('already a member');
  });

  it("refuses unknown, expired, revoked and someone else's tokens with clear details", async () => {
    const tenant = await createTenant(t.container);
    const email = uniqueEmail('late');
    const invitee = await createUser(t.container, null, 'member', email);
    expect(
      (await call('POST', '/api/public/companies/invitations/accept', invitee.headers, { token: 'inv_nope' })).body,
    ).toEqual({ detail: 'Invitation not found', status_code: 404 });
    expect((await call('POST', '/api/public/companies/invitations/accept', invitee.headers, {})).status).toBe(400);

    const expiring = await call('POST', '/api/public/companies/invitations', tenant.headers, { email });
    await t.container.db
      .updateTable('company_invitations')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', expiring.body.id)
      .execute();
    const expired = await call('POST', '/api/public/companies/invitations/accept', invitee.headers, {
      token: expiring.body.token,
    });
    expect(expired.status).toBe(400);
    expect(expired.body.detail).toMatch(/^This invitation expired at /);
    const row = await t.container.db
      .selectFrom('company_invitations')
      .select('status')
      .where('id', '=', expiring.body.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('expired');

    const revocable = await call('POST', '/api/public/companies/invitations', tenant.headers, { email });
    expect(
      (await call('DELETE', `/api/public/companies/invitations/${revocable.body.id}`, tenant.headers)).status,
    ).toBe(204);
    expect(
      (await call('POST', '/api/public/companies/invitations/accept', invitee.headers, { token: revocable.body.token }))
        .body.detail,
    ).toBe('This invitation is revoked');
    expect(
      (await call('DELETE', `/api/public/companies/invitations/${revocable.body.id}`, tenant.headers)).status,
    ).toBe(404);

    const forSomeoneElse = await call('POST', '/api/public/companies/invitations', tenant.headers, {
      email: uniqueEmail('other'),
    });
    const wrongUser = await call('POST', '/api/public/companies/invitations/accept', invitee.headers, {
      token: forSomeoneElse.body.token,
    });
    expect(wrongUser.status).toBe(403);
  });

  it('rejects invalid invitation input', async () => {
    const tenant = await createTenant(t.container);
    expect(
      (await call('POST', '/api/public/companies/invitations', tenant.headers, { email: 'nope' })).body.detail,
    ).toBe("Invalid field 'email': must be an e-mail address");
    expect(
      (await call('POST', '/api/public/companies/invitations', tenant.headers, { email: 'a@b.test', role: 'owner' }))
        .status,
    ).toBe(400);
    expect(
      (
        await call('POST', '/api/public/companies/invitations', tenant.headers, {
          email: 'a@b.test',
          message: 'm'.repeat(2001),
        })
      ).status,
    ).toBe(400);
  });
});

describe('isolation', () => {
  it("never shows or touches another company's members and invitations", async () => {
    const a = await createTenant(t.container);
    const b = await createTenant(t.container);
    const bDev = await b.member('developer');
    const bMembers = (await call('GET', '/api/public/companies/members', b.headers)).body.data as {
      id: string;
      user_id: string;
    }[];
    const bDevMember = bMembers.find((m) => m.user_id === bDev.userId)!;
    expect((await call('DELETE', `/api/public/companies/members/${bDevMember.id}`, a.headers)).status).toBe(404);
    const aMembers = (await call('GET', '/api/public/companies/members', a.headers)).body.data as { user_id: string }[];
    expect(aMembers.map((m) => m.user_id)).toEqual([a.userId]);

    const invitation = await call('POST', '/api/public/companies/invitations', b.headers, { email: uniqueEmail() });
    expect((await call('DELETE', `/api/public/companies/invitations/${invitation.body.id}`, a.headers)).status).toBe(
      404,
    );
    expect((await call('GET', '/api/public/companies/invitations', a.headers)).body.total).toBe(0);
    expect((await call('GET', '/api/public/companies', a.headers)).body.data.map((c: { id: string }) => c.id)).toEqual([
      a.companyId,
    ]);

    const token = await call('POST', '/api/public/chat-tokens', b.headers, {});
    expect((await call('DELETE', `/api/public/chat-tokens/${token.body.id}`, a.headers)).status).toBe(404);
  });
});

describe('company record cache', () => {
  it('shows an update at once on this instance and as soon as the notification lands on another', async () => {
    const other = await createTestApp();
    try {
      const tenant = await createTenant(t.container);
      const read = async (app: TestApp) =>
        (
          await app.app.inject({ method: 'GET', url: '/api/public/companies/current', headers: tenant.headers })
        ).json() as { industry: string | null };
      expect((await read(t)).industry).toBeNull();
      expect((await read(other)).industry).toBeNull();
      expect((await call('PUT', '/api/public/companies', tenant.headers, { industry: 'logistics' })).status).toBe(200);
      expect((await read(t)).industry).toBe('logistics');
      const deadline = Date.now() + 2000;
      let seen = (await read(other)).industry;
      while (seen !== 'logistics' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen = (await read(other)).industry;
      }
      expect(seen).toBe('logistics');
    } finally {
      await other.close();
    }
  });

  it('is not used when CACHE_TTL_MS is 0', async () => {
    const uncached = await createTestApp({ CACHE_TTL_MS: '0' });
    try {
      const tenant = await createTenant(uncached.container);
      const first = await uncached.app.inject({
        method: 'GET',
        url: '/api/public/companies/current',
        headers: tenant.headers,
      });
      await uncached.container.db
        .updateTable('companies')
        .set({ name: 'Renamed outside the API' })
        .where('id', '=', tenant.companyId)
        .execute();
      const second = await uncached.app.inject({
        method: 'GET',
        url: '/api/public/companies/current',
        headers: tenant.headers,
      });
      expect(first.json().name).not.toBe('Renamed outside the API');
      expect(second.json().name).toBe('Renamed outside the API');
    } finally {
      await uncached.close();
    }
  });
});
