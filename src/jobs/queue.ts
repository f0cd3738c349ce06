/**
 * Background jobs on pg-boss, in the service's own database. Modules define their jobs before
 * start; jobs are sent with the executor of the transaction that writes the row they process,
 * so a job exists exactly when its row does.
 *
 * Two kinds of job. A plain job (`define`) is worked by pg-boss's own workers, with its retries
 * and expiry. A task job (`defineTask`) hands a task — a row of a module's table — to a worker
 * process: the job is fetched, the task claimed for this worker (`claim` writes the worker's id
 * on the row) and the job completed in one transaction, so no job is ever left active by a
 * process that dies; from then on the row says who works on it. Every worker process registers
 * itself (src/jobs/workers.ts) and sweeps, at start and every `sweepSeconds`, for workers that
 * died: their tasks go back to the queue at once (`requeue`), instead of after an expiry.
 */
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { poolEnder, type Db, type Executor } from '../db/database.js';
import { deleteWorkers, lockDeadWorkers, registerWorker, type WorkerRegistration } from './workers.js';

export interface JobDefinition<T extends object> {
  name: string;
  handler: (data: T, job: { id: string }) => Promise<void>;
  /** Jobs taken per poll and worked one after another. */
  batchSize?: number;
  /** Parallel pollers of this queue in this process. */
  concurrency?: number;
  pollingIntervalSeconds?: number;
  retryLimit?: number;
  retryDelaySeconds?: number;
  expireInSeconds?: number;
}

export interface TaskJobDefinition<T extends object, C> {
  name: string;
  /**
   * Takes the task for `workerId` (null: a direct call, no registered worker) inside the fetch
   * transaction; undefined when there is nothing to do (done, or taken by someone else).
   */
  claim(trx: Executor, data: T, workerId: number | null): Promise<C | undefined>;
  /** Works a claimed task, outside any transaction; the owner checks fence its final write. */
  run(task: C): Promise<void>;
  /** Hands the tasks owned by `workerIds` back to the queue (a job sent through `trx` each); how many. */
  requeue(trx: Executor, workerIds: readonly number[]): Promise<number>;
  /** Hands one claimed task back to the queue, for later (`run` failed unexpectedly: database trouble). */
  release(trx: Executor, task: C): Promise<void>;
  /** Parallel tasks of this queue in this process (each fetches one job at a time). */
  concurrency?: number;
  pollingIntervalSeconds?: number;
}

export interface SendOptions {
  singletonKey?: string;
  startAfterSeconds?: number;
  retryLimit?: number;
}

export interface WorkerTimings {
  /** How often a worker process marks itself alive. */
  heartbeatSeconds: number;
  /** A worker whose heartbeat is older than this is dead (a killed one is dead at once). */
  deadAfterSeconds: number;
  /** How often a worker process looks for dead workers. */
  sweepSeconds: number;
}

export const DEFAULT_WORKER_TIMINGS: WorkerTimings = { heartbeatSeconds: 5, deadAfterSeconds: 20, sweepSeconds: 10 };

export interface JobQueue {
  define<T extends object>(definition: JobDefinition<T>): void;
  defineTask<T extends object, C>(definition: TaskJobDefinition<T, C>): void;
  send<T extends object>(executor: Executor, name: string, data: T, options?: SendOptions): Promise<string | null>;
  start(options: { workers: boolean }): Promise<void>;
  stop(): Promise<void>;
  /** This process's worker id while its workers run (null otherwise). */
  workerId(): number | null;
  /** Hands back the tasks of dead workers of this queue now (also run at start and periodically). */
  sweep(): Promise<number>;
  /** Unfinished jobs per queue and pg-boss state (created, retry, active). */
  depth(): Promise<{ queue: string; state: string; count: number }[]>;
  /** The pg-boss instance, for tests and tools that inspect queues. */
  readonly boss: PgBoss;
}

