/**
 * The CLI's arguments: every command answers --help/-h with its usage and does nothing else (no
 * database is started or reached), and an unknown option or stray argument is refused with the
 * command's usage.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start } from './helpers/processes.js';

const ROOT = path.resolve(import.meta.dirname, '..');
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'switchboard-cli-'));
});
afterAll(async () => rm(dataDir, { recursive: true, force: true }));

async function cli(args: string[]) {
  // No DATABASE_URL: a command that reached for a database would start one in DATA_DIR.
  const env = { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  const run = start(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env });
  const code = await run.exited;
  return { code, output: run.output() };
}

/** Runs the argument lists a few at a time (each is a Node process with a TypeScript loader). */
async function all(lists: string[][]) {
  const results: Awaited<ReturnType<typeof cli>>[] = [];
  for (let i = 0; i < lists.length; i += 4) results.push(...(await Promise.all(lists.slice(i, i + 4).map(cli))));
  return results;
}

describe('switchboard CLI arguments', () => {
  it('answers --help and -h of every command with its usage, touching no database', async () => {
    const commands = [['migrate'], ['keys', 'create'], ['tokens', 'create'], ['worker'], ['seed']];
    const lists = [
      ...commands.map((command) => [...command, '--help']),
      ...commands.map((command) => [...command, '-h']),
      ['keys', 'create', '--email', 'ops@example.test', '--help'],
      ['help', 'seed'],
    ];
    const results = await all(lists);
    results.forEach((result, i) => {
      const list = lists[i]!;
      const command = list[0] === 'help' ? list.slice(1) : list.filter((arg) => !arg.startsWith('-')).slice(0, 2);
      const name = command.filter((word) => word !== 'ops@example.test').join(' ');
      expect(result.code, `${list.join(' ')}: ${result.output}`).toBe(0);
      expect(result.output, list.join(' ')).toContain(`Usage: switchboard ${name}`);
    });
    expect(await readdir(dataDir)).toEqual([]);
  }, 120_000);

  it('answers the top-level and group help, and refuses unknown options and stray arguments with the usage', async () => {
    const [top, group, unknownOption, stray, missingValue, unknownCommand] = await all([
      ['--help'],
      ['keys', '--help'],
      ['keys', 'create', '--emial', 'ops@example.test'],
      ['migrate', 'now'],
      ['tokens', 'create', '--agent'],
      ['frobnicate'],
    ]);
    expect(top!.code).toBe(0);
    expect(top!.output).toContain('Usage: switchboard <command>');
    expect(group!.code).toBe(0);
    expect(group!.output).toContain('Usage: switchboard keys create');
    expect(unknownOption!.code).toBe(64);
    expect(unknownOption!.output).toContain("Unknown option '--emial'");
    expect(unknownOption!.output).toContain('Usage: switchboard keys create');
    expect(stray!.code).toBe(64);
    expect(stray!.output).toContain('Usage: switchboard migrate');
    expect(missingValue!.code).toBe(64);
    expect(missingValue!.output).toContain('Usage: switchboard tokens create');
    expect(unknownCommand!.code).toBe(64);
    expect(unknownCommand!.output).toContain('Unknown command: frobnicate');
    expect(await readdir(dataDir)).toEqual([]);
  }, 120_000);
});
