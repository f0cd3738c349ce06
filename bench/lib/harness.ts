/**
 * What every benchmark needs: a database of its own, the service in its own process, and one
 * way of printing an autocannon result.
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type autocannon from 'autocannon';
import pg from 'pg';

export const ROOT = path.resolve(import.meta.dirname, '../..');
const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchDatabase {
  url: string;
  /** Drops the database, unless it was given by BENCH_DATABASE_URL (kept for reuse). */
  drop(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** BENCH_DATABASE_URL, else a fresh database on the local PostgreSQL. */
export async function benchDatabase(prefix = 'switchboard_bench'): Promise<BenchDatabase> {
  const given = process.env.BENCH_DATABASE_URL;
  if (given) return { url: given, drop: async () => undefined };
  const name = `${prefix}_${randomUUID().slice(0, 8)}`;
  await admin((client) => client.query(`create database ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => admin((client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

export function benchPort(): number {
  return 21000 + Math.floor(Math.random() * 10000);
}

export interface BenchService {
  base: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `src/main.ts` with `env` on `port` and waits until /readyz answers; `root`: another
 * checkout of the project (a bench comparing two versions of the code in one run); `dist`: the
 * built service, as `npm start` runs it (built first when a source is newer:
 * scripts/build-if-stale.mjs). tsx keeps every function's name by redefining it at run time,
 * which gives each closure made while serving a property store of its own: memory figures are the
 * built service's.
 */
export async function startService(
  port: number,
  env: Record<string, string>,
  options: { nodeArgs?: string[]; stdio?: StdioOptions; root?: string; dist?: boolean } = {},
): Promise<BenchService> {
  const root = options.root ?? ROOT;
  if (options.dist) {
    const built = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) throw new Error('the build failed');
  }
  const entry = options.dist ? ['dist/main.js'] : ['--import', 'tsx', 'src/main.ts'];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: options.stdio ?? ['ignore', 'pipe', 'inherit'],
  });
  const closed = new Promise((resolve) => child.on('close', resolve));
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill('SIGTERM');
    await closed;
  };
  // Up to three minutes: tsx compiles the service on start, slow on a loaded machine.
  const deadline = Date.now() + 180_000;
  while (
    !(await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error('the server did not become ready');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { base, process: child, stop };
}

/** Every per-minute rate limit lifted: a bench measures the service, not its limiter's refusals. */
export const LIFTED_RATE_LIMITS = {
  RATE_LIMIT_PUBLIC_PER_MINUTE: '10000000',
  RATE_LIMIT_CHAT_PER_MINUTE: '10000000',
  RATE_LIMIT_CHAT_STREAM_PER_MINUTE: '10000000',
  RATE_LIMIT_CHAT_CONVERSATIONS_PER_MINUTE: '10000000',
};

/** LLM_PROVIDERS naming the fake provider (bench/lib/fake-provider-process.ts) as `fake:gpt-bench`. */
export function fakeProviderEnv(url: string): { LLM_PROVIDERS: string } {
  return {
    LLM_PROVIDERS: JSON.stringify([
      { name: 'fake', type: 'openai', base_url: url, api_key: 'sk-fake', models: ['gpt-bench'] },
    ]),
  };
}

/**
 * The service on `database` for a bench: no embedder, rate limits lifted, then `env`; when it
 * does not start, `cleanUp` (by default the database's drop) runs before the error is thrown.
 */
export async function startBenchService(
  port: number,
  database: BenchDatabase,
  env: Record<string, string>,
  options: {
    nodeArgs?: string[];
    stdio?: StdioOptions;
    root?: string;
    dist?: boolean;
    cleanUp?: () => Promise<unknown>;
  } = {},
): Promise<BenchService> {
  return startService(
    port,
    { DATABASE_URL: database.url, EMBEDDINGS_PROVIDER: 'none', ...LIFTED_RATE_LIMITS, ...env },
    options,
  ).catch(async (error: unknown) => {
    await (options.cleanUp ?? database.drop)();
    throw error;
  });
}

/** Polls `check` every 50 ms until it holds; throws naming `what` after 30 s. */
export async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out: ${what}`);
}

/** The p-th percentile of sorted samples (nearest rank, as every bench here reads it). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One line of an autocannon result: requests/s, p50, p99, failures. */
export function formatResult(name: string, result: autocannon.Result, width = 36): string {
  return `${name.padEnd(width)} ${result.requests.average.toFixed(0).padStart(7)} req/s   p50 ${String(result.latency.p50).padStart(4)} ms   p99 ${String(result.latency.p99).padStart(4)} ms   non-2xx ${result.non2xx}   errors ${result.errors}`;
}

/**
 * A JSON client of the service's API under one API key: `api(method, url, body?)` answers the
 * parsed body and throws, naming the request and the answer, on any status other than 2xx.
 */
export function apiClient(base: string, apiKey: string) {
  return async function api(method: string, url: string, body?: unknown): Promise<Record<string, unknown>> {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

export interface FakeProviderProcess {
  url: string;
  /** Sets the reply of every following request; answers the connections accepted so far (TLS only). */
  script(reply: { tokens: string[]; delayMs?: number; hangAfter?: number }): Promise<{ connections?: number }>;
  close(): Promise<void>;
}

/**
 * The tests' fake OpenAI-compatible provider in its own process (bench/lib/fake-provider-process.ts);
 * with `tls` (PEM files) over HTTP/2 and TLS at https://localhost.
 */
export async function startFakeProviderProcess(
  options: { tls?: { certFile: string; keyFile: string } } = {},
): Promise<FakeProviderProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/lib/fake-provider-process.ts')], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: options.tls
      ? { ...process.env, FAKE_PROVIDER_TLS_CERT: options.tls.certFile, FAKE_PROVIDER_TLS_KEY: options.tls.keyFile }
      : process.env,
  });
  const closed = new Promise((resolve) => child.on('exit', resolve));
  type Reply = { url?: string; ok?: boolean; connections?: number };
  let waiting: { resolve(reply: Reply): void; reject(error: Error): void } | null = null;
  child.on('message', (reply: Reply) => waiting?.resolve(reply));
  child.on('exit', () => waiting?.reject(new Error('the fake provider exited')));
  const next = () =>
    new Promise<Reply>((resolve, reject) => {
      waiting = { resolve, reject };
    });
  const { url } = await next();
  return {
    url: url!,
    async script(reply) {
      const ack = next();
      child.send(reply);
      return { connections: (await ack).connections };
    },
    async close() {
      child.kill('SIGTERM');
      await closed;
    },
  };
}

type Api = ReturnType<typeof apiClient>;

/** The bench region of every migrated database (us-east). */
export const BENCH_REGION = '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001';

/**
 * The help centre the chat benches search: 40 short articles on ten topics, four each, each
 * uploaded and ingested before the next (so every turn's search feeds the prompt alike).
 */
export async function uploadHelpCentre(api: Api): Promise<void> {
  const topics = ['refund', 'shipping', 'password', 'invoice', 'subscription'];
  topics.push('warranty', 'delivery', 'account', 'payment', 'return');
  for (const [i, topic] of topics.flatMap((t) => [t, t, t, t]).entries()) {
    const upload = await api('POST', '/api/public/documents/upload/article', {
      document_title: `${topic} help, part ${i}`,
      content:
        `How to handle a ${topic} request. Customers who ask about a ${topic} should open the account page and follow the ${topic} steps. `.repeat(
          6,
        ),
    });
    await until(
      async () => (await api('GET', `/api/public/documents/task/${String(upload.task_id)}`)).status === 'completed',
      'ingestion',
    );
  }
}

/** Deploys an agent on `channel` in the bench region, starts it and waits until it is active; its id. */
export async function deployAgent(api: Api, agentId: unknown, channel: string, config?: string): Promise<string> {
  const deployment = await api('POST', '/api/public/deployments', {
    deployable_type: 'agent',
    deployable_id: agentId,
    channel,
    region_id: BENCH_REGION,
    ...(config !== undefined ? { config } : {}),
  });
  const id = String(deployment.id);
  await api('POST', `/api/public/deployments/${id}/start`);
  await until(async () => (await api('GET', `/api/public/deployments/${id}`)).status === 'active', 'roll-out');
  return id;
}
