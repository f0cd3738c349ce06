/**
 * Helpers of the integrations tests: a test app whose pino output is captured line by line (to
 * prove a secret never reaches the logs), and calls of the family's API.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import type { TestApp } from './app.js';
import type { TestUser } from './factories.js';

export interface LoggedTestApp extends TestApp {
  /** Every log line written so far (JSON text), at level trace. */
  logs: string[];
}

export async function createLoggedTestApp(env: Record<string, string> = {}): Promise<LoggedTestApp> {
  const databaseUrl = inject('databaseUrl');
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'trace',
    RUN_WORKERS: 'false',
    DATABASE_URL: databaseUrl,
    JOBS_SCHEMA: `jobs_${randomUUID().replace(/-/g, '').slice(0, 12)}`,
    SECRET_KEY: inject('secretKey'),
    ...env,
  });
  const log = pino({ level: 'trace' }, sink);
  const container = createContainer({ config, databaseUrl, log });
  const app = await buildApp(container);
  await container.start();
  await app.ready();
  return {
    app,
    container,
    logs,
    async close() {
      await app.close();
      await container.close();
    },
  };
}

export function integrationsApi(app: FastifyInstance, user: Pick<TestUser, 'headers'>) {
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({ method, url: `/api/public/integrations${url}`, headers: user.headers, payload: payload as never });
  return {
    list: () => call('GET', ''),
    types: () => call('GET', '/types'),
    create: (body: unknown) => call('POST', '', body),
    get: (id: string) => call('GET', `/${id}`),
    update: (id: string, body: unknown) => call('PUT', `/${id}`, body),
    remove: (id: string) => call('DELETE', `/${id}`),
    test: (id: string) => call('POST', `/${id}/test`),
  };
}
