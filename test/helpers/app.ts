/**
 * A real app on the run's database: buildApp over a real container, driven with app.inject.
 * `env` overrides configuration the way the environment would. SECRET_KEY is the run's (see
 * test/global-setup.ts): a test app never writes DATA_DIR/secret.key.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';

export interface TestApp {
  app: FastifyInstance;
  container: Container;
  close(): Promise<void>;
}

/** `configure` may add test-only routes before the app is sealed. */
export async function createTestApp(
  env: Record<string, string> = {},
  configure?: (app: FastifyInstance) => void | Promise<void>,
): Promise<TestApp> {
  const databaseUrl = env.DATABASE_URL ?? inject('databaseUrl');
  // Every test app has a job queue of its own (a pg-boss schema), so that workers started by one
  // test file never take the jobs of another file's companies with their own configuration.
  const jobsSchema = `jobs_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    RUN_WORKERS: 'false',
    DATABASE_URL: databaseUrl,
    JOBS_SCHEMA: jobsSchema,
    SECRET_KEY: inject('secretKey'),
    // Webhook workers are not scoped to a job schema: a test that sends webhooks starts its own
    // (container.webhooks.dispatcher.start()), so no other file's workers take its deliveries.
    WEBHOOK_WORKER: 'false',
    ...env,
  });
  const container = createContainer({ config, databaseUrl, log: pino({ level: env.LOG_LEVEL ?? 'silent' }) });
  const app = await buildApp(container);
  await configure?.(app);
  await container.start();
  await app.ready();
  return {
    app,
    container,
    async close() {
      await app.close();
      await container.close();
    },
  };
}
