import { createHash } from 'node:crypto';
import {
  Kysely,
  PostgresDialect,
  sql,
  type PostgresPool,
  type PostgresPoolClient,
  type RawBuilder,
  type Transaction,
} from 'kysely';
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

/** The comment that marks a statement's text as a named prepared statement's (see `prepared`). */
export const PREPARED_MARK = '/* prepared */ ';
/** Distinct prepared statements a process keeps (past it, marked statements run unnamed). */
const MAX_PREPARED = 256;

/**
 * Marks a hot statement to run as a named prepared statement: each connection parses and plans
 * it once, then only binds and executes (a CTE-heavy search statement: ≈1 ms → ≈0.2 ms). Only
 * for statements whose text takes a bounded number of shapes.
 */
export function prepared<T>(query: RawBuilder<T>): RawBuilder<T> {
  return sql<T>`${sql.raw(PREPARED_MARK)}${query}`;
}

/**
 * An end() of `pool` that resolves once every connection of the pool has closed. pg-pool's own
 * end() resolves as soon as it has asked each connection to close: a PostgreSQL stopped right
 * after it (the embedded one, on shutdown) would terminate those sessions in mid-goodbye.
 */
export function poolEnder(pool: pg.Pool): () => Promise<void> {
  const closing = new Set<Promise<void>>();
  pool.on('connect', (client) => {
    const closed = new Promise<void>((resolve) => client.once('end', () => resolve()));
    closing.add(closed);
    void closed.then(() => closing.delete(closed));
  });
  let ended: Promise<void> | undefined;
  return () => (ended ??= pool.end().then(async () => void (await Promise.all(closing))));
}

/** The pool as Kysely sees it, running statements marked by `prepared` under a name of their text. */
function preparingPool(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name && names.size < MAX_PREPARED) {
      name = `sb_${createHash('sha1').update(text).digest('hex')}`;
      names.set(text, name);
    }
    return name;
  };
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => ({
    query: ((text: unknown, values?: unknown[]) => {
      const name = typeof text === 'string' && text.startsWith(PREPARED_MARK) ? nameOf(text) : undefined;
      if (name) return client.query({ name, text: text as string, values });
      return client.query(text as string, values);
    }) as unknown as PostgresPoolClient['query'],
    release: () => client.release(),
  });
  return {
    async connect() {
      const client = await pool.connect();
      let wrapped = clients.get(client);
      if (!wrapped) clients.set(client, (wrapped = wrap(client)));
      return wrapped;
    },
    end: poolEnder(pool),
  };
}

/** The pool under each database made by `createDatabase` (compiled statements run on it directly). */
const pools = new WeakMap<object, pg.Pool>();

/** The pool of a database made by `createDatabase`; undefined for a transaction (its own connection). */
export function poolOf(db: Executor): pg.Pool | undefined {
  return pools.get(db);
}

/** `-c name=value` startup options: session settings every pooled connection starts with. */
export function sessionOptions(settings: Record<string, string>): string | undefined {
  const entries = Object.entries(settings);
  for (const [name, value] of entries) {
    if (!/^[a-z_][a-z0-9_.]*$/i.test(name) || !/^[\w.-]+$/.test(value))
      throw new Error(`Invalid session setting ${name}=${value}`);
  }
  return entries.length ? entries.map(([name, value]) => `-c ${name}=${value}`).join(' ') : undefined;
}

export function createDatabase(
  connectionString: string,
  poolMax = 10,
  settings: Record<string, string> = {},
): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString,
    max: poolMax,
    idleTimeoutMillis: 30_000,
    options: sessionOptions(settings),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor one checked out between two statements (a transaction awaiting other work): its next
  // statement fails, and the pool drops it when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
  pools.set(db, pool);
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
