import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotifyInput } from '../src/modules/team-notifications/team-notifications.notifier.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, createUser, type TestTenant, type TestUser } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

async function request(
  who: { headers: Record<string, string> } | null,
  method: 'GET' | 'PATCH',
  url: string,
  payload?: unknown,
) {
  const response = await t.app.inject({
    method,
    url,
    headers: who?.headers ?? {},
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

async function notify(companyId: string, input: Partial<NotifyInput> = {}) {
  return t.container.db.transaction().execute((trx) =>
    t.container.notifications.notify(trx, {
      companyId,
      notificationType: 'agent_action',
      category: 'agent',
      title: 'Agent looked up an order',
      message: 'Order 1234 is on its way',
      ...input,
    }),
  );
}

describe('notify', () => {
  it('delivers to every member at creation time, not to later members', async () => {
    const tenant = await createTenant(t.container);
    const member = await tenant.member('member');
    const { id } = await notify(tenant.companyId, {
      senderId: tenant.userId,
      priority: 'high',
      metadata: { agent_id: randomUUID(), execution_time: '1.2s' },
    });
    const late = await tenant.member('member');
    const { status, body } = await request(tenant, 'GET', `/team-notifications/${id}`);
    expect(status).toBe(200);
    expect(body.recipients.map((r: { user_id: string }) => r.user_id).sort()).toEqual(
      [tenant.userId, member.userId].sort(),
    );
    expect(
      body.recipients.every((r: { status: string; read_at: null }) => r.status === 'unread' && r.read_at === null),
    ).toBe(true);
    expect(body.sender).toMatchObject({ id: tenant.userId, email: tenant.email });
    expect(body).toMatchObject({
      notification_type: 'agent_action',
      category: 'agent',
      priority: 'high',
      status: 'unread',
      company_id: tenant.companyId,
    });
    expect(body.metadata.execution_time).toBe('1.2s');
    const lateView = await request(late, 'GET', `/team-notifications/users/${late.userId}`);
    expect(lateView.body.total).toBe(0);
  });

  it('renders a null sender for agent and platform notifications', async () => {
    const tenant = await createTenant(t.container);
    const { id } = await notify(tenant.companyId);
    const { body } = await request(tenant, 'GET', `/team-notifications/${id}`);
    expect(body.sender_id).toBeNull();
    expect(body.sender).toBeNull();
  });
});

describe('GET /team-notifications', () => {
  let tenant: TestTenant;
  let admin: TestUser;
  const agentId = randomUUID();
  const queryId = randomUUID();
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    tenant = await createTenant(t.container);
    admin = await tenant.member('admin');
    ids.email = (
      await notify(tenant.companyId, {
        notificationType: 'email_sent',
        priority: 'low',
        metadata: { agent_id: agentId, query_id: queryId, recipient_email: 'c@x.test' },
        createdAt: new Date('2025-05-01T10:00:00Z'),
      })
    ).id;
    ids.tool = (
      await notify(tenant.companyId, {
        notificationType: 'tool_usage',
        priority: 'urgent',
        metadata: { agent_id: agentId, tool_used: 'crm_lookup' },
        createdAt: new Date('2025-05-02T10:00:00Z'),
      })
    ).id;
    ids.system = (
      await notify(tenant.companyId, {
        notificationType: 'system',
        category: 'deployment',
        senderId: admin.userId,
        createdAt: new Date('2025-05-03T10:00:00Z'),
      })
    ).id;
    ids.expired = (
      await notify(tenant.companyId, {
        notificationType: 'system',
        category: 'system',
        expiresAt: new Date(Date.now() - 60_000),
        createdAt: new Date('2025-05-04T10:00:00Z'),
      })
    ).id;
    ids.future = (
      await notify(tenant.companyId, {
        notificationType: 'system',
        category: 'security',
        expiresAt: new Date(Date.now() + 3_600_000),
        createdAt: new Date('2025-05-05T10:00:00Z'),
      })
    ).id;
    await request(tenant, 'PATCH', `/team-notifications/${ids.tool}/users/${tenant.userId}/status`, { status: 'read' });
  });

  const listIds = async (query: string) => {
    const { status, body } = await request(tenant, 'GET', `/team-notifications${query}`);
    expect(status).toBe(200);
    expect(body.total).toBe(body.data.length);
    return body.data.map((n: { id: string }) => n.id);
  };

  it('lists newest first and leaves out expired notifications unless asked', async () => {
    expect(await listIds('')).toEqual([ids.future, ids.system, ids.tool, ids.email]);
    expect(await listIds('?include_expired=true')).toEqual([ids.future, ids.expired, ids.system, ids.tool, ids.email]);
  });

  it.each([
    ['?notification_type=email_sent', ['email']],
    ['?notification_type=system', ['future', 'system']],
    ['?priority=urgent', ['tool']],
    ['?status=read', ['tool']],
    ['?status=unread', ['future', 'system', 'email']],
    ['?status=archived', []],
    ['?start_date=2025-05-02&end_date=2025-05-03', ['system', 'tool']],
    ['?end_date=2025-05-02T10:00:00.000Z', ['tool', 'email']],
    ['?start_date=2025-05-02T10:00:00.001Z', ['future', 'system']],
  ])('filters %s', async (query, names) => {
    expect(await listIds(query)).toEqual(names.map((name) => ids[name]));
  });

  it('filters by agent_id, query_id and sender_id', async () => {
    expect(await listIds(`?agent_id=${agentId}`)).toEqual([ids.tool, ids.email]);
    expect(await listIds(`?query_id=${queryId}`)).toEqual([ids.email]);
    expect(await listIds(`?sender_id=${admin.userId}`)).toEqual([ids.system]);
    expect(await listIds(`?agent_id=${randomUUID()}`)).toEqual([]);
  });

  it('pages', async () => {
    const { body } = await request(tenant, 'GET', '/team-notifications?skip=1&limit=2');
    expect(body).toMatchObject({ total: 4, skip: 1, limit: 2 });
    expect(body.data.map((n: { id: string }) => n.id)).toEqual([ids.system, ids.tool]);
  });

  it.each([
    ['notification_type=sms', 'notification_type'],
    ['priority=critical', 'priority'],
    ['status=deleted', 'status'],
    ['agent_id=abc', 'agent_id'],
    ['query_id=1', 'query_id'],
    ['sender_id=x', 'sender_id'],
    ['start_date=05/01/2025', 'start_date'],
    ['end_date=tomorrow', 'end_date'],
    ['limit=101', 'limit'],
    ['skip=-5', 'skip'],
    ['include_expired=sometimes', 'include_expired'],
    ['start_date=2025-05-03&end_date=2025-05-01', 'start_date'],
  ])('rejects %s naming %s', async (query, parameter) => {
    const { status, body } = await request(tenant, 'GET', `/team-notifications?${query}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: 'ValidationError', statusCode: 400, path: '/team-notifications' });
    expect(body.message).toContain(parameter);
  });

  it('keeps companies apart', async () => {
    const other = await createTenant(t.container);
    expect((await request(other, 'GET', '/team-notifications')).body.total).toBe(0);
    const foreign = await request(other, 'GET', `/team-notifications/${ids.email}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.message).toContain('Notification not found');
    expect(
      (
        await request(other, 'PATCH', `/team-notifications/${ids.email}/users/${other.userId}/status`, {
          status: 'read',
        })
      ).status,
    ).toBe(404);
    expect((await request(null, 'GET', '/team-notifications')).status).toBe(401);
  });
});

describe('per-user status', () => {
  it('lets a member read and move only their own status; admins any; outsiders are 404', async () => {
    const tenant = await createTenant(t.container);
    const member = await tenant.member('member');
    const admin = await tenant.member('admin');
    const outsider = await createUser(t.container, null);
    const { id } = await notify(tenant.companyId);
    const other = await notify(tenant.companyId, { notificationType: 'api_call', priority: 'low' });

    const own = await request(member, 'PATCH', `/team-notifications/${id}/users/${member.userId}/status`, {
      status: 'read',
    });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({
      notification_id: id,
      user_id: member.userId,
      status: 'read',
      user: { id: member.userId, email: member.email },
    });
    const readAt = own.body.read_at;
    expect(new Date(readAt).toISOString()).toBe(readAt);
    const archived = await request(member, 'PATCH', `/team-notifications/${id}/users/${member.userId}/status`, {
      status: 'archived',
    });
    expect(archived.body).toMatchObject({ status: 'archived', read_at: readAt });
    const unread = await request(member, 'PATCH', `/team-notifications/${id}/users/${member.userId}/status`, {
      status: 'unread',
    });
    expect(unread.body).toMatchObject({ status: 'unread', read_at: null });

    const forbidden = await request(member, 'PATCH', `/team-notifications/${id}/users/${tenant.userId}/status`, {
      status: 'read',
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('Forbidden');
    expect((await request(member, 'GET', `/team-notifications/users/${tenant.userId}`)).status).toBe(403);
    expect((await request(member, 'GET', `/team-notifications/stats?user_id=${tenant.userId}`)).status).toBe(403);

    const byAdmin = await request(admin, 'PATCH', `/team-notifications/${id}/users/${member.userId}/status`, {
      status: 'read',
    });
    expect(byAdmin.status).toBe(200);
    expect((await request(admin, 'GET', `/team-notifications/users/${member.userId}`)).status).toBe(200);

    expect(
      (await request(admin, 'PATCH', `/team-notifications/${id}/users/${outsider.userId}/status`, { status: 'read' }))
        .status,
    ).toBe(404);
    expect((await request(member, 'GET', `/team-notifications/users/${outsider.userId}`)).status).toBe(404);
    expect(
      (
        await request(admin, 'PATCH', `/team-notifications/${randomUUID()}/users/${member.userId}/status`, {
          status: 'read',
        })
      ).status,
    ).toBe(404);

    // The member's own view: their status, filters.
    const view = await request(member, 'GET', `/team-notifications/users/${member.userId}`);
    expect(view.body.data.map((n: { id: string; status: string }) => [n.id, n.status])).toEqual([
      [other.id, 'unread'],
      [id, 'read'],
    ]);
    const readOnly = await request(member, 'GET', `/team-notifications/users/${member.userId}?status=read`);
    expect(readOnly.body.data.map((n: { id: string }) => n.id)).toEqual([id]);
    const lowOnly = await request(
      member,
      'GET',
      `/team-notifications/users/${member.userId}?priority=low&notification_type=api_call`,
    );
    expect(lowOnly.body.data.map((n: { id: string }) => n.id)).toEqual([other.id]);
    // The owner has not read it: the member's PATCH moved only the member's row.
    const ownerView = await request(tenant, 'GET', `/team-notifications/${id}`);
    expect(ownerView.body.status).toBe('unread');
  });

  it.each([
    [{ status: 'seen' }, 'status'],
    [{}, 'status'],
    [{ status: 1 }, 'status'],
  ])('rejects the body %j', async (payload, field) => {
    const tenant = await createTenant(t.container);
    const { id } = await notify(tenant.companyId);
    const { status, body } = await request(
      tenant,
      'PATCH',
      `/team-notifications/${id}/users/${tenant.userId}/status`,
      payload,
    );
    expect(status).toBe(400);
    expect(body.error).toBe('ValidationError');
    expect(body.message).toContain(field);
  });
});

describe('GET /team-notifications/stats', () => {
  it("counts categories, priorities and the viewer's statuses", async () => {
    const tenant = await createTenant(t.container);
    const member = await tenant.member('member');
    const specs: Partial<NotifyInput>[] = [
      { notificationType: 'email_sent', category: 'agent', priority: 'low' },
      { notificationType: 'tool_usage', category: 'agent', priority: 'high' },
      { notificationType: 'system', category: 'deployment', priority: 'medium' },
      { notificationType: 'system', category: 'security', priority: 'urgent' },
      { notificationType: 'system', category: 'billing', priority: 'medium' },
      { notificationType: 'system', category: 'user', priority: 'low', expiresAt: new Date(Date.now() - 1000) },
    ];
    const created = [];
    for (const spec of specs) created.push((await notify(tenant.companyId, spec)).id);
    await request(member, 'PATCH', `/team-notifications/${created[0]}/users/${member.userId}/status`, {
      status: 'read',
    });
    await request(member, 'PATCH', `/team-notifications/${created[1]}/users/${member.userId}/status`, {
      status: 'archived',
    });

    const live = specs.filter((spec) => !spec.expiresAt);
    const count = (key: 'category' | 'priority', value: string) => live.filter((spec) => spec[key] === value).length;
    const mine = await request(member, 'GET', '/team-notifications/stats');
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({
      total_notifications: 5,
      unread_count: 3,
      read_count: 1,
      archived_count: 1,
      by_type: Object.fromEntries(
        ['system', 'user', 'agent', 'deployment', 'billing', 'security'].map((c) => [c, count('category', c)]),
      ),
      by_priority: Object.fromEntries(['low', 'medium', 'high', 'urgent'].map((p) => [p, count('priority', p)])),
    });
    const owner = await request(tenant, 'GET', `/team-notifications/stats?user_id=${tenant.userId}`);
    expect(owner.body).toMatchObject({ total_notifications: 5, unread_count: 5, read_count: 0, archived_count: 0 });
    const asAdmin = await request(
      tenant,
      'GET',
      `/team-notifications/stats?user_id=${member.userId}&include_expired=true`,
    );
    expect(asAdmin.body).toMatchObject({ total_notifications: 6, unread_count: 4, read_count: 1, archived_count: 1 });
    expect(asAdmin.body.by_type.user).toBe(1);
    const empty = await request(tenant, 'GET', '/team-notifications/stats?start_date=2000-01-01&end_date=2000-01-02');
    expect(empty.body).toMatchObject({
      total_notifications: 0,
      unread_count: 0,
      by_type: { agent: 0 },
      by_priority: { urgent: 0 },
    });
    for (const [query, parameter] of [
      ['user_id=nope', 'user_id'],
      ['start_date=x', 'start_date'],
      ['start_date=2001-01-01&end_date=2000-01-01', 'start_date'],
    ]) {
      const bad = await request(tenant, 'GET', `/team-notifications/stats?${query}`);
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain(parameter);
    }
    const other = await createTenant(t.container);
    expect((await request(other, 'GET', '/team-notifications/stats')).body.total_notifications).toBe(0);
    expect((await request(tenant, 'GET', `/team-notifications/stats?user_id=${other.userId}`)).status).toBe(404);
  });
});

describe('rate limits of the insights families', () => {
  it('share a per-minute burst across both families and answer 429 in the family shape', async () => {
    const limited = await createTestApp({ RATE_LIMIT_INSIGHTS_PER_MINUTE: '3', RATE_LIMIT_INSIGHTS_PER_HOUR: '1000' });
    try {
      const tenant = await createTenant(limited.container);
      const statuses = [];
      for (const url of [
        '/customer-support',
        '/team-notifications',
        '/customer-support/stats',
        '/team-notifications/stats',
      ]) {
        const response = await limited.app.inject({ method: 'GET', url, headers: tenant.headers });
        statuses.push(response.statusCode);
        if (response.statusCode === 429) {
          expect(response.json()).toMatchObject({
            error: 'TooManyRequests',
            statusCode: 429,
            path: '/team-notifications/stats',
          });
          expect(response.json().message).toContain('minute');
          expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
          expect(response.headers['ratelimit-limit']).toBe('3');
        }
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      const otherKey = await tenant.member('member');
      expect(
        (await limited.app.inject({ method: 'GET', url: '/customer-support', headers: otherKey.headers })).statusCode,
      ).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('enforces the hourly quota too', async () => {
    const limited = await createTestApp({ RATE_LIMIT_INSIGHTS_PER_MINUTE: '100', RATE_LIMIT_INSIGHTS_PER_HOUR: '2' });
    try {
      const tenant = await createTenant(limited.container);
      const codes = [];
      for (let i = 0; i < 3; i++)
        codes.push(
          (await limited.app.inject({ method: 'GET', url: '/team-notifications', headers: tenant.headers })).statusCode,
        );
      expect(codes).toEqual([200, 200, 429]);
      const last = await limited.app.inject({ method: 'GET', url: '/customer-support', headers: tenant.headers });
      expect(last.json().message).toContain('hour');
    } finally {
      await limited.close();
    }
  });
});
