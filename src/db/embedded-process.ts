/**
 * The embedded PostgreSQL's processes: `initdb` once per cluster, then `postgres` in a process
 * group of its own (so that a terminal's Ctrl-C or a signal to the service's group reaches the
 * service, which finishes its requests and then stops the database), stopped by a fast shutdown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { EmbeddedDatabaseError, OR_DATABASE_URL, type EmbeddedLayout } from './embedded-layout.js';

/** What `postmaster.pid` says: the server's pid, port and status (`starting`, `ready`, `stopping`). */
export interface PostmasterInfo {
  pid: number;
  port: number;
  status: string;
}

export async function readPostmasterPid(clusterDir: string): Promise<PostmasterInfo | null> {
  const text = await readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => null);
  if (!text) return null;
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return { pid, port, status: (lines[7] ?? '').trim() };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A live process that is a PostgreSQL server (checked by name where /proc tells it). */
export async function isPostgres(pid: number): Promise<boolean> {
  if (!isAlive(pid)) return false;
  const name = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => null);
  return name === null || name.trim() === 'postgres';
}

function lastProblem(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const problem = lines.filter((line) => /\b(FATAL|PANIC|ERROR|error|could not|cannot)\b/.test(line)).at(-1);
  return (problem ?? lines.at(-1) ?? 'no output').replace(/\s+/g, ' ');
}

function binary(layout: EmbeddedLayout, name: string): string {
  return path.join(layout.binDir, process.platform === 'win32' ? `${name}.exe` : name);
}

function spawnFailure(what: string, file: string, error: NodeJS.ErrnoException, layout: EmbeddedLayout) {
  const as = layout.runAs ? ' as the postgres user' : '';
  return new EmbeddedDatabaseError(
    `Cannot run ${file}${as} to ${what} (${error.code ?? error.message}): check that it exists and that its directories are readable, ${OR_DATABASE_URL}`,
  );
}

/** Creates the cluster: UTF-8, password authentication for the `postgres` role. */
export async function initCluster(layout: EmbeddedLayout, password: string, log: (line: string) => void) {
  // initdb reads the password from a file that only the user it runs as can read.
  const pwfile = path.join(path.dirname(layout.clusterDir), `.initdb-${randomBytes(6).toString('hex')}`);
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  try {
    if (layout.runAs) await chown(pwfile, layout.runAs.uid, layout.runAs.gid);
    const initdb = binary(layout, 'initdb');
    const args = [
      `--pgdata=${layout.clusterDir}`,
      '--auth=scram-sha-256',
      '--username=postgres',
      `--pwfile=${pwfile}`,
      '--encoding=UTF8',
      '--lc-messages=C',
    ];
    const child = spawn(initdb, args, { ...(layout.runAs ?? {}), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', (error) => reject(spawnFailure('create its cluster', initdb, error, layout)));
      child.on('close', resolve);
    });
    for (const line of output.split('\n')) if (line.trim()) log(line.trim());
    if (code !== 0) {
      throw new EmbeddedDatabaseError(
        `The embedded PostgreSQL could not create its cluster in ${layout.clusterDir} (initdb: ${lastProblem(output)}): fix that or remove the directory, ${OR_DATABASE_URL}`,
      );
    }
  } finally {
    await rm(pwfile, { force: true });
  }
}

export interface PostgresProcess {
  pid: number;
  /** Fast shutdown (SIGINT), waiting for the server to exit; immediate (SIGQUIT) after a minute. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 120_000;

/** Starts `postgres` on 127.0.0.1:`port` (no Unix socket) and waits until it accepts connections. */
export async function startPostgres(
  layout: EmbeddedLayout,
  port: number,
  log: (line: string) => void,
): Promise<PostgresProcess> {
  const file = binary(layout, 'postgres');
  const args = ['-D', layout.clusterDir, '-p', String(port)];
  args.push('-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'lc_messages=C');
  const child: ChildProcess = spawn(file, args, {
    ...(layout.runAs ?? {}),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let recent = '';
  const onOutput = (chunk: Buffer) => {
    const text = chunk.toString();
    recent = (recent + text).slice(-4000);
    for (const line of text.split('\n')) if (line.trim()) log(line.trim());
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.on('exit', () => {
      exited = true;
      resolve();
    });
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.on('spawn', resolve);
    child.on('error', (error) => reject(spawnFailure('start it', file, error, layout)));
  });
  await spawned;
  const pid = child.pid!;
  // If the service exits without stopping it (a forced exit, a crash), the server is told to stop.
  const onProcessExit = () => {
    if (!exited) {
      try {
        process.kill(pid, 'SIGINT');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', onProcessExit);

  const until = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const info = await readPostmasterPid(layout.clusterDir);
    if (info?.pid === pid && info.status === 'ready') break;
    if (exited || Date.now() > until) {
      process.removeListener('exit', onProcessExit);
      if (!exited) child.kill('SIGQUIT');
      const why = exited ? lastProblem(recent) : `not ready after ${READY_TIMEOUT_MS / 1000} s`;
      const hint = /lock file .* already exists/.test(recent)
        ? 'another PostgreSQL is using this cluster; stop it, or give this process another DATA_DIR'
        : 'see the message above';
      throw new EmbeddedDatabaseError(
        `The embedded PostgreSQL did not start from ${layout.clusterDir} (${why}): ${hint}, ${OR_DATABASE_URL}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  let stopping: Promise<void> | undefined;
  return {
    pid,
    stop() {
      stopping ??= (async () => {
        if (!exited) child.kill('SIGINT');
        const force = setTimeout(() => child.kill('SIGQUIT'), 60_000);
        await exit;
        clearTimeout(force);
        process.removeListener('exit', onProcessExit);
      })();
      return stopping;
    },
  };
}

/** Stops a server this process did not start (left running by a process that died), waiting for it to go. */
export async function stopOrphan(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  const until = Date.now() + 60_000;
  while (isAlive(pid)) {
    if (Date.now() > until) {
      throw new EmbeddedDatabaseError(
        `PostgreSQL (pid ${pid}) left running by an earlier process did not stop: stop it (kill ${pid}) and start again`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
