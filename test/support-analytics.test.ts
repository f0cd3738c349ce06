/**
 * Dashboard, stats and analytics against figures computed here, independently, from the rows
 * the test seeded (a June 2024 window with rows just outside it on both sides).
 */
import { randomUUID as randomUUIDv4 } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { createAgent, createEndUser, insertQuery, type SeededQuery } from './helpers/support-data.js';
import { PRIORITIES, QUERY_STATUSES, QUERY_TYPES } from '../src/modules/support-queries/support-queries.tables.js';

let t: TestApp;
let tenant: TestTenant;
let inWindow: SeededQuery[];
const outside: SeededQuery[] = [];
const agents: string[] = [];
const agentNames = new Map<string, string>();
const START = Date.parse('2024-06-01T00:00:00.000Z');
const END = Date.parse('2024-07-01T00:00:00.000Z');
const WINDOW = 'start_date=2024-06-01&end_date=2024-06-30';

/** A fixed pseudo-random sequence, so the data set is the same on every run. */
function sequence(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: 'error' });
  tenant = await createTenant(t.container);
  for (const name of ['Alpha', 'Beta', 'Gamma']) {
    const id = await createAgent(t.container, tenant.companyId, name);
    agents.push(id);
    agentNames.set(id, name);
  }
  const users = [
    await createEndUser(t.container, tenant.companyId),
    await createEndUser(t.container, tenant.companyId),
  ];
  const random = sequence(7);
  inWindow = [];
  for (let i = 0; i < 60; i++) {
    const createdAt = new Date(START + Math.floor(random() * (END - START - 3_600_000)));
    const resolved = random() < 0.7;
    const status = resolved ? (random() < 0.5 ? 'resolved' : 'closed') : random() < 0.5 ? 'open' : 'in_progress';
    inWindow.push(
      await insertQuery(t.container, tenant.companyId, {
        agentId: agents[i % 3]!,
        userId: users[i % 2]!,
        queryType: QUERY_TYPES[Math.floor(random() * QUERY_TYPES.length)]!,
        priority: PRIORITIES[Math.floor(random() * PRIORITIES.length)]!,
        status,
        createdAt,
        resolvedAfter: resolved ? 1 + Math.floor(random() * 600) : null,
        escalated: random() < 0.25,
        satisfaction: resolved && random() < 0.7 ? 1 + Math.floor(random() * 5) : null,
      }),
    );
  }
  // Just outside the window on both sides.
  outside.push(
    await insertQuery(t.container, tenant.companyId, {
      agentId: agents[0]!,
      userId: users[0]!,
      createdAt: new Date(START - 1),
      resolvedAfter: 5,
    }),
  );
  outside.push(
    await insertQuery(t.container, tenant.companyId, {
      agentId: agents[1]!,
      userId: users[0]!,
      createdAt: new Date(END),
      resolvedAfter: 5,
    }),
  );
});
afterAll(async () => {
  await t.close();
});

async function get(url: string, who: TestTenant = tenant) {
  const response = await t.app.inject({ method: 'GET', url, headers: who.headers });
  return { status: response.statusCode, body: response.json() };
}

const minutes = (q: SeededQuery) => (q.resolvedAt!.getTime() - q.createdAt.getTime()) / 60_000;
const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
const countBy = <K extends string>(keys: readonly K[], of: (q: SeededQuery) => string) =>
  Object.fromEntries(keys.map((key) => [key, inWindow.filter((q) => of(q) === key).length]));
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const middle = (sorted.length - 1) / 2;
  return (sorted[Math.floor(middle)]! + sorted[Math.ceil(middle)]!) / 2;
}
const resolved = () => inWindow.filter((q) => q.resolvedAt);
const agentResolved = (qs: SeededQuery[]) => qs.filter((q) => q.resolvedAt && !q.escalated).length;

