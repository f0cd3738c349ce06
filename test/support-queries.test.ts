import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { createAgent, createEndUser, insertQuery, type SeededQuery } from './helpers/support-data.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: 'error' });
});
afterAll(async () => {
  await t.close();
});

async function get(tenant: TestTenant | null, url: string) {
  const response = await t.app.inject({ method: 'GET', url, headers: tenant?.headers ?? {} });
  return { status: response.statusCode, body: response.json() };
}

describe('GET /customer-support', () => {
  it('lists the company queries newest first with user, agent and notes', async () => {
    const tenant = await createTenant(t.container);
    const agentId = await createAgent(t.container, tenant.companyId, 'Helper');
    const userId = await createEndUser(t.container, tenant.companyId, 'cust-1');
    const older = await insertQuery(t.container, tenant.companyId, {
      agentId,
      userId,
      createdAt: new Date('2025-01-01T10:00:00Z'),
      resolvedAfter: 30,
    });
    const newer = await insertQuery(t.container, tenant.companyId, {
      agentId,
      userId,
      createdAt: new Date('2025-01-02T10:00:00Z'),
    });
    await t.container.db.transaction().execute((trx) =>
      t.container.supportQueries.addNote(trx, {
        companyId: tenant.companyId,
        queryId: older.id,
        userId: tenant.userId,
        content: 'Checked the logs',
        isInternal: true,
      }),
    );
    const { status, body } = await get(tenant, '/customer-support');
    if (status !== 200) console.log(body);
    expect(status).toBe(200);
    expect(body.total).toBe(2);
    expect(body.skip).toBe(0);
    expect(body.limit).toBe(50);
    expect(body.data.map((q: { id: string }) => q.id)).toEqual([newer.id, older.id]);
    const first = body.data[1];
    expect(first.user).toEqual({ id: userId, email: 'cust-1@customers.test', name: 'Customer cust-1' });
    expect(first.agent.title).toBe('Helper');
    expect(first.agent.performance_metrics).toEqual({
      total_queries_handled: 2,
      avg_resolution_time: 30,
      success_rate: 50,
      customer_satisfaction_avg: 0,
    });
    expect(first.notes).toHaveLength(1);
    expect(first.notes[0].content).toBe('Checked the logs');
    expect(first.notes[0].user.id).toBe(tenant.userId);
    expect(first.metadata).toEqual({
      agent_actions_count: 0,
      tools_used: [],
      customer_satisfaction: null,
      resolution_method: 'automated',
      escalated_to_human: false,
      resolved_by: null,
    });
  });
});

