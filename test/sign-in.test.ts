/**
 * People signing in: invitation acceptance with a password, the password policy, e-mail +
 * password sign-in and its lock-out, cookie flags, CSRF on cookie-authenticated writes, session
 * expiry (absolute and idle), sign-out here and everywhere, password reset links (single-use,
 * expiring), and a session never reaching another company's data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, uniqueEmail, type TestTenant } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ SIGN_IN_LOCK_AFTER: '3', SIGN_IN_LOCK_SECONDS: '600', SIGN_IN_PER_MINUTE: '100000' });
});
afterAll(async () => t.close());

const PASSWORD = 'violet tram under the bridge';

async function call(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  headers: Record<string, string> = {},
  payload?: unknown,
) {
  const res = await t.app.inject({
    method,
    url,
    headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  return { status: res.statusCode, body: res.body ? res.json() : null, headers: res.headers };
}
type Answer = Awaited<ReturnType<typeof call>>;

/** The cookie header a browser would send back after `answer` set it. */
function cookieOf(answer: Answer): string {
  const setCookie = String(answer.headers['set-cookie'] ?? '');
  const pair = setCookie.split(';')[0] ?? '';
  expect(pair).toMatch(/^(__Host-)?sb_session=ss_/);
  return pair;
}

/** Invites `email` into the tenant's company and returns the invitation token. */
async function invite(tenant: TestTenant, email: string, role = 'developer'): Promise<string> {
  const invited = await call('POST', '/api/public/companies/invitations', tenant.headers, { email, role });
  expect(invited.status).toBe(201);
  return invited.body.token as string;
}

/** A person who accepted an invitation with PASSWORD: their cookie and CSRF token. */
async function person(tenant: TestTenant, role = 'developer') {
  const email = uniqueEmail('person');
  const token = await invite(tenant, email, role);
  const accepted = await call('POST', '/api/public/auth/invitations/accept', {}, { token, password: PASSWORD });
  expect(accepted.status).toBe(201);
  const cookie = cookieOf(accepted);
  const csrf = accepted.body.csrf_token as string;
  return { email, cookie, csrf, userId: accepted.body.user.id as string, session: { cookie, 'x-csrf-token': csrf } };
}

async function latestMailTo(email: string) {
  return t.container.db
    .selectFrom('email_outbox')
    .select(['body_text', 'kind'])
    .where('recipient', '=', email)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}

