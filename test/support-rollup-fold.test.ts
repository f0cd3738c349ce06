/**
 * The support rollups kept off the statement path (migration 0090): every change appends its
 * contribution to support_rollup_pending, folds move them into the rollups in batches. Checked
 * against figures computed here from the raw rows: what readers see (rollup + pending) is exact
 * before, during and after folding; after a full fold the rollup tables alone are; a fold or a
 * change that rolls back loses and adds nothing. On a database of its own: a fold is global, and
 * the folders of other test files' services would otherwise fold this file's pending rows.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { createScratchDatabase } from './helpers/scratch-db.js';
import { createAgent, createEndUser, insertQuery } from './helpers/support-data.js';
import { PRIORITIES, QUERY_STATUSES, QUERY_TYPES } from '../src/modules/support-queries/support-queries.tables.js';
import { foldAllRollups, foldRollups } from '../src/modules/support-queries/support-queries.repo.js';
import { agentsWithMetrics } from '../src/modules/support-queries/support-queries.read.js';
import { createRollupFolder } from '../src/modules/support-queries/index.js';

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let t: TestApp;
let tenant: TestTenant;
const agents: string[] = [];
const START = Date.parse('2024-03-01T00:00:00.000Z');

function sequence(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

const MEASURES = [
  'created_count',
  ...QUERY_STATUSES.map((s) => `status_${s}`),
  ...QUERY_TYPES.map((s) => `type_${s}`),
  ...PRIORITIES.map((s) => `priority_${s}`),
  'escalated_count',
  'resolved_count',
  'agent_resolved_count',
  'resolution_minutes_sum',
  'satisfaction_sum',
  'satisfaction_count',
  'resolutions',
  'agent_resolution_minutes_sum',
];
type Figures = Record<string, number>;

/** The company's figures per (unit, agent key), computed from the raw rows as the rollups define them. */
async function expected(unit: 'hour' | 'day'): Promise<Map<string, Figures>> {
  const rows = await sql<{ company_id: string; at: Date; agent_key: string; kind: string } & Figures>`
    select date_trunc(${unit}, created_at, 'UTC') as at, coalesce(agent_id::text, 'none') as agent_key, 'created' as kind,
      status, query_type, priority, escalated_to_human, resolved_at, resolution_minutes, customer_satisfaction
    from support_queries where company_id = ${tenant.companyId}
    union all
    select date_trunc(${unit}, resolved_at, 'UTC'), coalesce(agent_id::text, 'none'), 'resolved',
      status, query_type, priority, escalated_to_human, resolved_at, resolution_minutes, customer_satisfaction
    from support_queries where company_id = ${tenant.companyId} and resolved_at is not null`.execute(t.container.db);
  const out = new Map<string, Figures>();
  for (const raw of rows.rows as unknown as Record<string, unknown>[]) {
    const key = `${(raw.at as Date).toISOString()} ${String(raw.agent_key)}`;
    const f = out.get(key) ?? Object.fromEntries(MEASURES.map((m) => [m, 0]));
    if (raw.kind === 'resolved') f.resolutions! += 1;
    else {
      f.created_count! += 1;
      f[`status_${String(raw.status)}`]! += 1;
      f[`type_${String(raw.query_type)}`]! += 1;
      f[`priority_${String(raw.priority)}`]! += 1;
      if (raw.escalated_to_human) f.escalated_count! += 1;
      if (raw.resolved_at) {
        f.resolved_count! += 1;
        if (!raw.escalated_to_human) {
          f.agent_resolved_count! += 1;
          f.agent_resolution_minutes_sum! += Number(raw.resolution_minutes);
        }
        f.resolution_minutes_sum! += Number(raw.resolution_minutes);
      }
      if (raw.customer_satisfaction != null) {
        f.satisfaction_sum! += Number(raw.customer_satisfaction);
        f.satisfaction_count! += 1;
      }
    }
    out.set(key, f);
  }
  return out;
}

/** Sums of a rollup table or live view per key, rows that sum to zero left out. */
async function summed(source: string, unit: 'hour' | 'day'): Promise<Map<string, Figures>> {
  const sums = MEASURES.map((m) => sql`sum(${sql.ref(m)})::float8 as ${sql.ref(m)}`);
  const rows = await sql<Record<string, unknown>>`
    select ${sql.ref(unit)} as at, case when agent_key = '00000000-0000-0000-0000-000000000000' then 'none' else agent_key::text end as agent_key,
      ${sql.join(sums, sql`, `)}
    from ${sql.table(source)} where company_id = ${tenant.companyId} group by 1, 2`.execute(t.container.db);
  const out = new Map<string, Figures>();
  for (const row of rows.rows) {
    const figures = Object.fromEntries(MEASURES.map((m) => [m, Number(row[m])]));
    if (MEASURES.every((m) => Math.abs(figures[m]!) < 1e-9)) continue;
    out.set(`${(row.at as Date).toISOString()} ${String(row.agent_key)}`, figures);
  }
  return out;
}