function perAgent() {
  return agents.map((id) => {
    const qs = inWindow.filter((q) => q.agentId === id);
    return {
      agent_id: id,
      agent_name: agentNames.get(id)!,
      queries_handled: qs.length,
      success_rate: (100 * agentResolved(qs)) / qs.length,
      // The agent's own resolutions: a person's resolution after a hand-off is not the agent's.
      avg_resolution_time: mean(qs.filter((q) => q.resolvedAt && !q.escalated).map(minutes)),
      customer_satisfaction: mean(qs.flatMap((q) => (q.satisfaction ? [q.satisfaction] : []))),
    };
  });
}

describe('GET /customer-support/dashboard', () => {
  it('computes every figure of the window', async () => {
    const { status, body } = await get(`/customer-support/dashboard?${WINDOW}&recent_limit=3`);
    expect(status).toBe(200);
    expect(body.total_queries).toBe(60);
    const byStatus = countBy(QUERY_STATUSES, (q) => q.status);
    expect([body.open_queries, body.in_progress_queries, body.resolved_queries, body.closed_queries]).toEqual([
      byStatus.open,
      byStatus.in_progress,
      byStatus.resolved,
      byStatus.closed,
    ]);
    expect(body.avg_resolution_time).toBeCloseTo(mean(resolved().map(minutes)), 1);
    expect(body.agent_handled_queries).toBe(inWindow.filter((q) => !q.escalated).length);
    expect(body.human_escalated_queries).toBe(inWindow.filter((q) => q.escalated).length);
    expect(body.agent_success_rate).toBeCloseTo((100 * agentResolved(inWindow)) / 60, 1);
    expect(body.avg_customer_satisfaction).toBeCloseTo(
      mean(inWindow.flatMap((q) => (q.satisfaction ? [q.satisfaction] : []))),
      1,
    );
    expect(body.queries_by_type).toEqual(countBy(QUERY_TYPES, (q) => q.queryType));
    expect(body.queries_by_priority).toEqual(countBy(PRIORITIES, (q) => q.priority));
    const newest = [...inWindow].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime()).slice(0, 3);
    expect(body.recent_queries.map((q: { id: string }) => q.id)).toEqual(newest.map((q) => q.id));
    expect(body.recent_queries[0]).toMatchObject({
      created_at: newest[0]!.createdAt.toISOString(),
      agent_id: newest[0]!.agentId,
      customer_satisfaction: newest[0]!.satisfaction,
    });
    const expectedTop = perAgent().sort(
      (a, b) => b.success_rate - a.success_rate || b.queries_handled - a.queries_handled,
    );
    expect(body.top_performing_agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(
      expectedTop.map((a) => a.agent_id),
    );
    body.top_performing_agents.forEach((agent: Record<string, number | string>, i: number) => {
      const want = expectedTop[i]!;
      expect(agent.agent_name).toBe(want.agent_name);
      expect(agent.queries_handled).toBe(want.queries_handled);
      expect(agent.success_rate).toBeCloseTo(want.success_rate, 1);
      expect(agent.avg_resolution_time).toBeCloseTo(want.avg_resolution_time, 1);
      expect(agent.customer_satisfaction).toBeCloseTo(want.customer_satisfaction, 1);
    });
  });

  it('gives zeros for an empty window', async () => {
    const { status, body } = await get('/customer-support/dashboard?start_date=2020-01-01&end_date=2020-01-31');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      total_queries: 0,
      avg_resolution_time: 0,
      agent_success_rate: 0,
      avg_customer_satisfaction: 0,
      recent_queries: [],
      top_performing_agents: [],
    });
    expect(Object.values(body.queries_by_type)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('is not taken for a query id (static route before /{query_id})', async () => {
    for (const path of ['dashboard', 'stats', 'analytics']) {
      const { status, body } = await get(`/customer-support/${path}?${WINDOW}`);
      expect(status).toBe(200);
      expect(body.id).toBeUndefined();
    }
  });

  it.each([
    ['recent_limit=101', 'recent_limit'],
    ['recent_limit=-1', 'recent_limit'],
    ['start_date=2024-07-01&end_date=2024-06-01', 'start_date'],
  ])('rejects %s', async (query, parameter) => {
    const { status, body } = await get(`/customer-support/dashboard?${query}`);
    expect(status).toBe(400);
    expect(body.error).toBe('ValidationError');
    expect(body.message).toContain(parameter);
  });
});

describe('GET /customer-support/stats', () => {
  it('computes counts, resolution metrics and agent performance', async () => {
    const { status, body } = await get(`/customer-support/stats?${WINDOW}`);
    expect(status).toBe(200);
    expect(body.total_queries).toBe(60);
    expect(body.by_status).toEqual(countBy(QUERY_STATUSES, (q) => q.status));
    expect(body.by_type).toEqual(countBy(QUERY_TYPES, (q) => q.queryType));
    expect(body.by_priority).toEqual(countBy(PRIORITIES, (q) => q.priority));
    const res = resolved();
    expect(body.resolution_metrics.total_resolved).toBe(res.length);
    expect(body.resolution_metrics.agent_resolved).toBe(agentResolved(res));
    expect(body.resolution_metrics.human_resolved).toBe(res.filter((q) => q.escalated).length);
    expect(body.resolution_metrics.avg_resolution_time).toBeCloseTo(mean(res.map(minutes)), 1);
    expect(body.resolution_metrics.median_resolution_time).toBeCloseTo(median(res.map(minutes)), 1);
    expect(body.resolution_metrics.automated_resolution_rate).toBeCloseTo((100 * agentResolved(res)) / res.length, 1);
    const rates = perAgent();
    expect(body.agent_performance.total_agents_active).toBe(3);
    expect(body.agent_performance.avg_queries_per_agent).toBeCloseTo(20, 2);
    expect(body.agent_performance.top_agent_success_rate).toBeCloseTo(Math.max(...rates.map((a) => a.success_rate)), 1);
    expect(body.agent_performance.agents_above_target).toBe(rates.filter((a) => a.success_rate >= 80).length);
    expect(body.periods).toBeUndefined();
  });

  it('adds a weekly breakdown with group_by=week (weeks start on Monday, empty weeks as zeros)', async () => {
    const { body } = await get(`/customer-support/stats?${WINDOW}&group_by=week`);
    // 2024-06-01 is a Saturday: the first week starts on Monday 2024-05-27.
    const mondays = ['2024-05-27', '2024-06-03', '2024-06-10', '2024-06-17', '2024-06-24'];
    expect(body.periods.map((p: { period: string }) => p.period)).toEqual(mondays);
    mondays.forEach((monday, i) => {
      const from = Date.parse(`${monday}T00:00:00Z`);
      const qs = inWindow.filter((q) => q.createdAt.getTime() >= from && q.createdAt.getTime() < from + 7 * 86_400_000);
      expect(body.periods[i].total_queries).toBe(qs.length);
      expect(body.periods[i].resolved_queries).toBe(qs.filter((q) => q.resolvedAt).length);
      expect(body.periods[i].avg_resolution_time).toBeCloseTo(mean(qs.filter((q) => q.resolvedAt).map(minutes)), 1);
    });
    expect(body.periods.reduce((sum: number, p: { total_queries: number }) => sum + p.total_queries, 0)).toBe(60);
    const monthly = await get(`/customer-support/stats?${WINDOW}&group_by=month`);
    expect(monthly.body.periods).toEqual([
      {
        period: '2024-06-01',
        total_queries: 60,
        resolved_queries: resolved().length,
        avg_resolution_time: expect.any(Number),
      },
    ]);
  });

  it('gives zeros for an empty window and rejects an unknown group_by', async () => {
    const empty = await get('/customer-support/stats?start_date=2020-01-01&end_date=2020-01-02&group_by=day');
    expect(empty.body.resolution_metrics).toEqual({
      avg_resolution_time: 0,
      median_resolution_time: 0,
      total_resolved: 0,
      agent_resolved: 0,
      human_resolved: 0,
      automated_resolution_rate: 0,
    });
    expect(empty.body.agent_performance).toEqual({
      total_agents_active: 0,
      avg_queries_per_agent: 0,
      top_agent_success_rate: 0,
      agents_above_target: 0,
    });
    expect(empty.body.periods).toEqual([
      { period: '2020-01-01', total_queries: 0, resolved_queries: 0, avg_resolution_time: 0 },
      { period: '2020-01-02', total_queries: 0, resolved_queries: 0, avg_resolution_time: 0 },
    ]);
    const bad = await get('/customer-support/stats?group_by=year');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('group_by');
    const tooLong = await get('/customer-support/stats?start_date=2000-01-01&end_date=2024-01-01&group_by=day');
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.message).toContain('group_by');
  });
});

