/**
 * The console: first load and the insights page's API time.
 * - First load: the bytes a browser transfers for /console/ (index.html, its script and
 *   stylesheet), gzipped as the service sends them, and raw for comparison.
 * - Insights page: its three calls (dashboard, analytics, stats for the last 30 days, in parallel,
 *   as the page makes them) with the console's session cookie, over `--queries` support queries of
 *   one company (seeded with `switchboard seed --demo`), p50/p95 of the page's wall time, against
 *   GET /healthz in the same run.
 *
 *   npx tsx bench/console/console.ts [--queries 1000000] [--samples 25] [--keep]
 *
 * Needs the console built (`npm run build`). Uses BENCH_DATABASE_URL when set (seeded only when it
 * has no support queries yet), else a fresh database on the local PostgreSQL, dropped afterwards.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { parseArgs } from 'node:util';
import { benchDatabase, benchPort, percentile, ROOT, startBenchService } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    queries: { type: 'string', default: '1000000' },
    samples: { type: 'string', default: '25' },
    keep: { type: 'boolean', default: false },
  },
});
const key = 'sk_bench_console_0000000000001';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;

/** The body's bytes as they travel (no decompression), and the raw size when decompressed. */
function transfer(path: string, gzip: boolean): Promise<{ bytes: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { headers: gzip ? { 'accept-encoding': 'gzip' } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({ bytes: raw.length, body: gzip ? '' : raw.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function firstLoad() {
  const index = await transfer('/console/', false);
  const assets = [...index.body.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  let gzipped = (await transfer('/console/', true)).bytes;
  let raw = index.bytes;
  for (const asset of assets) {
    gzipped += (await transfer(asset, true)).bytes;
    raw += (await transfer(asset, false)).bytes;
  }
  console.log(`first load of /console/: ${assets.length + 1} files`);
  console.log(`  gzipped ${(gzipped / 1024).toFixed(1)} KiB transferred (raw ${(raw / 1024).toFixed(1)} KiB)`);
}

const PASSWORD = 'bench console passphrase';

/**
 * A console session of the bootstrap owner: on a fresh database through the first sign-in link
 * the service printed (setting the password), on a reused one (BENCH_DATABASE_URL, `--keep`) by
 * e-mail and that password.
 */
async function signIn(stdout: NodeJS.ReadableStream): Promise<string> {
  const printed = new Promise<string>((resolve) => {
    let text = '';
    stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (/set-password\?token=\S+/.test(text)) resolve(text);
    });
  });
  const me = await fetch(`${base}/api/public/users/me`, { headers: { 'x-api-key': key } });
  const { email } = (await me.json()) as { email: string };
  const again = await fetch(`${base}/api/public/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  if (again.ok) return again.headers.get('set-cookie')!.split(';')[0]!;
  const token = decodeURIComponent(/set-password\?token=(\S+)/.exec(await printed)![1]!);
  const response = await fetch(`${base}/api/public/auth/password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password: PASSWORD }),
  });
  if (!response.ok) throw new Error(`setting the password answered ${response.status}`);
  return response.headers.get('set-cookie')!.split(';')[0]!;
}

async function timed(samples: number, work: () => Promise<void>) {
  for (let i = 0; i < 3; i++) await work();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

async function main() {
  const database = await benchDatabase('switchboard_bench_console');
  // The service in its own process, its stdout piped (the first sign-in link is read from it).
  const server = await startBenchService(port, database, {
    BOOTSTRAP_API_KEY: key,
    RATE_LIMIT_ENABLED: 'false',
    RUN_WORKERS: 'false',
  });
  try {
    const cookie = await signIn(server.process.stdout!);
    const headers = { cookie };
    const count = await fetch(`${base}/customer-support?limit=1`, { headers }).then(
      (r) => r.json() as Promise<{ total: number }>,
    );
    if (count.total === 0) {
      const started = Date.now();
      const seeder = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/cli.ts', 'seed', '--demo', '--queries', values.queries!, '--days', '365'],
        { cwd: ROOT, env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn' }, stdio: 'inherit' },
      );
      const status = await new Promise<number | null>((resolve) => seeder.on('close', resolve));
      if (status !== 0) throw new Error('seeding failed');
      console.log(`seeded ${values.queries} queries in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
    const total = await fetch(`${base}/customer-support?limit=1`, { headers }).then(
      (r) => r.json() as Promise<{ total: number }>,
    );
    console.log(`support queries in the company: ${total.total}`);

    await firstLoad();

    const start = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const get = async (path: string) => {
      const response = await fetch(`${base}${path}`, { headers });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`${path} answered ${response.status}`);
    };
    const samples = Number(values.samples);
    const health = await timed(samples, () => get('/healthz'));
    // Each call's own time within the page loads (the three run at once, as in the page).
    const calls = {
      dashboard: `/customer-support/dashboard?start_date=${start}`,
      analytics: `/customer-support/analytics?start_date=${start}&granularity=day`,
      stats: `/customer-support/stats?start_date=${start}`,
    };
    const each: Record<string, number[]> = { dashboard: [], analytics: [], stats: [] };
    const page = await timed(samples, async () => {
      await Promise.all(
        Object.entries(calls).map(async ([name, path]) => {
          const started = performance.now();
          await get(path);
          each[name]!.push(performance.now() - started);
        }),
      );
    });
    const line = (name: string, r: { p50: number; p95: number }) =>
      `${name.padEnd(48)} p50 ${r.p50.toFixed(1).padStart(7)} ms   p95 ${r.p95.toFixed(1).padStart(7)} ms`;
    console.log(`\ninsights page API time, ${samples} sequential page loads (session cookie, last 30 days)`);
    console.log(line('GET /healthz (baseline)', health));
    for (const [name, times] of Object.entries(each)) {
      const sorted = times.slice(3).sort((a, b) => a - b);
      console.log(line(`  ${name} (within the page)`, { p50: percentile(sorted, 50), p95: percentile(sorted, 95) }));
    }
    console.log(
      `${line('dashboard + analytics + stats, in parallel', page)}   target p50 < 150 ms: ${page.p50 < 150 ? 'met' : 'NOT met'}`,
    );
  } finally {
    await server.stop();
    if (!values.keep) await database.drop();
    else console.log(`kept database ${new URL(database.url).pathname.slice(1)}`);
  }
}

await main();