describe('accepting an invitation with a password', () => {
  it('creates the account, joins the company with the invited role and signs in with a safe cookie', async () => {
    const tenant = await createTenant(t.container);
    const email = uniqueEmail('Invited');
    const token = await invite(tenant, email, 'developer');
    const accepted = await call(
      'POST',
      '/api/public/auth/invitations/accept',
      {},
      { token, password: PASSWORD, first_name: 'Noor', last_name: 'Haddad' },
    );
    expect(accepted.status).toBe(201);
    expect(accepted.body).toMatchObject({ user: { email: email.toLowerCase(), first_name: 'Noor' } });
    expect(accepted.body.csrf_token).toMatch(/^[\w-]{43}$/);
    const setCookie = String(accepted.headers['set-cookie']);
    expect(setCookie).toMatch(/^sb_session=ss_[\w-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    expect(setCookie).not.toContain('Secure');

    const me = await call('GET', '/api/public/users/me', { cookie: cookieOf(accepted) });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      email: email.toLowerCase(),
      role: 'developer',
      active_company_id: tenant.companyId,
    });

    // The token of a session is stored only as a hash.
    const stored = await t.container.db.selectFrom('user_sessions').select('id_hash').execute();
    expect(JSON.stringify(stored)).not.toContain(cookieOf(accepted).split('=')[1]!);
    const hash = await t.container.db
      .selectFrom('user_passwords')
      .select('password_hash')
      .where('user_id', '=', accepted.body.user.id)
      .executeTakeFirstOrThrow();
    expect(hash.password_hash).toMatch(/^\$scrypt\$ln=15,r=8,p=3\$/);

    const again = await call('POST', '/api/public/auth/invitations/accept', {}, { token, password: PASSWORD });
    expect(again.status).toBe(400);
    expect(again.body.detail).toBe('This invitation has already been used');
  });

  it('refuses weak, common, too long or e-mail-based passwords and keeps the invitation pending', async () => {
    const tenant = await createTenant(t.container);
    // The local part ends in a letter: were its random part all digits, the e-mail-based password
    // below would strip to the bare word "careful", a common password, and be refused as that.
    const email = uniqueEmail('careful').replace('@', 'x@');
    const token = await invite(tenant, email);
    const tries: [string, string][] = [
      ['short pass', 'at least 12 characters'],
      ['x'.repeat(129), 'at most 128 characters'],
      ['passwordpassword', 'most common'],
      ['Password1234!', 'most common'],
      ['aaaaaaaaaaaaaaaa', 'repeats too few characters'],
      [`${email.split('@')[0]}-2026!`, 'must not contain your e-mail'],
    ];
    for (const [password, problem] of tries) {
      const refused = await call('POST', '/api/public/auth/invitations/accept', {}, { token, password });
      expect(refused.status, password).toBe(400);
      expect(refused.body.detail).toContain(problem);
      expect(refused.headers['set-cookie']).toBeUndefined();
    }
    const pending = await call('GET', '/api/public/companies/invitations', tenant.headers);
    expect(pending.body.data).toEqual([expect.objectContaining({ email: email.toLowerCase(), status: 'pending' })]);
    expect((await call('POST', '/api/public/auth/sign-in', {}, { email, password: 'short pass' })).status).toBe(401);
  });

  it('refuses unknown fields, wrong types, NUL bytes, unknown and expired tokens', async () => {
    const url = '/api/public/auth/invitations/accept';
    const extra = await call('POST', url, {}, { token: 'inv_x', password: PASSWORD, role: 'owner' });
    expect(extra.status).toBe(400);
    expect(extra.body.detail).toContain('role');
    expect((await call('POST', url, {}, { token: 5, password: PASSWORD })).status).toBe(400);
    expect((await call('POST', url, {}, { token: 'inv_\u0000', password: PASSWORD })).status).toBe(400);
    const unknown = await call('POST', url, {}, { token: 'inv_unknown', password: PASSWORD });
    expect(unknown).toMatchObject({ status: 404, body: { detail: 'Invitation not found', status_code: 404 } });

    const tenant = await createTenant(t.container);
    const token = await invite(tenant, uniqueEmail('late'));
    await t.container.db
      .updateTable('company_invitations')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('company_id', '=', tenant.companyId)
      .execute();
    const late = await call('POST', url, {}, { token, password: PASSWORD });
    expect(late.status).toBe(400);
    expect(late.body.detail).toMatch(/^This invitation expired at /);
  });

  it('an account that already has a password signs in and accepts with the session instead', async () => {
    const first = await createTenant(t.container);
    const member = await person(first);
    const second = await createTenant(t.container);
    const token = await invite(second, member.email, 'member');
    const conflict = await call('POST', '/api/public/auth/invitations/accept', {}, { token, password: PASSWORD });
    expect(conflict.status).toBe(409);
    const accepted = await call('POST', '/api/public/companies/invitations/accept', member.session, { token });
    expect(accepted.status).toBe(200);
    expect(accepted.body.company.id).toBe(second.companyId);
  });
});

describe('signing in', () => {
  it('answers a wrong password and an unknown e-mail alike, and signs in with the right one', async () => {
    const tenant = await createTenant(t.container);
    const { email } = await person(tenant);
    const wrong = await call('POST', '/api/public/auth/sign-in', {}, { email, password: 'not the password at all' });
    const unknown = await call('POST', '/api/public/auth/sign-in', {}, { email: uniqueEmail(), password: PASSWORD });
    expect(wrong).toMatchObject({ status: 401, body: { detail: 'E-mail or password is wrong' } });
    expect(unknown.body).toEqual(wrong.body);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const right = await call(
      'POST',
      '/api/public/auth/sign-in',
      {},
      { email: email.toUpperCase(), password: PASSWORD },
    );
    expect(right.status).toBe(200);
    const me = await call('GET', '/api/public/users/me', { cookie: cookieOf(right) });
    expect(me.body.email).toBe(email.toLowerCase());
  });

  it('locks the account after repeated failures, even against the right password, until the lock ends', async () => {
    const tenant = await createTenant(t.container);
    const { email, userId } = await person(tenant);
    for (let i = 0; i < 3; i++) {
      const failed = await call('POST', '/api/public/auth/sign-in', {}, { email, password: `wrong guess ${i}!!` });
      expect(failed.status).toBe(401);
    }
    const locked = await call('POST', '/api/public/auth/sign-in', {}, { email, password: PASSWORD });
    expect(locked.status).toBe(429);
    expect(locked.body.detail).toMatch(/locked for \d+ s/);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(500);
    expect(locked.headers['set-cookie']).toBeUndefined();

    // The lock runs out: the right password works again and the count starts over.
    await t.container.db
      .updateTable('user_passwords')
      .set({ locked_until: new Date(Date.now() - 1000) })
      .where('user_id', '=', userId)
      .execute();
    expect((await call('POST', '/api/public/auth/sign-in', {}, { email, password: PASSWORD })).status).toBe(200);
    const row = await t.container.db
      .selectFrom('user_passwords')
      .select(['failed_attempts', 'locked_until'])
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ failed_attempts: 0, locked_until: null });
  });

  it('sets a Secure __Host- cookie over HTTPS', async () => {
    const tenant = await createTenant(t.container);
    const { email } = await person(tenant);
    const signedIn = await call(
      'POST',
      '/api/public/auth/sign-in',
      { 'x-forwarded-proto': 'https' },
      { email, password: PASSWORD },
    );
    expect(String(signedIn.headers['set-cookie'])).toMatch(
      /^__Host-sb_session=ss_[\w-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/,
    );
    expect((await call('GET', '/api/public/users/me', { cookie: cookieOf(signedIn) })).status).toBe(200);
  });

  it('refuses a sign-in posted from another site (login forgery)', async () => {
    const refused = await call(
      'POST',
      '/api/public/auth/sign-in',
      { origin: 'https://evil.example' },
      { email: uniqueEmail(), password: PASSWORD },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('Cross-origin request refused');
  });
});

