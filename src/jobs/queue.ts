/**
 * Background jobs on pg-boss, in the service's own database. Modules define their jobs before
 * start; jobs are sent with the executor of the transaction that writes the row they process,
 * so a job exists exactly when its row does.
 */
import { CompiledQuery } from 'kysely';
import PgBoss from 'pg-boss';
import type { Executor } from '../db/database.js';

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

export interface SendOptions {
  singletonKey?: string;
  startAfterSeconds?: number;
  retryLimit?: number;
}

export interface JobQueue {
  define<T extends object>(definition: JobDefinition<T>): void;
  send<T extends object>(executor: Executor, name: string, data: T, options?: SendOptions): Promise<string | null>;
  start(options: { workers: boolean }): Promise<void>;
  stop(): Promise<void>;
  /** The pg-boss instance, for tests and tools that inspect queues. */
  readonly boss: PgBoss;
  /** Unfinished jobs per queue and state (created, retry, active), in one query. */
  depth(): Promise<{ queue: string; state: string; count: number }[]>;
}

export function createJobQueue(options: {
  connectionString: string;
  schema?: string;
  onError?: (error: Error) => void;
  poolMax?: number;
  /** Observes the seconds a worker spent on each job (metrics). */
  onJobDone?: (queue: string, outcome: 'completed' | 'failed', seconds: number) => void;
}): JobQueue {
  const schema = options.schema ?? 'pgboss';
  const boss = new PgBoss({
    connectionString: options.connectionString,
    schema,
    application_name: 'switchboard-jobs',
    max: options.poolMax ?? 4,
    schedule: false,
  });
  boss.on('error', (error) => options.onError?.(error));
  const definitions = new Map<string, JobDefinition<object>>();
  let started = false;
  let stopped = false;

  /** Runs a job's handler, reporting its duration and outcome (a throw fails the job in pg-boss). */
  async function timed(queue: string, run: () => Promise<void>): Promise<void> {
    const begun = performance.now();
    let outcome: 'completed' | 'failed' = 'failed';
    try {
      await run();
      outcome = 'completed';
    } finally {
      options.onJobDone?.(queue, outcome, (performance.now() - begun) / 1000);
    }
  }

  return {
    boss,
    async depth() {
      const { rows } = await boss
        .getDb()
        .executeSql(
          `select name as queue, state::text as state, count(*)::int as count from ${schema}.job where state < 'completed' group by name, state`,
          [],
        );
      return rows as { queue: string; state: string; count: number }[];
    },
    define(definition) {
      if (started) throw new Error(`Job ${definition.name} defined after the queue started`);
      definitions.set(definition.name, definition as JobDefinition<object>);
    },

    async send(executor, name, data, sendOptions = {}) {
      if (!definitions.has(name)) throw new Error(`Unknown job ${name}`);
      const def = definitions.get(name)!;
      return boss.send(name, data, {
        singletonKey: sendOptions.singletonKey,
        startAfter: sendOptions.startAfterSeconds,
        retryLimit: sendOptions.retryLimit ?? def.retryLimit ?? 3,
        retryDelay: def.retryDelaySeconds ?? 5,
        retryBackoff: true,
        expireInSeconds: def.expireInSeconds ?? 15 * 60,
        db: {
          executeSql: async (text: string, values: unknown[]) => {
            const result = await executor.executeQuery(CompiledQuery.raw(text, values));
            return { rows: result.rows as unknown[] };
          },
        },
      });
    },

    async start({ workers }) {
      if (started) return;
      started = true;
      await boss.start();
      for (const def of definitions.values()) {
        await createQueueRetrying(boss, def.name);
        if (!workers) continue;
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
    },

    async stop() {
      if (!started || stopped) return;
      stopped = true;
      // Waits for running jobs to finish (up to the timeout); unfinished ones are retried later.
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
    },
  };
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
