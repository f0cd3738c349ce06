/**
 * Start-up and shutdown of the HTTP service: database (embedded when DATABASE_URL is unset),
 * migrations, bootstrap, job workers, listening; and the reverse on shutdown.
 */
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { createContainer, type Container } from './container.js';
import { attachEmbeddedDatabase, startEmbeddedDatabase, type EmbeddedDatabase } from './db/embedded.js';
import { migrateToLatest } from './db/migrator.js';
import { bootstrap, describeBootstrap } from './modules/identity/index.js';

export interface RunningServer {
  app: FastifyInstance;
  container: Container;
  url: string;
  /** Stops accepting, finishes in-flight requests and jobs, closes the database. Idempotent. */
  shutdown(): Promise<void>;
}

export function createLogger(config: Readonly<Config>): Logger {
  return pino({ level: config.logLevel, redact: ['req.headers["x-api-key"]', 'req.headers["x-api-token"]'] });
}

/**
 * The database URL in force: DATABASE_URL, or an embedded server started under DATA_DIR. With
 * `attach` (the CLI), the embedded server a running service holds is used when there is one.
 */
export async function resolveDatabase(
  config: Readonly<Config>,
  log: Logger,
  { attach = false }: { attach?: boolean } = {},
): Promise<{ url: string; embedded: EmbeddedDatabase | null }> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: null };
  const options = {
    dataDir: config.dataDir,
    runtimeDir: config.embeddedRuntimeDir,
    log: (message: string) => log.debug(message),
    notice: (message: string) => log.info(message),
  };
  const running = attach ? await attachEmbeddedDatabase(options) : null;
  if (running) return { url: running.url, embedded: null };
  log.info({ dataDir: config.dataDir }, 'DATABASE_URL is not set: starting the embedded PostgreSQL');
  const embedded = await startEmbeddedDatabase(options);
  return { url: embedded.url, embedded };
}

/** The port the service is told to take is held by another process: nothing was started. */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
  constructor(host: string, port: number) {
    super(
      `PORT ${port} is already in use on ${host}: stop what holds it, or set PORT to a free port (nothing was started)`,
    );
  }
}

/**
 * Refuses to start when the port is taken, before the database is started, migrated or
 * bootstrapped (a second `npm start` must not print new secrets and then fail). Port 0 (an
 * ephemeral port) is always free. A port taken between this check and `listen` still fails there.
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(host, port) : error),
    );
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

export async function startServer(
  config: Readonly<Config>,
  log: Logger = createLogger(config),
  print: (text: string) => void = (text) => process.stdout.write(`${text}\n`),
): Promise<RunningServer> {
  await assertPortFree(config.host, config.port);
  const { url: databaseUrl, embedded } = await resolveDatabase(config, log);
  let container: Container | undefined;
  try {
    container = createContainer({ config, databaseUrl, log });
    const applied = await migrateToLatest(container.db);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    const result = await bootstrap(container.db, config.bootstrap, {
      publicBaseUrl: config.publicBaseUrl,
      expiresAt: new Date(Date.now() + config.invitationTtlDays * 86_400_000),
    });
    if (result.created) print(describeBootstrap(result));
    const app = await buildApp(container);
    await container.start();
    // Node's default backlog (511) overflows under a burst of connections (clients then see resets).
    const url = await app.listen({ host: config.host, port: config.port, backlog: config.http.listenBacklog });
    let stopping: Promise<void> | undefined;
    const running: Container = container;
    return {
      app,
      container: running,
      url,
      shutdown() {
        stopping ??= (async () => {
          await app.close();
          await running.close();
          await embedded?.stop();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await container?.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw error;
  }
}