describe('GET /customer-support/analytics', () => {
  it('gives a daily series, trends by halves and top categories', async () => {
    const { status, body } = await get(`/customer-support/analytics?${WINDOW}`);
    expect(status).toBe(200);
    expect(body.time_series).toHaveLength(30);
    body.time_series.forEach(
      (point: { date: string; queries_created: number; queries_resolved: number }, i: number) => {
        const from = START + i * 86_400_000;
        expect(point.date).toBe(new Date(from).toISOString().slice(0, 10));
        expect(point.queries_created).toBe(
          inWindow.filter((q) => q.createdAt.getTime() >= from && q.createdAt.getTime() < from + 86_400_000).length,
        );
        // Resolutions counted on the day they happened, for any query of the company.
        const all = [...inWindow, ...outside];
        expect(point.queries_resolved).toBe(
          all.filter(
            (q) => q.resolvedAt && q.resolvedAt.getTime() >= from && q.resolvedAt.getTime() < from + 86_400_000,
          ).length,
        );
      },
    );
    const middle = (START + END) / 2;
    const first = inWindow.filter((q) => q.createdAt.getTime() < middle);
    const second = inWindow.filter((q) => q.createdAt.getTime() >= middle);
    const volume =
      second.length > first.length * 1.1 ? 'increasing' : second.length < first.length * 0.9 ? 'decreasing' : 'stable';
    const r1 = mean(first.filter((q) => q.resolvedAt).map(minutes));
    const r2 = mean(second.filter((q) => q.resolvedAt).map(minutes));
    const resolution = r2 < r1 * 0.9 ? 'improving' : r2 > r1 * 1.1 ? 'worsening' : 'stable';
    expect(body.trends).toEqual({ query_volume_trend: volume, resolution_time_trend: resolution });
    const counts = countBy(QUERY_TYPES, (q) => q.queryType);
    const expectedCategories = QUERY_TYPES.filter((type) => counts[type]! > 0).sort(
      (a, b) => counts[b]! - counts[a]! || a.localeCompare(b),
    );
    expect(body.top_categories.map((c: { category: string }) => c.category)).toEqual(expectedCategories);
    body.top_categories.forEach((c: { category: string; count: number; percentage: number }) => {
      expect(c.count).toBe(counts[c.category]);
      expect(c.percentage).toBeCloseTo((100 * c.count) / 60, 1);
    });
  });

  it('groups by month and week, and defaults to day', async () => {
    const monthly = await get(`/customer-support/analytics?${WINDOW}&granularity=month`);
    expect(monthly.body.time_series).toEqual([
      { date: '2024-06-01', queries_created: 60, queries_resolved: expect.any(Number) },
    ]);
    const weekly = await get(`/customer-support/analytics?${WINDOW}&granularity=week`);
    expect(weekly.body.time_series[0].date).toBe('2024-05-27');
    expect(
      weekly.body.time_series.reduce((s: number, p: { queries_created: number }) => s + p.queries_created, 0),
    ).toBe(60);
  });

  it('is stable with zeros for an empty window and rejects bad granularity', async () => {
    const empty = await get('/customer-support/analytics?start_date=2020-01-01&end_date=2020-01-03');
    expect(empty.body).toEqual({
      time_series: ['2020-01-01', '2020-01-02', '2020-01-03'].map((date) => ({
        date,
        queries_created: 0,
        queries_resolved: 0,
      })),
      trends: { query_volume_trend: 'stable', resolution_time_trend: 'stable' },
      top_categories: [],
    });
    const bad = await get('/customer-support/analytics?granularity=hour');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('granularity');
  });

  it('counts only the caller company', async () => {
    const other = await createTenant(t.container);
    const { body } = await get(`/customer-support/analytics?${WINDOW}`, other);
    expect(body.time_series.every((p: { queries_created: number }) => p.queries_created === 0)).toBe(true);
    const stats = await get(`/customer-support/stats?${WINDOW}`, other);
    expect(stats.body.total_queries).toBe(0);
    const list = await get('/customer-support', other);
    expect(list.body.total).toBe(0);
  });
});

