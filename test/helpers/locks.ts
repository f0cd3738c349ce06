/** Helpers of tests that hold a lock open until other work waits for it. */
import { sql } from 'kysely';
import type { Executor } from '../../src/db/database.js';

/**
 * Resolves once `count` sessions wait for the transaction `holder` (directly, or queued behind a
 * session that does), polling through `db`. Tests bound it with their own timeout.
 */
export async function waitForWaiters(holder: Executor, db: Executor, count = 1): Promise<void> {
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(holder);
  const pid = rows[0]!.pid;
  for (;;) {
    const waiting = await sql<{ n: number }>`with direct as (
        select pid from pg_stat_activity where ${pid}::int = any(pg_blocking_pids(pid)))
      select count(*)::int as n from pg_stat_activity a
      where a.pid in (select pid from direct)
        or exists (select 1 from direct d where d.pid = any(pg_blocking_pids(a.pid)))`.execute(db);
    if (waiting.rows[0]!.n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
