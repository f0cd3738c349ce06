/**
 * The first run: `.env` is loaded (the environment wins), a port in use is one line naming PORT
 * before anything is started or bootstrapped, and the CLI tells its version.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, start } from './helpers/processes.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const TSX = import.meta.resolve('tsx');
const held: net.Server[] = [];
let work: string;

/** A port held by another server for the whole file. */
async function busyPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  held.push(server);
  return (server.address() as net.AddressInfo).port;
}

/** The service's entry run from `cwd`, with no database configured (one would be started in DATA_DIR). */
async function service(cwd: string, dataDir: string, env: Record<string, string> = {}) {
  const base = childEnv({ DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env });
  for (const name of ['PORT', 'HOST', 'BOOTSTRAP_API_KEY'] as const) if (!(name in env)) delete base[name];
  const run = start(process.execPath, ['--import', TSX, path.join(ROOT, 'src/main.ts')], { cwd, env: base });
  return { code: await run.exited, output: run.output() };
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'switchboard-first-run-'));
});
afterAll(async () => {
  for (const server of held) server.close();
  await rm(work, { recursive: true, force: true });
});

describe('the first run', () => {
  it(
    'refuses a port in use with one line naming PORT, having started and bootstrapped nothing',
    { timeout: 120_000 },
    async () => {
      const port = await busyPort();
      const dataDir = await mkdtemp(path.join(work, 'data-'));
      const result = await service(work, dataDir, { PORT: String(port), HOST: '127.0.0.1' });
      expect(result.code).not.toBe(0);
      const lines = result.output.trim().split('\n');
      expect(lines, result.output).toHaveLength(1);
      expect(lines[0]).toContain(`PORT ${port} is already in use`);
      expect(result.output).not.toMatch(/sk_|ct_/);
      expect(await readdir(dataDir)).toEqual([]);
    },
  );

  it(
    'loads .env from the directory it starts in, the environment winning over the file',
    { timeout: 120_000 },
    async () => {
      const [fromFile, fromEnv] = [await busyPort(), await busyPort()];
      const dir = await mkdtemp(path.join(work, 'dotenv-'));
      const dataDir = await mkdtemp(path.join(work, 'data-'));
      await writeFile(path.join(dir, '.env'), `# settings\nPORT=${fromFile}\nHOST="127.0.0.1"\n`);
      const loaded = await service(dir, dataDir);
      expect(loaded.output).toContain(`PORT ${fromFile} is already in use on 127.0.0.1`);
      const overridden = await service(dir, dataDir, { PORT: String(fromEnv) });
      expect(overridden.output).toContain(`PORT ${fromEnv} is already in use on 127.0.0.1`);
      expect(await readdir(dataDir)).toEqual([]);
    },
  );

  it('prints its version with --version', { timeout: 120_000 }, async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const run = start(process.execPath, ['--import', TSX, 'src/cli.ts', flag], { cwd: ROOT, env: childEnv() });
      expect(await run.exited, run.output()).toBe(0);
      expect(run.output().trim()).toBe(`switchboard ${pkg.version}`);
    }
  });
});