describe('windows that cut through hours (rollup plus raw edge rows)', () => {
  const cases = [
    ['2024-06-10T13:27:41.123Z', '2024-06-20T08:05:00.000Z'],
    ['2024-06-03T00:00:00.001Z', '2024-06-03T00:59:59.999Z'],
    ['2024-06-01T00:30:00.000Z', '2024-06-29T23:30:00.000Z'],
  ] as const;

  it.each(cases)('stats from %s to %s match the rows', async (start, end) => {
    const from = Date.parse(start);
    const to = Date.parse(end) + 1;
    const rows = [...inWindow, ...outside].filter((q) => q.createdAt.getTime() >= from && q.createdAt.getTime() < to);
    const { status, body } = await get(`/customer-support/stats?start_date=${start}&end_date=${end}`);
    expect(status).toBe(200);
    expect(body.total_queries).toBe(rows.length);
    expect(body.by_status).toEqual(
      Object.fromEntries(QUERY_STATUSES.map((s) => [s, rows.filter((q) => q.status === s).length])),
    );
    expect(body.by_priority).toEqual(
      Object.fromEntries(PRIORITIES.map((p) => [p, rows.filter((q) => q.priority === p).length])),
    );
    const res = rows.filter((q) => q.resolvedAt);
    expect(body.resolution_metrics.total_resolved).toBe(res.length);
    expect(body.resolution_metrics.agent_resolved).toBe(agentResolved(res));
    expect(body.resolution_metrics.avg_resolution_time).toBeCloseTo(mean(res.map(minutes)), 1);
    expect(body.resolution_metrics.median_resolution_time).toBeCloseTo(median(res.map(minutes)), 1);
    const list = await get(`/customer-support?start_date=${start}&end_date=${end}&limit=100`);
    expect(list.body.total).toBe(rows.length);
    expect(list.body.data.map((q: { id: string }) => q.id).sort()).toEqual(rows.map((q) => q.id).sort());
  });

  it('counts resolutions at the edges by resolved_at', async () => {
    const start = '2024-06-10T13:27:41.123Z';
    const end = '2024-06-12T08:05:00.000Z';
    const from = Date.parse(start);
    const to = Date.parse(end) + 1;
    const { body } = await get(`/customer-support/analytics?start_date=${start}&end_date=${end}`);
    const all = [...inWindow, ...outside];
    for (const point of body.time_series as { date: string; queries_created: number; queries_resolved: number }[]) {
      const dayStart = Math.max(from, Date.parse(`${point.date}T00:00:00Z`));
      const dayEnd = Math.min(to, Date.parse(`${point.date}T00:00:00Z`) + 86_400_000);
      expect(point.queries_created).toBe(
        all.filter((q) => q.createdAt.getTime() >= dayStart && q.createdAt.getTime() < dayEnd).length,
      );
      expect(point.queries_resolved).toBe(
        all.filter((q) => q.resolvedAt && q.resolvedAt.getTime() >= dayStart && q.resolvedAt.getTime() < dayEnd).length,
      );
    }
  });

  it.each([
    ['status=resolved', (q: SeededQuery) => q.status === 'resolved'],
    ['priority=high', (q: SeededQuery) => q.priority === 'high'],
    ['query_type=billing', (q: SeededQuery) => q.queryType === 'billing'],
    ['status=open&priority=low', (q: SeededQuery) => q.status === 'open' && q.priority === 'low'],
  ])('list totals with %s in a cut window match the rows', async (filter, predicate) => {
    const start = '2024-06-05T06:15:00Z';
    const end = '2024-06-25T18:45:00Z';
    const agent = agents[1]!;
    const rows = inWindow.filter(
      (q) =>
        q.createdAt.getTime() >= Date.parse(start) &&
        q.createdAt.getTime() <= Date.parse(end) &&
        q.agentId === agent &&
        predicate(q),
    );
    const { body } = await get(`/customer-support?${filter}&agent_id=${agent}&start_date=${start}&end_date=${end}`);
    expect(body.total).toBe(rows.length);
    expect(body.data.map((q: { id: string }) => q.id).sort()).toEqual(rows.map((q) => q.id).sort());
  });
});

