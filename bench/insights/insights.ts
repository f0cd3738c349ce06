/**
 * Support insights at scale: 1,000,000 support queries for one company (seeded with
 * `switchboard seed --demo --queries N --days 365`), then
 * - dashboard, stats (group_by=week) and analytics (granularity=day) for a 90-day window:
 *   sequential requests, p50/p95 (target: p50 under 300 ms each);
 * - the list endpoint's throughput (autocannon; default page of 50, and a filtered page),
 *   against GET /healthz in the same run, with the ratio.
 *
 *   npx tsx bench/insights/insights.ts [--queries 1000000] [--samples 25] [--duration 10] [--connections 10] [--keep]
 *
 * Uses BENCH_DATABASE_URL when set (seeded only when it has no support queries yet), else a fresh
 * database on the local PostgreSQL, dropped afterwards unless --keep. Rate limits are lifted.
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { benchDatabase, benchPort, ROOT, startService } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    queries: { type: 'string', default: '1000000' },
    samples: { type: 'string', default: '25' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    keep: { type: 'boolean', default: false },
  },
});
const key = 'sk_bench_insights_000000000001';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;
const headers = { 'x-api-key': key };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function timeSequential(url: string, samples: number): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < 3; i++) await fetch(`${base}${url}`, { headers }).then((r) => r.arrayBuffer());
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    const response = await fetch(`${base}${url}`, { headers });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

async function main() {
  const database = await benchDatabase('switchboard_bench_insights');
  const env = {
    ...process.env,
    DATABASE_URL: database.url,
    LOG_LEVEL: 'warn',
    BOOTSTRAP_API_KEY: key,
    RATE_LIMIT_ENABLED: 'false',
    RUN_WORKERS: 'false',
  };
  const server = await startService(port, {
    DATABASE_URL: database.url,
    BOOTSTRAP_API_KEY: key,
    RATE_LIMIT_ENABLED: 'false',
    RUN_WORKERS: 'false',
  }).catch(async (error: unknown) => {
    if (!values.keep) await database.drop();
    throw error;
  });
  try {
    const existing = await fetch(`${base}/customer-support?limit=1`, { headers }).then(
      (r) => r.json() as Promise<{ total: number }>,
    );
    if (existing.total === 0) {
      const started = Date.now();
      // Asynchronously, so that this process keeps serving its sockets while the seed runs.
      const seeder = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/cli.ts', 'seed', '--demo', '--queries', values.queries!, '--days', '365'],
        { cwd: ROOT, env, stdio: 'inherit' },
      );
      const status = await new Promise<number | null>((resolve) => seeder.on('close', resolve));
      if (status !== 0) throw new Error('seeding failed');
      console.log(`seeded ${values.queries} queries in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
    // Once more on failure: an idle keep-alive connection may have been closed during a long seed.
    const count = () =>
      fetch(`${base}/customer-support?limit=1`, { headers }).then((r) => r.json() as Promise<{ total: number }>);
    const total = await count().catch(count);
    console.log(`support queries in the company: ${total.total}`);

    const end = new Date();
    const start = new Date(end.getTime() - 90 * 86_400_000);
    const window = `start_date=${start.toISOString()}&end_date=${end.toISOString()}`;
    const samples = Number(values.samples);
    const health = await timeSequential('/healthz', samples);
    const line = (name: string, r: { p50: number; p95: number }, target?: number) =>
      `${name.padEnd(52)} p50 ${r.p50.toFixed(1).padStart(7)} ms   p95 ${r.p95.toFixed(1).padStart(7)} ms${target ? `   ${r.p50 < target ? 'under' : 'OVER'} ${target} ms` : ''}`;
    console.log(`\nlatency, ${samples} sequential requests each (90-day window)`);
    console.log(line('GET /healthz (baseline)', health));
    for (const [name, url] of [
      ['GET /customer-support/dashboard', `/customer-support/dashboard?${window}`],
      ['GET /customer-support/stats?group_by=week', `/customer-support/stats?${window}&group_by=week`],
      ['GET /customer-support/analytics?granularity=day', `/customer-support/analytics?${window}&granularity=day`],
    ] as const) {
      console.log(line(name, await timeSequential(url, samples), 300));
    }

    const connections = Number(values.connections);
    const duration = Number(values.duration);
    const cannon = (url: string) => autocannon({ url: `${base}${url}`, connections, duration, headers });
    await autocannon({ url: `${base}/customer-support`, connections, duration: 2, headers });
    const row = (name: string, r: autocannon.Result, baseline?: autocannon.Result) =>
      `${name.padEnd(52)} ${r.requests.average.toFixed(0).padStart(6)} req/s   p50 ${String(r.latency.p50).padStart(4)} ms   p99 ${String(r.latency.p99).padStart(4)} ms   non-2xx ${r.non2xx}${baseline ? `   ${((r.requests.average / baseline.requests.average) * 100).toFixed(1)} % of baseline` : ''}`;
    console.log(`\nthroughput, ${connections} connections, ${duration} s each`);
    const baseline = await cannon('/healthz');
    console.log(row('GET /healthz (baseline)', baseline));
    console.log(row('GET /customer-support (page of 50)', await cannon('/customer-support'), baseline));
    console.log(
      row(
        'GET /customer-support?status=open&priority=urgent',
        await cannon('/customer-support?status=open&priority=urgent'),
        baseline,
      ),
    );
    console.log(
      row(
        `GET /customer-support (90-day window, page 100)`,
        await cannon(`/customer-support?${window}&limit=100&skip=100`),
        baseline,
      ),
    );
  } finally {
    await server.stop();
    if (!values.keep) await database.drop();
    else console.log(`kept database ${new URL(database.url).pathname.slice(1)}`);
  }
}

await main();
