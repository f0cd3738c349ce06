/**
 * The CLI's arguments: every command answers --help/-h with its usage and does nothing else (no
 * database is started or reached), and an unknown option or stray argument is refused with the
 * command's usage.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, start } from './helpers/processes.js';

const ROOT = path.resolve(import.meta.dirname, '..');
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'switchboard-cli-'));
});
afterAll(async () => rm(dataDir, { recursive: true, force: true }));

async function cli(args: string[]) {
  // No DATABASE_URL: a command that reached for a database would start one in DATA_DIR.
  const env = childEnv({ DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const run = start(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env });
  const code = await run.exited;
  return { code, output: run.output() };
}

describe('switchboard CLI arguments', () => {
  it.each([['migrate'], ['keys', 'create'], ['tokens', 'create'], ['worker'], ['seed']])(
    'answers --help and -h of %s with its usage, touching no database',
    async (...command) => {
      const results = await Promise.all([cli([...command, '--help']), cli([...command, '-h'])]);
      for (const result of results) {
        expect(result.code, result.output).toBe(0);
        expect(result.output).toContain(`Usage: switchboard ${command.join(' ')}`);
      }
      expect(await readdir(dataDir)).toEqual([]);
    },
  );

  it.each([
    [['keys', 'create', '--email', 'ops@example.test', '--help'], 'Usage: switchboard keys create'],
    [['help', 'seed'], 'Usage: switchboard seed'],
    [['--help'], 'Usage: switchboard <command>'],
    [['keys', '--help'], 'Usage: switchboard keys create'],
  ])('answers %j with 0 and the usage', async (args, usage) => {
    const result = await cli(args);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain(usage);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it.each([
    [
      ['keys', 'create', '--emial', 'ops@example.test'],
      ["Unknown option '--emial'", 'Usage: switchboard keys create'],
    ],
    [['migrate', 'now'], ['Usage: switchboard migrate']],
    [['tokens', 'create', '--agent'], ['Usage: switchboard tokens create']],
    [['frobnicate'], ['Unknown command: frobnicate']],
  ])('refuses %j with 64 and the usage', async (args, messages) => {
    const result = await cli(args);
    expect(result.code, result.output).toBe(64);
    for (const message of messages) expect(result.output).toContain(message);
    expect(await readdir(dataDir)).toEqual([]);
  });
});
