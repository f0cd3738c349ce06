/**
 * What every benchmark needs: a database of its own, the service in its own process, and one
 * way of printing an autocannon result.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
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

/** Starts `src/main.ts` with `env` on `port` and waits until /readyz answers. */
export async function startService(
  port: number,
  env: Record<string, string>,
  options: { nodeArgs?: string[]; stdio?: StdioOptions } = {},
): Promise<BenchService> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: options.stdio ?? ['ignore', 'pipe', 'inherit'],
  });
  const closed = new Promise((resolve) => child.on('close', resolve));
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill('SIGTERM');
    await closed;
  };
  let ready = false;
  for (let i = 0; i < 300 && !ready; i++) {
    ready = await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!ready) {
    await stop();
    throw new Error('the server did not become ready');
  }
  return { base, process: child, stop };
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
  /** Sets the reply of every following request. */
  script(reply: { tokens: string[]; delayMs?: number }): Promise<void>;
  close(): Promise<void>;
}

/** The tests' fake OpenAI-compatible provider in its own process (bench/lib/fake-provider-process.ts). */
export async function startFakeProviderProcess(): Promise<FakeProviderProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/lib/fake-provider-process.ts')], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const closed = new Promise((resolve) => child.on('exit', resolve));
  type Reply = { url?: string; ok?: boolean };
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
      await ack;
    },
    async close() {
      child.kill('SIGTERM');
      await closed;
    },
  };
}
