/**
 * Folds the support rollups' pending contributions (migration 0090) in the background: every
 * `intervalMs`, batches of `batch` rows until none are left. Readers add what is still pending,
 * so the folder's pace changes how much they add, never what they read. One fold at a time in
 * this process; across processes the fold's advisory lock lets one through.
 */
import type { Db } from '../../db/database.js';
import { foldRollups } from './support-queries.repo.js';

export interface RollupFolderOptions {
  db: Db;
  intervalMs?: number;
  batch?: number;
  log: { warn(obj: object, msg: string): void };
}

export function createRollupFolder(options: RollupFolderOptions) {
  const { db, log } = options;
  const intervalMs = options.intervalMs ?? 1000;
  const batch = options.batch ?? 10_000;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;

  /** Folds until fewer than a batch remain; returns how many rows it folded. */
  async function foldPending(): Promise<number> {
    let total = 0;
    for (;;) {
      const folded = await foldRollups(db, batch);
      total += folded;
      if (folded < batch) return total;
    }
  }

  function tick() {
    if (running) return;
    running = foldPending()
      .catch((error: unknown) => {
        log.warn({ err: error }, 'support rollup fold failed; its rows stay pending');
        return 0;
      })
      .finally(() => {
        running = null;
      });
  }

  return {
    foldPending,
    start() {
      if (timer) return;
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}

export type RollupFolder = ReturnType<typeof createRollupFolder>;