describe('GET /customer-support filters', () => {
  let tenant: TestTenant;
  let agentA: string;
  let agentB: string;
  let userX: string;
  let rows: SeededQuery[];

  beforeAll(async () => {
    tenant = await createTenant(t.container);
    agentA = await createAgent(t.container, tenant.companyId);
    agentB = await createAgent(t.container, tenant.companyId);
    userX = await createEndUser(t.container, tenant.companyId);
    const userY = await createEndUser(t.container, tenant.companyId);
    const specs = [
      {
        agentId: agentA,
        userId: userX,
        queryType: 'billing',
        priority: 'high',
        status: 'open',
        createdAt: '2025-03-01T00:00:00.000Z',
      },
      {
        agentId: agentA,
        userId: userY,
        queryType: 'account',
        priority: 'low',
        status: 'in_progress',
        createdAt: '2025-03-02T12:00:00.000Z',
      },
      {
        agentId: agentB,
        userId: userX,
        queryType: 'billing',
        priority: 'urgent',
        status: 'resolved',
        createdAt: '2025-03-03T23:59:59.999Z',
        resolvedAfter: 10,
      },
      {
        agentId: agentB,
        userId: userY,
        queryType: 'bug_report',
        priority: 'medium',
        status: 'closed',
        createdAt: '2025-03-04T00:00:00.000Z',
        resolvedAfter: 20,
      },
    ] as const;
    rows = [];
    for (const spec of specs)
      rows.push(await insertQuery(t.container, tenant.companyId, { ...spec, createdAt: new Date(spec.createdAt) }));
  });

  const ids = (body: { data: { id: string }[] }) => body.data.map((q) => q.id).sort();
  const expected = (predicate: (q: SeededQuery) => boolean) =>
    rows
      .filter(predicate)
      .map((q) => q.id)
      .sort();

  it.each([
    ['query_type=billing', (q: SeededQuery) => q.queryType === 'billing'],
    ['status=open', (q: SeededQuery) => q.status === 'open'],
    ['status=closed', (q: SeededQuery) => q.status === 'closed'],
    ['priority=urgent', (q: SeededQuery) => q.priority === 'urgent'],
    ['query_type=billing&priority=high', (q: SeededQuery) => q.queryType === 'billing' && q.priority === 'high'],
  ])('filters by %s', async (filter, predicate) => {
    const { status, body } = await get(tenant, `/customer-support?${filter}`);
    expect(status).toBe(200);
    expect(ids(body)).toEqual(expected(predicate));
    expect(body.total).toBe(expected(predicate).length);
  });

  it('filters by agent_id and user_id', async () => {
    expect(ids((await get(tenant, `/customer-support?agent_id=${agentA}`)).body)).toEqual(
      expected((q) => q.agentId === agentA),
    );
    expect(ids((await get(tenant, `/customer-support?user_id=${userX}`)).body)).toEqual(
      expected((q) => q.userId === userX),
    );
  });

  it('treats start_date as inclusive and a bare end_date as the whole day', async () => {
    const day = await get(tenant, '/customer-support?start_date=2025-03-03&end_date=2025-03-03');
    expect(ids(day.body)).toEqual([rows[2]!.id]);
    const exact = await get(tenant, '/customer-support?start_date=2025-03-02T12:00:00Z&end_date=2025-03-04T00:00:00Z');
    expect(ids(exact.body)).toEqual([rows[1]!.id, rows[2]!.id, rows[3]!.id].sort());
    const beforeMidnight = await get(tenant, '/customer-support?end_date=2025-03-03T23:59:59.998Z');
    expect(ids(beforeMidnight.body)).toEqual([rows[0]!.id, rows[1]!.id].sort());
  });

  it('pages with skip and limit and reports the total', async () => {
    const page = await get(tenant, '/customer-support?skip=1&limit=2');
    expect(page.body).toMatchObject({ total: 4, skip: 1, limit: 2 });
    expect(page.body.data.map((q: { id: string }) => q.id)).toEqual([rows[2]!.id, rows[1]!.id]);
  });

  it.each([
    ['query_type=complaint', 'query_type'],
    ['status=pending', 'status'],
    ['priority=critical', 'priority'],
    ['agent_id=not-a-uuid', 'agent_id'],
    ['user_id=123', 'user_id'],
    ['start_date=yesterday', 'start_date'],
    ['end_date=2025-13-01', 'end_date'],
    ['limit=101', 'limit'],
    ['limit=0', 'limit'],
    ['skip=-1', 'skip'],
    ['limit=ten', 'limit'],
    ['start_date=2025-03-05&end_date=2025-03-01', 'start_date'],
  ])('rejects %s with a ValidationError naming %s', async (query, parameter) => {
    const { status, body } = await get(tenant, `/customer-support?${query}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: 'ValidationError', statusCode: 400, path: '/customer-support' });
    expect(body.message).toContain(parameter);
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
  });
});

describe('GET /customer-support/{query_id} and notes', () => {
  it('returns one query; another company gets 404, a bad id 400, no key 401', async () => {
    const tenant = await createTenant(t.container, 'member');
    const other = await createTenant(t.container);
    const agentId = await createAgent(t.container, tenant.companyId);
    const query = await insertQuery(t.container, tenant.companyId, {
      agentId,
      userId: await createEndUser(t.container, tenant.companyId),
      createdAt: new Date(),
    });
    const own = await get(tenant, `/customer-support/${query.id}`);
    expect(own.status).toBe(200);
    expect(own.body.id).toBe(query.id);
    expect(own.body.company_id).toBe(tenant.companyId);
    const foreign = await get(other, `/customer-support/${query.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ error: 'NotFound', statusCode: 404 });
    expect(foreign.body.message).toContain('Support query not found');
    expect((await get(other, `/customer-support/${query.id}/notes`)).status).toBe(404);
    expect((await get(tenant, `/customer-support/${randomUUID()}`)).status).toBe(404);
    const bad = await get(tenant, '/customer-support/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('query_id');
    const anonymous = await get(null, `/customer-support/${query.id}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({
      error: 'Unauthorized',
      statusCode: 401,
      path: `/customer-support/${query.id}`,
    });
    const wrongKey = await t.app.inject({
      method: 'GET',
      url: '/customer-support',
      headers: { 'x-api-key': 'sk_nope' },
    });
    expect(wrongKey.statusCode).toBe(401);
  });

  it('lists notes oldest first, without internal ones when include_internal=false', async () => {
    const tenant = await createTenant(t.container);
    const query = await insertQuery(t.container, tenant.companyId, {
      agentId: null,
      userId: await createEndUser(t.container, tenant.companyId),
      createdAt: new Date(),
    });
    const add = (content: string, isInternal: boolean, userId: string | null) =>
      t.container.db.transaction().execute((trx) =>
        t.container.supportQueries.addNote(trx, {
          companyId: tenant.companyId,
          queryId: query.id,
          userId,
          content,
          isInternal,
        }),
      );
    await add('first (internal, by the agent)', true, null);
    await add('second (public)', false, tenant.userId);
    await add('third (internal)', true, tenant.userId);
    const all = await get(tenant, `/customer-support/${query.id}/notes`);
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(3);
    expect(all.body.data.map((n: { content: string }) => n.content)).toEqual([
      'first (internal, by the agent)',
      'second (public)',
      'third (internal)',
    ]);
    expect(all.body.data[0]).toMatchObject({ user_id: null, user: null, is_internal: true, query_id: query.id });
    expect(all.body.data[1].user).toMatchObject({ id: tenant.userId, email: tenant.email });
    const publicOnly = await get(tenant, `/customer-support/${query.id}/notes?include_internal=false`);
    expect(publicOnly.body.data.map((n: { content: string }) => n.content)).toEqual(['second (public)']);
    expect(publicOnly.body.total).toBe(1);
    const paged = await get(tenant, `/customer-support/${query.id}/notes?skip=1&limit=1`);
    expect(paged.body.data.map((n: { content: string }) => n.content)).toEqual(['second (public)']);
    expect((await get(tenant, `/customer-support/${query.id}/notes?include_internal=maybe`)).status).toBe(400);
    expect((await get(tenant, `/customer-support/${query.id}/notes?limit=101`)).status).toBe(400);
  });
});

describe('OpenAPI', () => {
  it('describes both families with their parameters and the x-api-key scheme', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operations = Object.fromEntries(
      Object.entries(
        document.paths as Record<string, Record<string, { operationId: string; security: unknown }>>,
      ).flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => [
          operation.operationId,
          { path, method, security: operation.security },
        ]),
      ),
    );
    expect(operations.listSupportQueries).toMatchObject({
      path: '/customer-support',
      method: 'get',
      security: [{ apiKey: [] }],
    });
    expect(operations.getSupportQuery?.path).toBe('/customer-support/{query_id}');
    expect(operations.listSupportNotes?.path).toBe('/customer-support/{query_id}/notes');
    for (const id of [
      'supportDashboard',
      'supportStats',
      'supportAnalytics',
      'listTeamNotifications',
      'getTeamNotification',
      'listUserNotifications',
      'teamNotificationStats',
    ]) {
      expect(operations[id]).toBeDefined();
    }
    expect(operations.setNotificationStatus).toMatchObject({
      path: '/team-notifications/{notification_id}/users/{user_id}/status',
      method: 'patch',
    });
  });
});

describe('performanceOfAgents', () => {
  it('gives the all-time metrics of the company agents only', async () => {
    const tenant = await createTenant(t.container);
    const other = await createTenant(t.container);
    const agentId = await createAgent(t.container, tenant.companyId);
    const foreign = await createAgent(t.container, other.companyId);
    const userId = await createEndUser(t.container, tenant.companyId);
    await insertQuery(t.container, tenant.companyId, {
      agentId,
      userId,
      createdAt: new Date('2025-01-01T00:00:00Z'),
      resolvedAfter: 10,
      satisfaction: 5,
    });
    await insertQuery(t.container, tenant.companyId, {
      agentId,
      userId,
      createdAt: new Date('2025-01-02T00:00:00Z'),
      resolvedAfter: 30,
      escalated: true,
      satisfaction: 2,
    });
    await insertQuery(t.container, tenant.companyId, { agentId, userId, createdAt: new Date('2025-01-03T00:00:00Z') });
    const metrics = await t.container.supportQueries.performanceOfAgents(t.container.db, tenant.companyId, [
      agentId,
      foreign,
    ]);
    expect([...metrics.keys()]).toEqual([agentId]);
    // The escalated query was resolved by a person: its 30 minutes are not the agent's.
    expect(metrics.get(agentId)).toEqual({
      total_queries_handled: 3,
      avg_resolution_time: 10,
      success_rate: 33.33,
      customer_satisfaction_avg: 3.5,
    });
  });
});