describe('CSRF and the session as a credential', () => {
  it('a cookie-authenticated write needs the CSRF token and a same-site Origin; API keys need neither', async () => {
    const tenant = await createTenant(t.container);
    const dev = await person(tenant, 'developer');
    const body = { title: 'Front desk' };
    const none = await call('POST', '/api/public/agents', { cookie: dev.cookie }, body);
    expect(none.status).toBe(403);
    expect(none.body.detail).toContain('Missing x-csrf-token');
    const wrong = await call(
      'POST',
      '/api/public/agents',
      { cookie: dev.cookie, 'x-csrf-token': 'x'.repeat(43) },
      body,
    );
    expect(wrong.status).toBe(403);
    expect(wrong.body.detail).toContain('does not belong to this session');
    const foreign = await call('POST', '/api/public/agents', { ...dev.session, origin: 'https://evil.example' }, body);
    expect(foreign.status).toBe(403);
    const agents = await call('GET', '/api/public/agents', tenant.headers);
    expect(agents.body.total ?? agents.body.data?.length ?? 0).toBe(0);

    const created = await call('POST', '/api/public/agents', { ...dev.session, origin: 'http://localhost:8080' }, body);
    expect(created.status).toBe(201);
    expect((await call('POST', '/api/public/agents', tenant.headers, { title: 'By key' })).status).toBe(201);
    // Reads need no token; the insights family takes the session too.
    expect((await call('GET', '/api/public/agents', { cookie: dev.cookie })).status).toBe(200);
    expect((await call('GET', '/customer-support/dashboard', { cookie: dev.cookie })).status).toBe(200);
  });

  it('GET /auth/session gives the CSRF token back after a reload; an API key has no session', async () => {
    const tenant = await createTenant(t.container);
    const dev = await person(tenant);
    const session = await call('GET', '/api/public/auth/session', { cookie: dev.cookie });
    expect(session.status).toBe(200);
    expect(session.body.csrf_token).toBe(dev.csrf);
    expect((await call('GET', '/api/public/auth/session', tenant.headers)).status).toBe(400);
    expect((await call('GET', '/api/public/auth/session')).status).toBe(401);
  });

  it('a session of one company never reads or changes another company’s data', async () => {
    const mine = await createTenant(t.container);
    const theirs = await createTenant(t.container);
    const agent = await call('POST', '/api/public/agents', theirs.headers, { title: 'Theirs' });
    const me = await person(mine, 'admin');
    expect((await call('GET', `/api/public/agents/${agent.body.id}`, { cookie: me.cookie })).status).toBe(404);
    expect((await call('DELETE', `/api/public/agents/${agent.body.id}`, me.session)).status).toBe(404);
    const list = await call('GET', '/api/public/agents', { cookie: me.cookie });
    expect(list.body.data).toEqual([]);
    const current = await call('GET', '/api/public/companies/current', { cookie: me.cookie });
    expect(current.body.id).toBe(mine.companyId);
    const switched = await call('POST', `/api/public/companies/switch/${theirs.companyId}`, me.session);
    expect(switched.status).toBe(404);
  });
});

