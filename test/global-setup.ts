/**
 * One PostgreSQL database for the whole run, created fresh and migrated once, dropped at the end.
 * The server: TEST_DATABASE_URL, else the local one at 127.0.0.1:5432, else an embedded one.
 * Tests keep apart by creating a company of their own. Also a SECRET_KEY for the run, so that no
 * test app generates one into the checkout's DATA_DIR.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../src/db/database.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../src/db/embedded.js';
import { migrateToLatest } from '../src/db/migrator.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    adminDatabaseUrl: string;
    /** SECRET_KEY of every test app and process of the run (64 hex characters). */
    secretKey: string;
  }
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export default async function setup(project: TestProject) {
  let adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  let embedded: EmbeddedDatabase | null = null;
  let embeddedDir: string | null = null;
  if (!(await reachable(adminUrl))) {
    embeddedDir = await mkdtemp(path.join(tmpdir(), 'switchboard-test-pg-'));
    embedded = await startEmbeddedDatabase({ dataDir: embeddedDir, database: 'postgres' });
    adminUrl = embedded.url;
  }
  const name = `switchboard_test_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, name);
  const handle = createDatabase(databaseUrl, 2);
  await migrateToLatest(handle.db);
  await handle.close();
  project.provide('databaseUrl', databaseUrl);
  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('secretKey', randomBytes(32).toString('hex'));

  return async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`);
    await client.end();
    await embedded?.stop();
    if (embeddedDir) await rm(embeddedDir, { recursive: true, force: true });
  };
}