function expectSame(actual: Map<string, Figures>, wanted: Map<string, Figures>) {
  expect([...actual.keys()].sort()).toEqual([...wanted.keys()].sort());
  for (const [key, figures] of wanted) {
    for (const m of MEASURES) expect(actual.get(key)![m], `${key} ${m}`).toBeCloseTo(figures[m]!, 6);
  }
}

/** The agents' counters as readers see them (rollup + pending). */
async function liveAgentCounters() {
  const rows = await agentsWithMetrics(t.container.db, tenant.companyId, agents.slice(0, 2));
  return rows
    .filter((row) => row.queries_handled !== 0)
    .map((row) => ({
      agent_id: row.id,
      queries_handled: row.queries_handled,
      resolved_count: row.resolved_count,
      satisfaction_sum: row.satisfaction_sum,
      agent_minutes: Math.round(Number(row.agent_resolution_minutes_sum) * 1000),
    }))
    .sort((a, b) => a.agent_id.localeCompare(b.agent_id));
}

async function agentCounters() {
  const rows = await sql<{
    agent_id: string;
    queries_handled: number;
    resolved_count: number;
    satisfaction_sum: number;
    agent_minutes: number;
  }>`
    select agent_id, queries_handled, resolved_count, satisfaction_sum,
      round(agent_resolution_minutes_sum::numeric * 1000)::int as agent_minutes from support_agent_metrics
    where company_id = ${tenant.companyId} and queries_handled <> 0 order by agent_id`.execute(t.container.db);
  return rows.rows;
}

async function expectedAgentCounters() {
  const rows = await sql<{
    agent_id: string;
    queries_handled: number;
    resolved_count: number;
    satisfaction_sum: number;
    agent_minutes: number;
  }>`
    select agent_id, count(*)::int as queries_handled, count(resolved_at)::int as resolved_count,
      coalesce(sum(customer_satisfaction), 0)::int as satisfaction_sum,
      round(coalesce(sum(resolution_minutes) filter (where resolved_at is not null and not escalated_to_human), 0)::numeric
        * 1000)::int as agent_minutes
    from support_queries where company_id = ${tenant.companyId} and agent_id is not null
    group by agent_id order by agent_id`.execute(t.container.db);
  return rows.rows;
}

async function histogram(source: string) {
  const rows = await sql<{ day: Date; bucket: number; n: number }>`
    select day, bucket, sum(resolved)::int as n from ${sql.table(source)}
    where company_id = ${tenant.companyId} group by 1, 2 having sum(resolved) <> 0 order by 1, 2`.execute(
    t.container.db,
  );
  return rows.rows;
}

async function expectedHistogram() {
  const rows = await sql<{ day: Date; bucket: number; n: number }>`
    select date_trunc('day', created_at, 'UTC') as day, support_resolution_bucket(resolution_minutes) as bucket, count(*)::int as n
    from support_queries where company_id = ${tenant.companyId} and resolved_at is not null
    group by 1, 2 order by 1, 2`.execute(t.container.db);
  return rows.rows;
}

const pending = async () =>
  Number(
    (
      await sql<{
        n: number;
      }>`select count(*)::int as n from support_rollup_pending where company_id = ${tenant.companyId}`.execute(
        t.container.db,
      )
    ).rows[0]!.n,
  );

async function expectLiveExact() {
  expectSame(await summed('support_query_hourly_live', 'hour'), await expected('hour'));
  expectSame(await summed('support_query_daily_live', 'day'), await expected('day'));
  expect(await histogram('support_resolution_daily_live')).toEqual(await expectedHistogram());
  expect(await liveAgentCounters()).toEqual(await expectedAgentCounters());
}

