/**
 * Throughput and p99 of the authenticated, database-backed `GET /api/public/companies/current`
 * against the unauthenticated `GET /healthz`, in the same run, on a server in its own process:
 * once as configured by default (callers and company records in the coherent cache), once with
 * CACHE_TTL_MS=0 (a key lookup and a company lookup in PostgreSQL on every request).
 *
 *   npx tsx bench/kernel/companies-current.ts [--duration 10] [--connections 50]
 *
 * Uses BENCH_DATABASE_URL, else a fresh database on the local PostgreSQL (dropped afterwards).
 * The rate limiter stays in the path with a limit high enough never to trigger.
 */
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { benchDatabase, benchPort, formatResult, startService } from '../lib/harness.js';

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '50' } },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const key = 'sk_bench_key_0000000000000001';

const database = await benchDatabase();
try {
  console.log(`connections ${connections}, ${duration} s each`);
  for (const [label, cacheTtlMs] of [
    ['default (coherent cache on)', '60000'],
    ['CACHE_TTL_MS=0 (every lookup in PostgreSQL)', '0'],
  ] as const) {
    const service = await startService(benchPort(), {
      DATABASE_URL: database.url,
      BOOTSTRAP_API_KEY: key,
      RATE_LIMIT_PUBLIC_PER_MINUTE: '10000000',
      RUN_WORKERS: 'false',
      CACHE_TTL_MS: cacheTtlMs,
    });
    try {
      const run = (url: string, seconds: number, headers: Record<string, string> = {}) =>
        autocannon({ url: `${service.base}${url}`, connections, duration: seconds, headers });
      await run('/healthz', 2);
      await run('/api/public/companies/current', 2, { 'x-api-key': key });
      const health = await run('/healthz', duration);
      const current = await run('/api/public/companies/current', duration, { 'x-api-key': key });
      console.log(`\n${label}`);
      console.log(formatResult('GET /healthz (baseline)', health));
      console.log(formatResult('GET /api/public/companies/current', current));
      console.log(
        `ratio (current / healthz): ${((current.requests.average / health.requests.average) * 100).toFixed(1)} % of baseline throughput (target ≥ 35 %)`,
      );
    } finally {
      await service.stop();
    }
  }
} finally {
  await database.drop();
}
