/**
 * Writes the service's OpenAPI document (what GET /openapi.json serves) to a file, without a
 * database or a listening socket: `tsx scripts/openapi.ts [out]` (default dist/openapi.json).
 * `npm run lint:openapi` lints the file with Redocly and Spectral.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContainer } from '../src/container.js';

const out = path.resolve(process.argv[2] ?? 'dist/openapi.json');
// Nothing is connected: the pools and the queue connect lazily, and the change listener's failed
// attempts are silent at this log level.
const databaseUrl = 'postgres://switchboard@127.0.0.1:1/openapi';
const config = loadConfig({
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  RUN_WORKERS: 'false',
  DATABASE_URL: databaseUrl,
  EMBEDDINGS_PROVIDER: 'none',
  STT_PROVIDER: 'none',
  // A throwaway key: nothing is sealed, and no key file is written into DATA_DIR.
  SECRET_KEY: randomBytes(32).toString('base64'),
});
const container = createContainer({ config, databaseUrl, log: pino({ level: 'silent' }) });
const app = await buildApp(container);
await app.ready();
const document = app.swagger();
await app.close();
await container.close();
await mkdir(path.dirname(out), { recursive: true });
await writeFile(out, `${JSON.stringify(document, null, 2)}\n`);
process.stdout.write(`OpenAPI document written to ${path.relative(process.cwd(), out)}\n`);