describe('session end', () => {
  it('a session past its absolute end or left idle too long is refused', async () => {
    const tenant = await createTenant(t.container);
    const a = await person(tenant);
    const b = await person(tenant);
    await t.container.db
      .updateTable('user_sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', a.userId)
      .execute();
    await t.container.db
      .updateTable('user_sessions')
      .set({ last_seen_at: new Date(Date.now() - 13 * 3_600_000) })
      .where('user_id', '=', b.userId)
      .execute();
    for (const who of [a, b]) {
      const refused = await call('GET', '/api/public/users/me', { cookie: who.cookie });
      expect(refused).toMatchObject({ status: 401, body: { detail: 'Your session has ended: sign in again' } });
    }
  });

  it('sign-out ends this session; sign-out everywhere ends all, and API keys keep working', async () => {
    const tenant = await createTenant(t.container);
    const one = await person(tenant);
    const two = await call('POST', '/api/public/auth/sign-in', {}, { email: one.email, password: PASSWORD });
    const twoSession = { cookie: cookieOf(two), 'x-csrf-token': two.body.csrf_token as string };
    const three = await call('POST', '/api/public/auth/sign-in', {}, { email: one.email, password: PASSWORD });

    expect((await call('POST', '/api/public/auth/sign-out', { cookie: one.cookie })).status).toBe(403);
    const out = await call('POST', '/api/public/auth/sign-out', one.session);
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await call('GET', '/api/public/users/me', { cookie: one.cookie })).status).toBe(401);
    expect((await call('GET', '/api/public/users/me', { cookie: twoSession.cookie })).status).toBe(200);

    const everywhere = await call('POST', '/api/public/auth/sign-out-everywhere', twoSession);
    expect(everywhere).toMatchObject({ status: 200, body: { revoked: 2 } });
    expect((await call('GET', '/api/public/users/me', { cookie: twoSession.cookie })).status).toBe(401);
    expect((await call('GET', '/api/public/users/me', { cookie: cookieOf(three) })).status).toBe(401);
    expect((await call('GET', '/api/public/users/me', tenant.headers)).status).toBe(200);
    const byKey = await call('POST', '/api/public/auth/sign-out', tenant.headers);
    expect(byKey.status).toBe(400);
  });
});

describe('password reset by e-mail', () => {
  it('mails a single-use link that sets the password, signs in and ends the other sessions', async () => {
    const tenant = await createTenant(t.container);
    const p = await person(tenant);
    const asked = await call('POST', '/api/public/auth/password-reset', {}, { email: p.email });
    expect(asked.status).toBe(202);
    const mail = await latestMailTo(p.email.toLowerCase());
    expect(mail?.kind).toBe('password_reset');
    const token = decodeURIComponent(/#\/set-password\?token=(\S+)/.exec(mail!.body_text)![1]!);
    expect(token).toMatch(/^pw_/);
    const stored = await t.container.db.selectFrom('password_links').select('token_hash').execute();
    expect(JSON.stringify(stored)).not.toContain(token);

    const weak = await call('POST', '/api/public/auth/password', {}, { token, password: 'qwertyuiop12' });
    expect(weak.status).toBe(400);
    const newPassword = 'another quiet morning by the sea';
    const reset = await call('POST', '/api/public/auth/password', {}, { token, password: newPassword });
    expect(reset.status).toBe(200);
    expect((await call('GET', '/api/public/users/me', { cookie: cookieOf(reset) })).status).toBe(200);
    expect((await call('GET', '/api/public/users/me', { cookie: p.cookie })).status).toBe(401);

    const reused = await call(
      'POST',
      '/api/public/auth/password',
      {},
      { token, password: 'yet another long passphrase' },
    );
    expect(reused).toMatchObject({
      status: 410,
      body: { detail: 'This link has already been used: ask for a new one' },
    });
    expect((await call('POST', '/api/public/auth/sign-in', {}, { email: p.email, password: PASSWORD })).status).toBe(
      401,
    );
    expect((await call('POST', '/api/public/auth/sign-in', {}, { email: p.email, password: newPassword })).status).toBe(
      200,
    );
  });

  it('an expired link is refused; an unknown e-mail is answered alike and sends nothing', async () => {
    const tenant = await createTenant(t.container);
    const p = await person(tenant);
    await call('POST', '/api/public/auth/password-reset', {}, { email: p.email });
    const mail = await latestMailTo(p.email.toLowerCase());
    const token = decodeURIComponent(/#\/set-password\?token=(\S+)/.exec(mail!.body_text)![1]!);
    await t.container.db
      .updateTable('password_links')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('user_id', '=', p.userId)
      .execute();
    const late = await call('POST', '/api/public/auth/password', {}, { token, password: 'a fresh long passphrase' });
    expect(late.status).toBe(410);
    expect(late.body.detail).toMatch(/^This link expired at /);
    expect((await call('POST', '/api/public/auth/password', {}, { token: 'pw_nope', password: PASSWORD })).status).toBe(
      404,
    );

    const nobody = uniqueEmail('nobody');
    const asked = await call('POST', '/api/public/auth/password-reset', {}, { email: nobody });
    expect(asked.status).toBe(202);
    expect(await latestMailTo(nobody)).toBeUndefined();
    expect((await call('POST', '/api/public/auth/password-reset', {}, { email: 'not-an-email' })).status).toBe(400);
  });
});
