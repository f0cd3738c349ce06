/**
 * `npm start` as docker and systemd stop it: SIGTERM to npm's pid alone. The service behind
 * npm must shut down gracefully and take its embedded PostgreSQL with it, freeing both ports.
 */
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accepting,
  alive,
  descendants,
  HOOK_WAIT_MS,
  killAll,
  listeningUrl,
  start,
  waitFor,
  type Started,
} from './helpers/processes.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe.skipIf(process.platform !== 'linux')('npm start (needs Linux /proc)', () => {
  let npm: Started;
  let port: number;
  let database: { pid: number; port: number };
  let tree: number[] = [];
  // dist/ built first, in a hook of its own: npm start's prestart build is then incremental.
  beforeAll(async () => {
    const build = start('npm', ['run', 'build', '--silent'], { cwd: ROOT });
    expect(await build.exited, build.output()).toBe(0);
  });
  // The service started through npm (an embedded PostgreSQL's first start), and its process tree.
  beforeAll(async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'switchboard-npm-start-'));
    await chmod(dataDir, 0o755);
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    npm = start('npm', ['start'], {
      cwd: ROOT,
      detached: true, // its own process group: the signal below reaches npm and nothing else
      env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    });
    cleanups.push(async () => {
      killAll([...tree, ...(await descendants(npm.child.pid!))]);
      npm.child.kill('SIGKILL');
    });
    port = Number(new URL(await listeningUrl(npm, HOOK_WAIT_MS)).port);
    database = JSON.parse(await readFile(path.join(dataDir, 'embedded-postgres.json'), 'utf8')) as typeof database;
    tree = await descendants(npm.child.pid!);
  });

  it('stops the whole process tree when npm alone gets SIGTERM', async () => {
    expect(tree).toContain(database.pid);
    expect(tree.length).toBeGreaterThan(2); // the service, the postmaster and its workers
    expect(await accepting(port)).toBe(true);

    process.kill(npm.child.pid!, 'SIGTERM');
    await npm.ended;
    await waitFor(() => tree.every((pid) => !alive(pid)), 'every process of the tree to exit');
    expect(npm.output()).toContain('shutdown complete');
    expect(await accepting(port)).toBe(false);
    expect(await accepting(database.port)).toBe(false);
  });
});
