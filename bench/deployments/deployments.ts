/**
 * Deployments benchmark, on a server in its own process with its job workers on:
 *
 * 1. Roll-out latency: create + start + poll GET until active, one deployment after another
 *    (each on its own channel), with the time split into create, start and roll-out.
 * 2. List throughput with 10,000 deployments in the company: `GET /api/public/deployments`
 *    (default page), a filtered page of 100, and one deployment's logs (of 5,000), each against
 *    `GET /healthz` as the baseline measured in the same run; `GET /companies/current` (one
 *    authenticated row lookup) is printed too, as the reference for an authenticated route.
 *
 *   npx tsx bench/deployments/deployments.ts [--rollouts 30] [--duration 10] [--connections 50]
 *
 * Uses BENCH_DATABASE_URL, else a fresh database on the local PostgreSQL (dropped afterwards).
 * The rate limiter stays in the path with a limit high enough never to trigger.
 */
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { benchDatabase, benchPort, formatResult, startBenchService } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    rollouts: { type: 'string', default: '30' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
  },
});
const rollouts = Number(values.rollouts);
const duration = Number(values.duration);
const connections = Number(values.connections);
const key = 'sk_bench_key_0000000000000001';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;
const headers = { 'x-api-key': key };
const US_EAST = '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001';

async function api<T>(method: string, url: string, body?: unknown): Promise<T> {
  const res = await fetch(
    `${base}${url}`,
    body === undefined
      ? { method, headers }
      : { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) },
  );
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(name: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((sum, x) => sum + x, 0) / samples.length;
  return `${name.padEnd(22)} mean ${mean.toFixed(1).padStart(7)} ms   p50 ${percentile(sorted, 50).toFixed(1).padStart(7)} ms   p95 ${percentile(sorted, 95).toFixed(1).padStart(7)} ms   max ${sorted.at(-1)!.toFixed(1).padStart(7)} ms`;
}

async function measureRollouts(agentId: string) {
  const create: number[] = [];
  const start: number[] = [];
  const rollout: number[] = [];
  const total: number[] = [];
  for (let i = 0; i < rollouts; i++) {
    const t0 = performance.now();
    const deployment = await api<{ id: string }>('POST', '/api/public/deployments', {
      deployable_type: 'agent',
      deployable_id: agentId,
      channel: `bench${i}`,
      region_id: US_EAST,
    });
    const t1 = performance.now();
    await api('POST', `/api/public/deployments/${deployment.id}/start`);
    const t2 = performance.now();
    for (;;) {
      const current = await api<{ status: string; error: string | null }>(
        'GET',
        `/api/public/deployments/${deployment.id}`,
      );
      if (current.status === 'active') break;
      if (current.status !== 'deploying') throw new Error(`roll-out ended ${current.status}: ${current.error}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const t3 = performance.now();
    create.push(t1 - t0);
    start.push(t2 - t1);
    rollout.push(t3 - t2);
    total.push(t3 - t0);
  }
  return { create, start, rollout, total };
}

/** 10,000 deployments of the company (a tenth of them active on distinct channels), written in one statement. */
async function seedDeployments(databaseUrl: string, agentId: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ company_id: string; user_id: string }>(
    'select company_id, created_by as user_id from agents where id = $1',
    [agentId],
  );
  const { company_id: companyId, user_id: userId } = rows[0]!;
  await client.query(
    `insert into deployments (company_id, user_id, deployable_type, deployable_id, agent_id, channel, region_id, languages, status, created_at)
     select $1, $2, 'agent', $3, $3, 'seed' || n, $4, 'en',
            (array['pending','failed','cancelled','active','paused','pending','failed','cancelled','pending','cancelled'])[n % 10 + 1],
            now() - make_interval(secs => n)
     from generate_series(1, 10000) as n`,
    [companyId, userId, agentId, US_EAST],
  );
  const deployment = await client.query<{ id: string }>(`select id from deployments where channel = 'seed1'`);
  const id = deployment.rows[0]!.id;
  await client.query(
    `insert into deployment_logs (deployment_id, level, message) select $1, 'info', 'chat served #' || n from generate_series(1, 5000) as n`,
    [id],
  );
  await client.query('analyze deployments; analyze deployment_logs');
  await client.end();
  return id;
}

async function main() {
  const database = await benchDatabase();
  const databaseUrl = database.url;
  const server = await startBenchService(port, database, { BOOTSTRAP_API_KEY: key, RUN_WORKERS: 'true' });
  try {
    const agent = await api<{ id: string }>('POST', '/api/public/agents', {
      title: 'Bench agent',
      instructions: 'Answer from the knowledge base.',
    });

    const latency = await measureRollouts(agent.id);
    console.log(`roll-out latency, ${rollouts} deployments one after another (job polling interval 500 ms):`);
    console.log(summary('create (POST)', latency.create));
    console.log(summary('start (POST)', latency.start));
    console.log(summary('start → active', latency.rollout));
    console.log(summary('create → active', latency.total));

    const logsOf = await seedDeployments(databaseUrl, agent.id);
    const run = (url: string, auth: boolean) =>
      autocannon({ url: `${base}${url}`, connections, duration, headers: auth ? { 'x-api-key': key } : {} });
    const targets = [
      ['GET /companies/current (reference)', '/api/public/companies/current'],
      ['GET /deployments (20 of 10k)', '/api/public/deployments'],
      ['GET /deployments?status&limit=100', '/api/public/deployments?status=active&limit=100'],
      ['GET /deployments/{id}/logs (100)', `/api/public/deployments/${logsOf}/logs`],
    ] as const;
    await autocannon({ url: `${base}/healthz`, connections, duration: 2 });
    for (const [, url] of targets)
      await autocannon({ url: `${base}${url}`, connections, duration: 2, headers: { 'x-api-key': key } });
    const health = await run('/healthz', false);
    console.log(
      `\nthroughput, connections ${connections}, ${duration} s each, ${10_000 + rollouts} deployments in the company:`,
    );
    console.log(formatResult('GET /healthz (baseline)', health));
    for (const [name, url] of targets) {
      const result = await run(url, true);
      console.log(
        `${formatResult(name, result)}   ${((result.requests.average / health.requests.average) * 100).toFixed(1)} % of baseline`,
      );
    }
  } finally {
    await server.stop();
    await database.drop();
  }
}

await main();
