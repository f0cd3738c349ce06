/** Entry point of the HTTP service: `npm start`. */
import { ConfigError, loadConfig } from './config.js';
import { createLogger, startServer } from './server.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const log = createLogger(config);
  const server = await startServer(config, log);
  log.info({ url: server.url, docs: `${server.url}/docs` }, 'switchboard is listening');

  const stop = (signal: string) => {
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
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`switchboard failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
