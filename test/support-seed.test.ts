/**
 * `switchboard seed --demo` end to end on a database of its own: the replay path and the bulk
 * path, and the rollups checked against plain SQL over the seeded rows.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { childEnv } from './helpers/processes.js';
import { createScratchDatabase } from './helpers/scratch-db.js';

const ROOT = path.resolve(import.meta.dirname, '..');
/** A seed run in a hook (hookTimeout 60 s); a refused one in a test ends at once. */
const SEED_MS = 55_000;

function run(args: string[], env: Record<string, string>, timeoutMs = 120_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: ROOT,
      env: childEnv(env),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let db: Awaited<ReturnType<typeof createScratchDatabase>>;
let t: TestApp;
let env: Record<string, string>;

beforeAll(async () => {
  db = await createScratchDatabase();
  env = { DATABASE_URL: db.url, LOG_LEVEL: 'silent' };
  const migrated = await run(['migrate'], env);
  expect(migrated.code, migrated.stderr).toBe(0);
  t = await createTestApp({ DATABASE_URL: db.url });
});
afterAll(async () => {
  await t?.close();
  await db?.drop();
});

async function get(tenant: TestTenant, url: string) {
  return (await t.app.inject({ method: 'GET', url, headers: tenant.headers })).json();
}

/** A company, seeded by the CLI in a hook (a seed is setup that the tests below observe). */
function seededCompany(name: string, args: string[]) {
  const seeded = {
    tenant: undefined as unknown as TestTenant,
    result: { code: null as number | null, stdout: '', stderr: '' },
  };
  beforeAll(async () => {
    seeded.tenant = await createTenant(t.container, 'owner', name);
    seeded.result = await run(['seed', '--demo', '--company', name, ...args], env, SEED_MS);
  });
  return seeded;
}

describe('switchboard seed --demo, replaying 120 conversations', () => {
  const seeded = seededCompany('Replay Co', ['--queries', '120', '--days', '30']);

  it('reports its agents and exits 0', () => {
    expect(seeded.result.code, seeded.result.stderr).toBe(0);
    expect(seeded.result.stdout).toContain('6 agents');
  });

  it('records the queries through the recorder, with agent performance and resolutions', async () => {
    const list = await get(seeded.tenant, '/customer-support?limit=100');
    expect(list.total).toBe(120);
    expect(list.data[0].agent.performance_metrics.total_queries_handled).toBeGreaterThan(0);
    const stats = await get(seeded.tenant, '/customer-support/stats?start_date=2000-01-01');
    expect(stats.total_queries).toBe(120);
    expect(stats.by_status.resolved + stats.by_status.closed).toBeGreaterThan(60);
    expect(stats.resolution_metrics.agent_resolved).toBeGreaterThan(0);
  });

  it('notifies the members', async () => {
    const notifications = await get(seeded.tenant, '/team-notifications?include_expired=true&limit=100');
    expect(notifications.total).toBeGreaterThanOrEqual(20);
    expect(notifications.data[0].recipients.map((r: { user_id: string }) => r.user_id)).toEqual([seeded.tenant.userId]);
    const mine = await get(seeded.tenant, '/team-notifications/stats?include_expired=true');
    expect(Object.values(mine.by_type as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(
      mine.total_notifications,
    );
  });
});

describe('switchboard seed --demo, 12,000 queries in bulk', () => {
  const seeded = seededCompany('Bulk Co', ['--queries', '12000', '--days', '120']);

  it('exits 0 and the stats count every row by status', async () => {
    expect(seeded.result.code, seeded.result.stderr).toBe(0);
    const { rows } = await sql<{ status: string; n: number }>`
      select status, count(*) as n from support_queries where company_id = ${seeded.tenant.companyId} group by status`.execute(
      t.container.db,
    );
    const window = `start_date=${new Date(Date.now() - 200 * 86_400_000).toISOString()}`;
    const stats = await get(seeded.tenant, `/customer-support/stats?${window}`);
    expect(stats.total_queries).toBe(12_000);
    for (const row of rows) expect(stats.by_status[row.status]).toBe(row.n);
  });

  it('agrees with plain SQL over a window cut inside the history', async () => {
    const start = new Date(Date.now() - 45 * 86_400_000 + 1234567);
    const end = new Date(Date.now() - 3 * 86_400_000 - 7654321);
    const cut = `start_date=${start.toISOString()}&end_date=${end.toISOString()}`;
    const { rows: exact } = await sql<{ total: number; resolved: number; median: number | null; avg: number | null }>`
      select count(*) as total, count(resolved_at) as resolved,
        percentile_cont(0.5) within group (order by extract(epoch from (resolved_at - created_at)) / 60) as median,
        avg(extract(epoch from (resolved_at - created_at)) / 60) as avg
      from support_queries where company_id = ${seeded.tenant.companyId} and created_at >= ${start} and created_at <= ${end}`.execute(
      t.container.db,
    );
    expect(exact[0]!.total).toBeGreaterThan(0);
    const cutStats = await get(seeded.tenant, `/customer-support/stats?${cut}`);
    expect(cutStats.total_queries).toBe(exact[0]!.total);
    expect(cutStats.resolution_metrics.total_resolved).toBe(exact[0]!.resolved);
    expect(cutStats.resolution_metrics.median_resolution_time).toBeCloseTo(exact[0]!.median ?? 0, 1);
    expect(cutStats.resolution_metrics.avg_resolution_time).toBeCloseTo(exact[0]!.avg ?? 0, 1);
    expect((await get(seeded.tenant, `/customer-support?${cut}&limit=1`)).total).toBe(exact[0]!.total);
  });
});

describe('switchboard seed arguments', () => {
  it.each([
    [['seed'], '--demo'],
    [['seed', '--demo', '--company', 'Replay Co', '--queries', 'lots'], '--queries'],
    [['seed', '--demo', '--company', 'Nobody Inc'], 'No company'],
  ])('refuses %j with 64, naming %s', async (args, named) => {
    const refused = await run(args, env);
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain(named);
  });
});