beforeAll(async () => {
  scratch = await createScratchDatabase();
  const handle = createDatabase(scratch.url, 2);
  await migrateToLatest(handle.db);
  await handle.close();
  t = await createTestApp({ DATABASE_URL: scratch.url, LOG_LEVEL: 'error' });
  tenant = await createTenant(t.container);
  for (const name of ['Alpha', 'Beta', 'Gamma']) agents.push(await createAgent(t.container, tenant.companyId, name));
  const user = await createEndUser(t.container, tenant.companyId);
  const random = sequence(11);
  const ids: string[] = [];
  for (let i = 0; i < 40; i++) {
    const resolved = random() < 0.6;
    const seeded = await insertQuery(t.container, tenant.companyId, {
      agentId: agents[i % 3]!,
      userId: user,
      queryType: QUERY_TYPES[Math.floor(random() * QUERY_TYPES.length)]!,
      priority: PRIORITIES[Math.floor(random() * PRIORITIES.length)]!,
      createdAt: new Date(START + Math.floor(random() * 5 * 86_400_000)),
      resolvedAfter: resolved ? 1 + Math.floor(random() * 3000) : null,
      escalated: random() < 0.3,
      satisfaction: resolved && random() < 0.6 ? 1 + Math.floor(random() * 5) : null,
    });
    ids.push(seeded.id);
  }
  // Updates that move measures (a rating, a resolution, a status), one that moves none, a delete,
  // and agents' queries losing their agent (deleted agent: agent_id set null).
  const db = t.container.db;
  await db
    .updateTable('support_queries')
    .set({ customer_satisfaction: 2 })
    .where('id', 'in', ids.slice(0, 5))
    .execute();
  await db
    .updateTable('support_queries')
    .set({ status: 'closed', closed_at: new Date(START + 6 * 86_400_000) })
    .where('id', 'in', ids.slice(5, 12))
    .where('resolved_at', 'is not', null)
    .execute();
  await db
    .updateTable('support_queries')
    .set({ tools_used: ['knowledge_base'] })
    .where('id', 'in', ids.slice(12, 20))
    .execute();
  await db.deleteFrom('support_queries').where('id', '=', ids[20]!).execute();
  await db.deleteFrom('agents').where('id', '=', agents[2]!).execute();
}, 30_000);

afterAll(async () => {
  await t?.close();
  await scratch?.drop();
});

describe('support rollups folded in batches', () => {
  it('an update that moves no measured column appends nothing', async () => {
    const before = await pending();
    await t.container.db
      .updateTable('support_queries')
      .set({ agent_actions_count: 7, updated_at: new Date() })
      .where('company_id', '=', tenant.companyId)
      .execute();
    expect(await pending()).toBe(before);
  });

  it('readers are exact while everything is pending', async () => {
    expect(await pending()).toBeGreaterThan(40);
    await expectLiveExact();
  });

  it('a fold that rolls back (a crash mid-fold) leaves its rows pending and the figures exact', async () => {
    const before = await pending();
    await expect(
      t.container.db.transaction().execute(async (trx) => {
        expect(await foldRollups(trx, 1000)).toBeGreaterThan(0);
        throw new Error('crash');
      }),
    ).rejects.toThrow('crash');
    expect(await pending()).toBe(before);
    await expectLiveExact();
  });

  it('a change that rolls back appends nothing', async () => {
    const before = await pending();
    await expect(
      t.container.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('support_queries')
          .set({ status: 'closed' })
          .where('company_id', '=', tenant.companyId)
          .execute();
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await pending()).toBe(before);
  });

  it('a second fold while one is under way folds nothing (one folder at a time)', async () => {
    await t.container.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('support_rollup_fold'))`.execute(trx);
      expect(await foldRollups(t.container.db, 1000)).toBe(0);
    });
  });

  it('stays exact after each small batch, and the rollups alone are exact once all is folded', async () => {
    let folds = 0;
    for (;;) {
      const folded = await foldRollups(t.container.db, 7);
      if (folded === 0) break;
      folds += 1;
      if (folds % 3 === 0) await expectLiveExact();
    }
    expect(folds).toBeGreaterThan(5);
    expect(await pending()).toBe(0);
    await expectLiveExact();
    expectSame(await summed('support_query_hourly', 'hour'), await expected('hour'));
    expectSame(await summed('support_query_daily', 'day'), await expected('day'));
    expect(await histogram('support_resolution_daily')).toEqual(await expectedHistogram());
    expect(await agentCounters()).toEqual(await expectedAgentCounters());
  });

  it('the background folder folds what later changes append', async () => {
    await t.container.db
      .updateTable('support_queries')
      .set({ customer_satisfaction: 5 })
      .where('company_id', '=', tenant.companyId)
      .where('resolved_at', 'is not', null)
      .execute();
    expect(await pending()).toBeGreaterThan(0);
    const folder = createRollupFolder({ db: t.container.db, intervalMs: 10, batch: 5, log: { warn: () => undefined } });
    folder.start();
    for (let i = 0; i < 200 && (await pending()) > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    await folder.stop();
    expect(await pending()).toBe(0);
    expectSame(await summed('support_query_daily', 'day'), await expected('day'));
    expect(await agentCounters()).toEqual(await expectedAgentCounters());
    expect(await foldAllRollups(t.container.db)).toBe(0);
  });
});
