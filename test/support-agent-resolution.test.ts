/**
 * An agent's figures count the agent's own resolutions only (DESIGN §13): a query that a person
 * resolved after a hand-off counts in the company's resolution time, not in the agent's
 * `avg_resolution_time` nor in its success rate. Checked on the agent's performance_metrics and
 * the dashboard's best agents, with the contributions pending and folded, and on a database that
 * held support history before migration 0215 (its figures filled in from the queries).
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.js';
import { MIGRATIONS_DIR, migrateToLatest } from '../src/db/migrator.js';
import { foldAllRollups } from '../src/modules/support-queries/support-queries.repo.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { createScratchDatabase } from './helpers/scratch-db.js';
import { createAgent, createEndUser, insertQuery } from './helpers/support-data.js';

const MIGRATION = '0215_add_agent_resolution_minutes.sql';
const DAY = '2024-05-06T09:00:00.000Z';

/** An agent with one query it resolved in 10 minutes and one a person resolved after 590. */
async function seed(t: TestApp, tenant: TestTenant) {
  const agentId = await createAgent(t.container, tenant.companyId);
  const userId = await createEndUser(t.container, tenant.companyId);
  const createdAt = new Date(DAY);
  await insertQuery(t.container, tenant.companyId, { agentId, userId, createdAt, resolvedAfter: 10 });
  await insertQuery(t.container, tenant.companyId, { agentId, userId, createdAt, resolvedAfter: 590, escalated: true });
  return agentId;
}

async function figures(t: TestApp, tenant: TestTenant, agentId: string) {
  const agent = await t.app.inject({
    method: 'GET',
    url: `/api/public/agents/${agentId}`,
    headers: { 'x-api-key': tenant.apiKey },
  });
  expect(agent.statusCode).toBe(200);
  const dashboard = await t.app.inject({
    method: 'GET',
    url: '/customer-support/dashboard?start_date=2024-05-06T00:00:00Z&end_date=2024-05-07T00:00:00Z',
    headers: { 'x-api-key': tenant.apiKey },
  });
  expect(dashboard.statusCode).toBe(200);
  const body = dashboard.json<{
    avg_resolution_time: number;
    top_performing_agents: { agent_id: string; avg_resolution_time: number; success_rate: number }[];
  }>();
  return {
    metrics: agent.json<{ performance_metrics: Record<string, number> }>().performance_metrics,
    company: body.avg_resolution_time,
    top: body.top_performing_agents.find((row) => row.agent_id === agentId),
  };
}

function expectAgentsOwn(result: Awaited<ReturnType<typeof figures>>) {
  expect(result.metrics).toMatchObject({ total_queries_handled: 2, avg_resolution_time: 10, success_rate: 50 });
  expect(result.top).toMatchObject({ avg_resolution_time: 10, success_rate: 50 });
  // The company's resolution time keeps the person's resolution.
  expect(result.company).toBe(300);
}

describe("an agent's resolution time", () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let t: TestApp;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    const handle = createDatabase(scratch.url, 2);
    await migrateToLatest(handle.db);
    await handle.close();
    t = await createTestApp({ DATABASE_URL: scratch.url });
  });

  afterAll(async () => {
    await t?.close();
    await scratch?.drop();
  });

  it("leaves out a person's resolution, pending and folded alike", async () => {
    const tenant = await createTenant(t.container);
    const agentId = await seed(t, tenant);
    expectAgentsOwn(await figures(t, tenant, agentId));
    await foldAllRollups(t.container.db);
    const left = await sql<{ n: number }>`select count(*)::int as n from support_rollup_pending`.execute(
      t.container.db,
    );
    expect(left.rows[0]!.n).toBe(0);
    expectAgentsOwn(await figures(t, tenant, agentId));
  });
});

describe('migration 0215 on a database with support history', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let before: string;
  let t: TestApp;

  beforeAll(async () => {
    scratch = await createScratchDatabase();
    before = await mkdtemp(join(tmpdir(), 'migrations-before-0215-'));
    for (const file of await readdir(MIGRATIONS_DIR)) {
      if (file.endsWith('.sql') && file !== MIGRATION) await cp(join(MIGRATIONS_DIR, file), join(before, file));
    }
    const handle = createDatabase(scratch.url, 2);
    await migrateToLatest(handle.db, before);
    await handle.close();
    t = await createTestApp({ DATABASE_URL: scratch.url });
  });

  afterAll(async () => {
    await t?.close();
    await scratch?.drop();
    if (before) await rm(before, { recursive: true, force: true });
  });

  it("fills the agent's own minutes in from the queries, folded and pending alike", async () => {
    const tenant = await createTenant(t.container);
    const folded = await seed(t, tenant);
    // Half the history folded before the migration, half still pending.
    await sql`select support_rollup_fold(2147483647)`.execute(t.container.db);
    const pending = await seed(t, tenant);

    await migrateToLatest(t.container.db);

    expectAgentsOwnTwice(await figures(t, tenant, folded), await figures(t, tenant, pending));
    const rows = await sql<{ agent_id: string; minutes: number }>`
      select agent_id, agent_resolution_minutes_sum as minutes from support_agent_metrics
      where company_id = ${tenant.companyId} order by agent_id`.execute(t.container.db);
    expect(rows.rows.map((row) => row.minutes)).toEqual([10, 10]);
  });
});

/** Two agents seeded alike on one day: the company's mean is theirs, each agent's its own. */
function expectAgentsOwnTwice(...results: Awaited<ReturnType<typeof figures>>[]) {
  for (const result of results) {
    expect(result.metrics).toMatchObject({ total_queries_handled: 2, avg_resolution_time: 10, success_rate: 50 });
    expect(result.top).toMatchObject({ avg_resolution_time: 10, success_rate: 50 });
    expect(result.company).toBe(300);
  }
}
