/** Child processes for start-up tests: their output, their process tree, and waiting on them. */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams, type SpawnOptions } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { inject } from 'vitest';

export interface Started {
  child: ChildProcess;
  output(): string;
  /** Exited and its output read to the end (which waits for any process that inherited the pipes). */
  exited: Promise<number | null>;
  /** Exited. */
  ended: Promise<number | null>;
}

/** A child's environment: this process's, the run's SECRET_KEY (no DATA_DIR/secret.key is written), then `env`. */
export function childEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, SECRET_KEY: inject('secretKey'), ...env };
}

export function start(command: string, args: string[], options: SpawnOptions): Started {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const ended = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited, ended };
}

/** The checkout's root (where src/cli.ts is). */
const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface WorkerProcess {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  /** Resolves when the process says its workers run (after its start-up sweep). */
  ready: Promise<void>;
  exited: Promise<void>;
}

/** The project's CLI `switchboard worker` in a child process, with childEnv(env). */
export function startWorkerProcess(env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'worker'], { cwd: ROOT, env: childEnv(env) });
  let output = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (chunk) => {
    output += chunk;
    if (output.includes('workers running')) markReady();
  });
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { child, output: () => output, ready, exited };
}

/** Kills the worker processes still running (SIGKILL) and waits for each to exit. */
export async function stopWorkerProcesses(workers: WorkerProcess[]): Promise<void> {
  for (const worker of workers) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await worker.exited;
  }
}

/** A wait inside a beforeAll (hookTimeout 60 s): a first start of an embedded PostgreSQL on a loaded machine. */
export const HOOK_WAIT_MS = 50_000;

/** Polls `check` every 100 ms until it holds; throws after `timeoutMs` (in a test, keep it ≤ 25 s). */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 25_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The URL a started service logs once listening (pino JSON lines). */
export async function listeningUrl(started: Started, timeoutMs = 25_000): Promise<string> {
  let url: string | undefined;
  await waitFor(
    () => {
      for (const line of started.output().split('\n')) {
        if (!line.includes('switchboard is listening')) continue;
        url = (JSON.parse(line) as { url: string }).url;
      }
      if (!url && started.child.exitCode !== null) throw new Error(`the service exited:\n${started.output()}`);
      return url !== undefined;
    },
    'the service to listen',
    timeoutMs,
  );
  return url!;
}

/** Every process below `pid` (Linux: /proc/<pid>/task/<tid>/children). */
export async function descendants(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const children = text.split(/\s+/).filter(Boolean).map(Number);
  const below = await Promise.all(children.map((child) => descendants(child)));
  return [...children, ...below.flat()];
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether something accepts connections on 127.0.0.1:port. */
export function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export function killAll(pids: number[]) {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