describe('figures follow the platform writing through the recorder', () => {
  it('moves a query open → in_progress → resolved → closed in every aggregate', async () => {
    const fresh = await createTenant(t.container);
    const agentId = await createAgent(t.container, fresh.companyId, 'Recorder');
    const recorder = t.container.supportQueries;
    const queryId = await t.container.db.transaction().execute(async (trx) => {
      const user = await recorder.ensureEndUser(trx, fresh.companyId, 'visitor-1', { email: 'v@x.test' });
      const again = await recorder.ensureEndUser(trx, fresh.companyId, 'visitor-1', { name: 'Vera' });
      expect(again.id).toBe(user.id);
      const { id } = await recorder.openForConversation(trx, {
        companyId: fresh.companyId,
        endUserId: user.id,
        agentId,
        deploymentId: null,
        conversationId: randomUUIDv4(),
        subject: 'I was charged twice for my subscription',
        description: 'Refund please',
      });
      return id;
    });
    const stats = async () => (await get('/customer-support/stats', fresh)).body;
    let body = await stats();
    expect(body.by_status.open).toBe(1);
    expect(body.by_type.billing).toBe(1);
    expect(body.by_priority.high).toBe(1);
    const one = (await get(`/customer-support/${queryId}`, fresh)).body;
    expect(one.user).toMatchObject({ email: 'v@x.test', name: 'Vera' });

    await t.container.db.transaction().execute((trx) =>
      recorder.recordAgentTurn(trx, {
        companyId: fresh.companyId,
        queryId,
        resolved: false,
        escalated: false,
        toolsUsed: ['crm_lookup'],
        agentActions: 2,
      }),
    );
    body = await stats();
    expect(body.by_status).toMatchObject({ open: 0, in_progress: 1 });

    await t.container.db.transaction().execute(async (trx) => {
      await recorder.recordAgentTurn(trx, {
        companyId: fresh.companyId,
        queryId,
        resolved: true,
        escalated: false,
        resolution: 'Refunded',
        toolsUsed: ['refund_payment'],
        agentActions: 1,
      });
      await recorder.recordSatisfaction(trx, { companyId: fresh.companyId, queryId, rating: 4 });
    });
    body = await stats();
    expect(body.by_status).toMatchObject({ in_progress: 0, resolved: 1 });
    expect(body.resolution_metrics).toMatchObject({
      total_resolved: 1,
      agent_resolved: 1,
      human_resolved: 0,
      automated_resolution_rate: 100,
    });
    const dashboard = (await get('/customer-support/dashboard', fresh)).body;
    expect(dashboard).toMatchObject({ agent_success_rate: 100, avg_customer_satisfaction: 4, resolved_queries: 1 });
    const record = (await get(`/customer-support/${queryId}`, fresh)).body;
    expect(record.metadata).toEqual({
      agent_actions_count: 3,
      tools_used: ['crm_lookup', 'refund_payment'],
      customer_satisfaction: 4,
      resolution_method: 'automated',
      escalated_to_human: false,
      resolved_by: null,
    });
    expect(record.resolution).toBe('Refunded');
    expect(record.agent.performance_metrics).toMatchObject({
      total_queries_handled: 1,
      success_rate: 100,
      customer_satisfaction_avg: 4,
    });

    await t.container.db.transaction().execute((trx) => recorder.close(trx, { companyId: fresh.companyId, queryId }));
    body = await stats();
    expect(body.by_status).toMatchObject({ resolved: 0, closed: 1 });
    await expect(
      t.container.db
        .transaction()
        .execute((trx) =>
          recorder.recordAgentTurn(trx, { companyId: fresh.companyId, queryId, resolved: false, escalated: false }),
        ),
    ).rejects.toMatchObject({ statusCode: 409 });
    await expect(
      t.container.db
        .transaction()
        .execute((trx) => recorder.recordSatisfaction(trx, { companyId: fresh.companyId, queryId, rating: 6 })),
    ).rejects.toMatchObject({ statusCode: 400 });
    await expect(
      t.container.db.transaction().execute((trx) => recorder.close(trx, { companyId: tenant.companyId, queryId })),
    ).rejects.toMatchObject({ statusCode: 404 });
  });

  it('marks an escalated query human-resolved', async () => {
    const fresh = await createTenant(t.container);
    const agentId = await createAgent(t.container, fresh.companyId);
    const recorder = t.container.supportQueries;
    await t.container.db.transaction().execute(async (trx) => {
      const user = await recorder.ensureEndUser(trx, fresh.companyId, 'v2');
      const { id } = await recorder.openForConversation(trx, {
        companyId: fresh.companyId,
        endUserId: user.id,
        agentId,
        deploymentId: null,
        conversationId: randomUUIDv4(),
        subject: 'Question',
        description: 'Hi',
      });
      await recorder.recordAgentTurn(trx, {
        companyId: fresh.companyId,
        queryId: id,
        resolved: false,
        escalated: true,
      });
      await recorder.recordAgentTurn(trx, {
        companyId: fresh.companyId,
        queryId: id,
        resolved: true,
        escalated: false,
      });
    });
    const body = (await get('/customer-support/stats', fresh)).body;
    expect(body.resolution_metrics).toMatchObject({ total_resolved: 1, agent_resolved: 0, human_resolved: 1 });
    const dashboard = (await get('/customer-support/dashboard', fresh)).body;
    expect(dashboard).toMatchObject({ human_escalated_queries: 1, agent_handled_queries: 0, agent_success_rate: 0 });
    expect(dashboard.recent_queries[0].resolution_method).toBe('human');
  });
});

