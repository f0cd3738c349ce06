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
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { startServer, type RunningServer } from '../src/server.js';
import { childEnv, HOOK_WAIT_MS, listeningUrl, start, waitFor, type Started } from './helpers/processes.js';
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
    SECRET_KEY: inject('secretKey'),
    ...extra,
  });
}

async function get(server: RunningServer, url: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${url}`, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function run(args: string[], env: Record<string, string>, timeoutMs = 25_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: ROOT, env: childEnv(env) });
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

/** A scratch database with the migrations applied (the tests below are about what follows). */
async function migratedScratch() {
  const scratch = await createScratchDatabase();
  const handle = createDatabase(scratch.url, 2);
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  return scratch;
}

describe('bootstrap', () => {
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  beforeAll(async () => {
    scratch = await migratedScratch();
  });
  afterAll(async () => scratch?.drop());

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

      // The owner's first sign-in link sets a password once and signs in.
      const link = /(http:\/\/\S+\/console\/#\/set-password\?token=(pw_\S+))/.exec(text);
      expect(link).not.toBeNull();
      const setPassword = () =>
        server.app.inject({
          method: 'POST',
          url: '/api/public/auth/password',
          payload: { token: decodeURIComponent(link![2]!), password: 'a long first-start passphrase' },
        });
      const first = await setPassword();
      expect(first.statusCode).toBe(200);
      expect(first.json()).toMatchObject({ user: { email: 'owner@example.test' } });
      expect(String(first.headers['set-cookie'])).toMatch(/^sb_session=ss_/);
      expect((await setPassword()).statusCode).toBe(410);

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
});

describe('bootstrap with BOOTSTRAP_API_KEY and BOOTSTRAP_API_TOKEN', () => {
  let db: Awaited<ReturnType<typeof createScratchDatabase>>;
  beforeAll(async () => {
    db = await migratedScratch();
  });
  afterAll(async () => db?.drop());

  it('uses BOOTSTRAP_API_KEY and BOOTSTRAP_API_TOKEN exactly, without printing them', async () => {
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
    }
  });
});

describe('graceful shutdown', () => {
  let db: Awaited<ReturnType<typeof createScratchDatabase>>;
  beforeAll(async () => {
    db = await migratedScratch();
  });
  afterAll(async () => db?.drop());

  it('stops accepting, finishes the request in flight, then closes the database', async () => {
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
          (
            await blocker.query(
              "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
            )
          ).rows[0].n > 0,
        'the PUT to wait on the company row',
      );

      let finished = false;
      const stopping = server.shutdown().then(() => (finished = true));
      await waitFor(
        () =>
          fetch(`${server.url}/healthz`).then(
            () => false,
            () => true,
          ),
        'the server to stop accepting connections',
      );
      // Not finished while the request in flight waits on the lock.
      expect(finished).toBe(false);

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
    }
  });
});

describe('an embedded PostgreSQL', () => {
  const key = 'sk_embedded_test_key_000001';
  let dataDir: string;
  let service: Started;
  let url: string;
  // Started once (initdb, start, migrations): the test observes the running service, then stops it.
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'switchboard-embedded-'));
    await chmod(dataDir, 0o755);
    service = start(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: childEnv({
        DATABASE_URL: '',
        DATA_DIR: dataDir,
        PORT: '0', // the OS picks the port; the service logs its URL
        HOST: '127.0.0.1',
        BOOTSTRAP_API_KEY: key,
        LOG_LEVEL: 'debug', // PostgreSQL's own log lines are written at debug
      }),
    });
    url = await listeningUrl(service, HOOK_WAIT_MS);
  });
  afterAll(async () => {
    service?.child.kill('SIGKILL');
    await service?.exited;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('starts when DATABASE_URL is unset, serves, and stops it on SIGTERM after the job queue', async () => {
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const current = await fetch(`${url}/api/public/companies/current`, { headers: { 'x-api-key': key } });
    expect(current.status).toBe(200);
    await access(path.join(dataDir, 'postgres', 'postmaster.pid'));
    service.child.kill('SIGTERM');
    expect(await service.exited, service.output()).toBe(0);
    expect(service.output()).toContain('shutdown complete');
    await expect(access(path.join(dataDir, 'postgres', 'postmaster.pid'))).rejects.toThrow();
    // Every connection was closed before PostgreSQL stopped: it terminated none.
    expect(service.output()).not.toContain('terminating connection due to administrator command');
  });
});

describe('processes', () => {
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
});

describe('the CLI on a database of its own', () => {
  let db: Awaited<ReturnType<typeof createScratchDatabase>>;
  let env: Record<string, string>;
  let migrated: Awaited<ReturnType<typeof run>>;
  let server: RunningServer;
  let companyId: string;
  // `migrate` on an empty database, then the service on it (its bootstrap creates the company).
  beforeAll(async () => {
    db = await createScratchDatabase();
    env = { DATABASE_URL: db.url, LOG_LEVEL: 'silent' };
    migrated = await run(['src/cli.ts', 'migrate'], env);
    server = await startServer(configFor(db.url), silent, () => undefined);
    companyId = (await server.container.db.selectFrom('companies').select('id').executeTakeFirstOrThrow()).id;
  });
  afterAll(async () => {
    await server?.shutdown();
    await db?.drop();
  });

  it('migrates an empty database', () => {
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toContain('Applied: 0001_create_tenancy');
  });

  it('mints an API key for a new user with a role in a company', async () => {
    const keys = await run(
      ['src/cli.ts', 'keys', 'create', '--email', 'ops@example.test', '--company', companyId, '--role', 'developer'],
      env,
    );
    expect(keys.code, keys.stderr).toBe(0);
    const key = keys.stdout.trim().split('\n').at(-1)!;
    const me = await get(server, '/api/public/users/me', { 'x-api-key': key });
    expect(me.body).toMatchObject({ email: 'ops@example.test', role: 'developer', active_company_id: companyId });
  });

  it('mints a chat token of the only company', async () => {
    const tokens = await run(['src/cli.ts', 'tokens', 'create', '--name', 'widget'], env);
    expect(tokens.code, tokens.stderr).toBe(0);
    const token = tokens.stdout.trim().split('\n').at(-1)!;
    expect(await server.container.identity.authenticateChatToken(token)).toMatchObject({ companyId });
  });

  it('refuses a key for a bad e-mail address with 64', async () => {
    const bad = await run(['src/cli.ts', 'keys', 'create', '--email', 'nope'], env);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('--email must be an e-mail address');
  });
});
