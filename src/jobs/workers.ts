/**
 * The registry of worker processes (table `job_workers`, migration 0006). A process that runs
 * workers registers a row and, on a connection of its own, holds the session advisory lock
 * (WORKER_LOCK_CLASS, id) and beats `heartbeat_at`. It is alive while both hold: a killed
 * process loses its session (and the lock) at once; a vanished host stops beating. Tasks record
 * the id of the worker that owns them, so any process can tell that an owner is dead and hand
 * its tasks back to the queue without waiting for a time-out (src/jobs/queue.ts sweeps).
 */
import { hostname } from 'node:os';
import { sql } from 'kysely';
import pg from 'pg';
import type { Executor } from '../db/database.js';

/** First key of the two-key advisory locks that mark live workers (ASCII "SWKR"). */
export const WORKER_LOCK_CLASS = 0x53574b52;

export interface WorkerRegistration {
  /** The id tasks are claimed under (a new one if the registration was lost and renewed). */
  readonly id: number;
  /** Ends the registry session: the lock is released, so the row counts as dead from now on. */
  close(): Promise<void>;
}

/**
 * Registers this process as a worker of `queue` and keeps the registration alive: a heartbeat
 * every `heartbeatMs`; a lost connection, or a row deleted by a sweep that took this process for
 * dead, is replaced by a new registration (tasks claimed under the old id have been handed back
 * and their late results are refused by the owners' checks).
 */
export async function registerWorker(options: {
  connectionString: string;
  queue: string;
  heartbeatMs: number;
  onError: (error: Error) => void;
}): Promise<WorkerRegistration> {
  let client: pg.Client | null = null;
  let id = 0;
  let closed = false;

  async function register(): Promise<void> {
    const next = new pg.Client({ connectionString: options.connectionString, application_name: 'switchboard-worker' });
    next.on('error', (error) => {
      if (client === next) client = null;
      options.onError(error);
    });
    await next.connect();
    try {
      // The row becomes visible with its lock already held, so no sweep can see it unlocked.
      await next.query('begin');
      const { rows } = await next.query<{ id: number }>(
        'insert into job_workers (queue, host, pid) values ($1, $2, $3) returning id',
        [options.queue, hostname(), process.pid],
      );
      id = rows[0]!.id;
      await next.query('select pg_advisory_lock($1, $2)', [WORKER_LOCK_CLASS, id]);
      await next.query('commit');
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    client = next;
  }

  async function beat(): Promise<void> {
    const current = client;
    if (!current) return register();
    const result = await current.query('update job_workers set heartbeat_at = now() where id = $1', [id]);
    if (result.rowCount === 0) {
      // A sweep took this process for dead (a stalled heartbeat) and handed its tasks back.
      client = null;
      await current.end().catch(() => undefined);
      await register();
    }
  }

  await register();
  let beating: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    beating = beating.then(() => (closed ? undefined : beat().catch((error: Error) => options.onError(error))));
  }, options.heartbeatMs);
  timer.unref();

  return {
    get id() {
      return id;
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await beating;
      await client?.end().catch(() => undefined);
      client = null;
    },
  };
}

/**
 * Workers of `queue` that are dead — their advisory lock is free or their heartbeat is older than
 * `deadAfterSeconds` — locked (skipping rows another sweep holds) until the caller's transaction
 * ends, in which their tasks are handed back and the rows deleted.
 */
export async function lockDeadWorkers(trx: Executor, queue: string, deadAfterSeconds: number): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    select w.id from job_workers w
    where w.queue = ${queue}
      and (w.heartbeat_at < now() - make_interval(secs => ${deadAfterSeconds})
           or not exists (
             select 1 from pg_locks l
             where l.locktype = 'advisory' and l.granted
               and l.database = (select oid from pg_database where datname = current_database())
               and l.classid = ${WORKER_LOCK_CLASS}::bigint::oid and l.objid = w.id::bigint::oid and l.objsubid = 2))
    for update of w skip locked`.execute(trx);
  return rows.map((row) => row.id);
}

export async function deleteWorkers(trx: Executor, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`delete from job_workers where id = any(${ids}::int[])`.execute(trx);
}