describe('deletes keep the rollups right', () => {
  it('subtracts deleted queries and lets a company with history be deleted', async () => {
    const fresh = await createTenant(t.container);
    const agentId = await createAgent(t.container, fresh.companyId);
    const keep = await createEndUser(t.container, fresh.companyId);
    const gone = await createEndUser(t.container, fresh.companyId);
    await insertQuery(t.container, fresh.companyId, {
      agentId,
      userId: keep,
      createdAt: new Date('2024-06-05T10:00:00Z'),
      resolvedAfter: 10,
    });
    await insertQuery(t.container, fresh.companyId, {
      agentId,
      userId: gone,
      createdAt: new Date('2024-06-05T11:00:00Z'),
      resolvedAfter: 20,
    });
    await t.container.db.deleteFrom('end_users').where('id', '=', gone).execute();
    const stats = (await get(`/customer-support/stats?${WINDOW}`, fresh)).body;
    expect(stats.total_queries).toBe(1);
    expect(stats.resolution_metrics).toMatchObject({
      total_resolved: 1,
      avg_resolution_time: 10,
      median_resolution_time: 10,
    });
    await t.container.db.transaction().execute((trx) =>
      t.container.notifications.notify(trx, {
        companyId: fresh.companyId,
        notificationType: 'system',
        category: 'system',
        title: 't',
        message: 'm',
      }),
    );
    await t.container.db.deleteFrom('companies').where('id', '=', fresh.companyId).execute();
    const left = await sql`select company_id from support_query_daily where company_id = ${fresh.companyId}`.execute(
      t.container.db,
    );
    expect(left.rows).toEqual([]);
  });
});