/** pg-boss's executor interface over one of ours (a transaction, or the pool). */
function bossDb(executor: Executor): PgBoss.Db {
  return {
    executeSql: async (text: string, values: unknown[]) => {
      const result = await executor.executeQuery(CompiledQuery.raw(text, values));
      return { rows: result.rows as unknown[] };
    },
  };
}

export function createJobQueue(options: {
  connectionString: string;
  db: Db;
  schema?: string;
  onError?: (error: Error) => void;
  /** Called after each job (plain) or task (task job) a worker of this process finished. */
  onJobDone?: (name: string, outcome: 'completed' | 'failed', seconds: number) => void;
  poolMax?: number;
  timings?: WorkerTimings;
}): JobQueue {
  const schema = options.schema ?? 'pgboss';
  const timings = options.timings ?? DEFAULT_WORKER_TIMINGS;
  const onError = (error: Error) => options.onError?.(error);
  // pg-boss's connections are a pool of ours: stop() closes it and waits until every connection
  // has closed (pg-boss's own close does not wait), so none outlives the queue.
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    application_name: 'switchboard-jobs',
    max: options.poolMax ?? 4,
  });
  pool.on('error', onError);
  const endPool = poolEnder(pool);
  const boss = new PgBoss({
    db: { executeSql: (text: string, values: unknown[]) => pool.query(text, values) },
    schema,
    schedule: false,
  });
  boss.on('error', onError);
  const definitions = new Map<string, JobDefinition<object>>();
  const tasks = new Map<string, TaskJobDefinition<object, unknown>>();
  let started = false;
  let stopped = false;
  let registration: WorkerRegistration | null = null;
  let sweepTimer: NodeJS.Timeout | undefined;
  const loops: Promise<void>[] = [];
  // The task loops waiting for their next poll, woken at once by `stop` (one set, not one abort
  // listener per loop on a shared signal: a worker runs more loops than an EventTarget's 10).
  const sleepers = new Set<() => void>();
  const idleSleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopped) return resolve();
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });

  const defined = (name: string) => definitions.get(name) ?? tasks.get(name);

  /** Runs `work`, reporting its duration and outcome to `onJobDone`; rethrows. */
  async function timed(name: string, work: () => Promise<void>): Promise<void> {
    const began = performance.now();
    let outcome: 'completed' | 'failed' = 'failed';
    try {
      await work();
      outcome = 'completed';
    } finally {
      options.onJobDone?.(name, outcome, (performance.now() - began) / 1000);
    }
  }

  /** One fetch: the job, the claim and the job's completion commit together. */
  async function takeTask(def: TaskJobDefinition<object, unknown>) {
    const workerId = registration?.id ?? null;
    return options.db.transaction().execute(async (trx) => {
      const [job] = await boss.fetch<object>(def.name, { batchSize: 1, db: bossDb(trx) });
      if (!job) return null;
      const task = await def.claim(trx, job.data, workerId);
      // (data, then options: the implementation reads options from the fourth argument only)
      await boss.complete(def.name, job.id, {}, { db: bossDb(trx) });
      return { task };
    });
  }

  async function taskLoop(def: TaskJobDefinition<object, unknown>): Promise<void> {
    const pollMs = (def.pollingIntervalSeconds ?? 1) * 1000;
    while (!stopped) {
      let taken: Awaited<ReturnType<typeof takeTask>> = null;
      try {
        taken = await takeTask(def);
      } catch (error) {
        onError(error as Error);
      }
      if (taken === null) {
        await idleSleep(pollMs);
        continue;
      }
      const task = taken.task;
      if (task === undefined) continue;
      try {
        await timed(def.name, () => def.run(task));
      } catch (error) {
        // Left owned by a live worker, the task would wait for this process to die: hand it back.
        onError(error as Error);
        await options.db
          .transaction()
          .execute((trx) => def.release(trx, task))
          .catch(onError);
        await idleSleep(pollMs);
      }
    }
  }

  async function sweep(): Promise<number> {
    return options.db.transaction().execute(async (trx) => {
      const dead = await lockDeadWorkers(trx, schema, timings.deadAfterSeconds);
      let requeued = 0;
      for (const def of tasks.values()) requeued += await def.requeue(trx, dead);
      await deleteWorkers(trx, dead);
      return requeued;
    });
  }

  return {
    boss,
    define(definition) {
      if (started) throw new Error(`Job ${definition.name} defined after the queue started`);
      definitions.set(definition.name, definition as JobDefinition<object>);
    },

    defineTask(definition) {
      if (started) throw new Error(`Job ${definition.name} defined after the queue started`);
      tasks.set(definition.name, definition as unknown as TaskJobDefinition<object, unknown>);
    },

    workerId: () => registration?.id ?? null,
    sweep,

    async depth() {
      const { rows } = await options.db.executeQuery<{ queue: string; state: string; count: number }>(
        CompiledQuery.raw(
          `select name as queue, state::text as state, count(*)::int as count from ${schema}.job
           where state in ('created', 'retry', 'active') group by name, state`,
        ),
      );
      return rows;
    },

    async send(executor, name, data, sendOptions = {}) {
      const def = defined(name);
      if (!def) throw new Error(`Unknown job ${name}`);
      const plain = definitions.get(name);
      return boss.send(name, data, {
        singletonKey: sendOptions.singletonKey,
        startAfter: sendOptions.startAfterSeconds,
        // A task job is completed when its task is claimed; retries belong to plain jobs.
        retryLimit: sendOptions.retryLimit ?? plain?.retryLimit ?? (plain ? 3 : 0),
        retryDelay: plain?.retryDelaySeconds ?? 5,
        retryBackoff: true,
        expireInSeconds: plain?.expireInSeconds ?? 15 * 60,
        db: bossDb(executor),
      });
    },

    async start({ workers }) {
      if (started) return;
      started = true;
      await boss.start();
      for (const name of [...definitions.keys(), ...tasks.keys()]) await createQueueRetrying(boss, name);
      if (!workers) return;
      for (const def of definitions.values()) {
        for (let i = 0; i < (def.concurrency ?? 1); i++) {
          await boss.work<object>(
            def.name,
            { batchSize: def.batchSize ?? 1, pollingIntervalSeconds: def.pollingIntervalSeconds ?? 1 },
            async (jobs) => {
              for (const job of jobs) await timed(def.name, () => def.handler(job.data, { id: job.id }));
            },
          );
        }
      }
      if (tasks.size === 0) return;
      registration = await registerWorker({
        connectionString: options.connectionString,
        queue: schema,
        heartbeatMs: timings.heartbeatSeconds * 1000,
        onError,
      });
      await sweep();
      sweepTimer = setInterval(() => void sweep().catch(onError), timings.sweepSeconds * 1000);
      sweepTimer.unref();
      for (const def of tasks.values()) for (let i = 0; i < (def.concurrency ?? 1); i++) loops.push(taskLoop(def));
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      if (started) {
        clearInterval(sweepTimer);
        for (const wake of [...sleepers]) wake();
        // Tasks still running after the timeout stay owned by this worker; once its registration
        // is closed it counts as dead, and the next sweep (here or elsewhere) hands them back.
        await Promise.race([Promise.all(loops), sleep(10_000)]);
        await registration?.close();
        // Waits for running jobs to finish (up to the timeout); unfinished ones are retried later.
        await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
      }
      await endPool();
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * createQueue from several processes starting at once (instances, parallel test files) can
 * deadlock inside pg-boss's DDL; the call is idempotent, so a deadlock is retried.
 */
async function createQueueRetrying(boss: PgBoss, name: string, attempts = 5): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await boss.createQueue(name);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt + Math.random() * 100));
    }
  }
}
