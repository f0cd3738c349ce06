/**
 * `npm start` as docker and systemd stop it: SIGTERM to npm's pid alone. The service behind
 * npm must shut down gracefully and take its embedded PostgreSQL with it, freeing both ports.
 */
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accepting, alive, descendants, killAll, listeningUrl, start, waitFor } from './helpers/processes.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('npm start', () => {
  it.skipIf(process.platform !== 'linux')(
    'stops the whole process tree when npm alone gets SIGTERM (needs Linux /proc)',
    async () => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'switchboard-npm-start-'));
      await chmod(dataDir, 0o755);
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      const npm = start('npm', ['start'], {
        cwd: ROOT,
        detached: true, // its own process group: the signal below reaches npm and nothing else
        env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      });
      let tree: number[] = [];
      cleanups.push(async () => {
        killAll([...tree, ...(await descendants(npm.child.pid!))]);
        npm.child.kill('SIGKILL');
      });

      const url = await listeningUrl(npm, 100_000);
      const port = Number(new URL(url).port);
      const database = JSON.parse(await readFile(path.join(dataDir, 'embedded-postgres.json'), 'utf8')) as {
        pid: number;
        port: number;
      };
      tree = await descendants(npm.child.pid!);
      expect(tree).toContain(database.pid);
      expect(tree.length).toBeGreaterThan(2); // the service, the postmaster and its workers
      expect(await accepting(port)).toBe(true);

      process.kill(npm.child.pid!, 'SIGTERM');
      await npm.ended;
      await waitFor(() => tree.every((pid) => !alive(pid)), 'every process of the tree to exit', 30_000);
      expect(npm.output()).toContain('shutdown complete');
      expect(await accepting(port)).toBe(false);
      expect(await accepting(database.port)).toBe(false);
    },
    120_000,
  );
});
