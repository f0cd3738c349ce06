/** Entry point of the HTTP service: `npm start`. */
import { ConfigError, loadConfig } from './config.js';
import { loadDotEnv } from './env-file.js';
import { createLogger, startServer } from './server.js';

async function main(): Promise<void> {
  let config;
  try {
    loadDotEnv();
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const log = createLogger(config);
  // Signals are taken from the start: one that arrives while starting (the embedded database's
  // first start takes a while) stops the service once it is up, rather than killing the process
  // and leaving the database behind. A terminal's Ctrl-C reaches both npm and the service, and
  // npm forwards it: the service acts once.
  let received: string | undefined;
  let onSignal = (signal: string) => {
    received ??= signal;
  };
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => onSignal(signal));
  const server = await startServer(config, log);
  log.info({ url: server.url, docs: `${server.url}/docs` }, 'switchboard is listening');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    server.shutdown().then(
      () => {
        log.info('shutdown complete');
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  onSignal = stop;
  if (received) stop(received);
}

main().catch((error: unknown) => {
  process.stderr.write(`switchboard failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
