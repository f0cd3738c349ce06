import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

// Counts (int8) and numerics come back as JS numbers: every count this service reports fits
// in 2^53, and the API speaks numbers, not strings.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number(value));

export type Db = Kysely<Database>;
export type Executor = Kysely<Database> | Transaction<Database>;

export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

/** `-c name=value` startup options: session settings every pooled connection starts with. */
export function sessionOptions(settings: Record<string, string>): string | undefined {
  const entries = Object.entries(settings);
  for (const [name, value] of entries) {
    if (!/^[a-z_][a-z0-9_.]*$/i.test(name) || !/^[\w.-]+$/.test(value)) throw new Error(`Invalid session setting ${name}=${value}`);
  }
  return entries.length ? entries.map(([name, value]) => `-c ${name}=${value}`).join(' ') : undefined;
}

export function createDatabase(connectionString: string, poolMax = 10, settings: Record<string, string> = {}): DatabaseHandle {
  const pool = new pg.Pool({ connectionString, max: poolMax, idleTimeoutMillis: 30_000, options: sessionOptions(settings) });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let closed = false;
  return {
    db,
    pool,
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}

/** True when the database answers a trivial query within the timeout. */
export async function pingDatabase(db: Db, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const ping = sql`select 1`.execute(db).then(() => true as const);
    return await Promise.race([ping, timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
