/**
 * The service in the bench's own process (container and app, not listening): for benches that
 * read the container's internals or measure what runs inside it. Production settings, silent
 * logs, no embedder, no rate limits, no job workers — `env` overrides any of them.
 */
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';

export async function startInProcess(databaseUrl: string, env: Record<string, string> = {}) {
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    RUN_WORKERS: 'false',
    EMBEDDINGS_PROVIDER: 'none',
    RATE_LIMIT_ENABLED: 'false',
    ...env,
  });
  const container = createContainer({ config, databaseUrl, log: pino({ level: 'silent' }) });
  const app = await buildApp(container);
  await container.start();
  return { container, app, close: async () => (await app.close(), await container.close()) };
}
