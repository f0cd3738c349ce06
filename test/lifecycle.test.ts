/**
 * Start-up and shutdown as a user meets them: bootstrap on an empty database (with and without the
 * BOOTSTRAP_* variables), graceful shutdown with a request in flight, the embedded database, the CLI
 * and a bad configuration.
 */
import { spawn } from 'node:child_process';
import { access, chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createScratchDatabase } from './helpers/scratch-db.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const silent = pino({ level: 'silent' });

function configFor(databaseUrl: string, extra: Record<string, string> = {}) {
  return loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    RUN_WORKERS: 'false',
    ...extra,
  });
}

async function get(server: RunningServer, url: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${url}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function run(args: string[], env: Record<string, string>, timeoutMs = 60_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('bootstrap', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  beforeAll(async () => {
    scratch = await createScratchDatabase();
  });
  afterAll(async () => scratch.drop());

  it('creates a company, owner, key and token once, printing generated secrets once', async () => {
    const printed: string[] = [];
    let server = await startServer(
      configFor(scratch.url, { BOOTSTRAP_ADMIN_EMAIL: 'Owner@Example.test' }),
      silent,
      (text) => printed.push(text),
    );
    try {
      const text = printed.join('\n');
      const key = /x-api-key\s+: (sk_\S+)/.exec(text)?.[1];
      const token = /x-api-token\s+: (ct_\S+)/.exec(text)?.[1];
      expect(key).toBeDefined();
      expect(token).toBeDefined();
      expect(text).toContain('owner@example.test');
      const current = await get(server, '/api/public/companies/current', { 'x-api-key': key! });
      expect(current).toMatchObject({ status: 200, body: { name: 'Default company' } });
      const me = await get(server, '/api/public/users/me', { 'x-api-key': key! });
      expect(me.body).toMatchObject({ email: 'owner@example.test', role: 'owner' });
      expect(await server.container.identity.authenticateChatToken(token!)).toMatchObject({
        companyId: current.body.id,
      });
      const stored = await server.container.db.selectFrom('api_keys').select(['key_hash', 'key_hint']).execute();
      expect(JSON.stringify(stored)).not.toContain(key!);

      await server.shutdown();
      printed.length = 0;
      server = await startServer(configFor(scratch.url), silent, (line) => printed.push(line));
      expect(printed).toEqual([]);
      expect((await get(server, '/api/public/companies/current', { 'x-api-key': key! })).status).toBe(200);
      const companies = await server.container.db.selectFrom('companies').select('id').execute();
      expect(companies).toHaveLength(1);
    } finally {
      await server.shutdown();
    }
  });

  it('uses BOOTSTRAP_API_KEY and BOOTSTRAP_API_TOKEN exactly, without printing them', async () => {
    const db = await createScratchDatabase();
    const key = 'sk_known_value_for_scripts_0001';
    const token = 'ct_known_value_for_scripts_0001';
    const printed: string[] = [];
    const server = await startServer(
      configFor(db.url, { BOOTSTRAP_API_KEY: key, BOOTSTRAP_API_TOKEN: token }),
      silent,
      (text) => printed.push(text),
    );
    try {
      expect(printed.join('\n')).not.toContain(key);
      expect(printed.join('\n')).not.toContain(token);
      expect(printed.join('\n')).toContain('sk_••••0001');
      expect((await get(server, '/api/public/companies/current', { 'x-api-key': key })).status).toBe(200);
      expect(await server.container.identity.authenticateChatToken(token)).not.toBeNull();
    } finally {
      await server.shutdown();
      await db.drop();
    }
  });
});

describe('graceful shutdown', () => {
  it('stops accepting, finishes the request in flight, then closes the database', async () => {
    const db = await createScratchDatabase();
    const key = 'sk_shutdown_test_key_000001';
    const server = await startServer(configFor(db.url, { BOOTSTRAP_API_KEY: key }), silent, () => undefined);
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      // Hold the company row so that the PUT below is in flight (waiting on the lock) during shutdown.
      await blocker.query('begin');
      await blocker.query('select id from companies for update');
      const inFlight = fetch(`${server.url}/api/public/companies`, {
        method: 'PUT',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ industry: 'telecom' }),
      });
      await waitFor(
        async () =>
          (await blocker.query("select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'"))
            .rows[0].n > 0,
      );

      let finished = false;
      const stopping = server.shutdown().then(() => (finished = true));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(finished).toBe(false);
      await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();

      await blocker.query('commit');
      const response = await inFlight;
      expect(response.status).toBe(200);
      expect(((await response.json()) as { industry: string }).industry).toBe('telecom');
      await stopping;
      expect(finished).toBe(true);
      await expect(server.container.db.selectFrom('companies').select('id').execute()).rejects.toThrow();
    } finally {
      await blocker.end();
      await server.shutdown();
      await db.drop();
    }
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('condition not met in time');
}

describe('processes', () => {
  it('starts with an embedded PostgreSQL when DATABASE_URL is unset, serves, and stops it on SIGTERM', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'switchboard-embedded-'));
    await chmod(dataDir, 0o755);
    const port = 20000 + Math.floor(Math.random() * 20000);
    const key = 'sk_embedded_test_key_000001';
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: '',
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        BOOTSTRAP_API_KEY: key,
        LOG_LEVEL: 'info',
      },
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await waitFor(async () => output.includes('switchboard is listening'), 90_000);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      const current = await fetch(`http://127.0.0.1:${port}/api/public/companies/current`, {
        headers: { 'x-api-key': key },
      });
      expect(current.status).toBe(200);
      await access(path.join(dataDir, 'postgres', 'postmaster.pid'));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toContain('shutdown complete');
      await expect(access(path.join(dataDir, 'postgres', 'postmaster.pid'))).rejects.toThrow();
    } finally {
      child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('has npm start and the CLI bin pointing at files the build produces', async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    const entry = /^(?:exec )?node (\S+)$/.exec(pkg.scripts.start ?? '')?.[1];
    expect(entry).toBeDefined();
    // `npm ci` builds dist/ through `prepare`; npm start and the bin must run what it emits.
    await access(path.join(ROOT, entry!));
    const bin = await readFile(path.join(ROOT, pkg.bin.switchboard!), 'utf8');
    const target = /import '(\.\.\/dist\/[^']+)'/.exec(bin)?.[1];
    expect(target).toBeDefined();
    await access(path.resolve(ROOT, 'bin', target!));
  });

  it('refuses a bad configuration with a message naming the variable', async () => {
    const result = await run(['src/main.ts'], { PORT: 'eighty' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('Invalid configuration: PORT must be an integer, got "eighty"');
  });

  it('mints keys and chat tokens from the CLI, and migrates', async () => {
    const db = await createScratchDatabase();
    try {
      const migrated = await run(['src/cli.ts', 'migrate'], { DATABASE_URL: db.url, LOG_LEVEL: 'silent' });
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(migrated.stdout).toContain('Applied: 0001_create_tenancy');
      const server = await startServer(configFor(db.url), silent, () => undefined);
      try {
        const company = await server.container.db.selectFrom('companies').select('id').executeTakeFirstOrThrow();
        const keys = await run(
          [
            'src/cli.ts',
            'keys',
            'create',
            '--email',
            'ops@example.test',
            '--company',
            company.id,
            '--role',
            'developer',
          ],
          { DATABASE_URL: db.url, LOG_LEVEL: 'silent' },
        );
        expect(keys.code, keys.stderr).toBe(0);
        const key = keys.stdout.trim().split('\n').at(-1)!;
        const me = await get(server, '/api/public/users/me', { 'x-api-key': key });
        expect(me.body).toMatchObject({ email: 'ops@example.test', role: 'developer', active_company_id: company.id });

        const tokens = await run(['src/cli.ts', 'tokens', 'create', '--name', 'widget'], {
          DATABASE_URL: db.url,
          LOG_LEVEL: 'silent',
        });
        expect(tokens.code, tokens.stderr).toBe(0);
        const token = tokens.stdout.trim().split('\n').at(-1)!;
        expect(await server.container.identity.authenticateChatToken(token)).toMatchObject({ companyId: company.id });

        const bad = await run(['src/cli.ts', 'keys', 'create', '--email', 'nope'], {
          DATABASE_URL: db.url,
          LOG_LEVEL: 'silent',
        });
        expect(bad.code).toBe(64);
        expect(bad.stderr).toContain('--email must be an e-mail address');
      } finally {
        await server.shutdown();
      }
    } finally {
      await db.drop();
    }
  }, 120_000);
});
