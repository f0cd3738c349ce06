/** The database kernel against the run's PostgreSQL: session settings and prepared statements. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabase, prepared, sessionOptions, type DatabaseHandle } from '../src/db/database.js';

let handle: DatabaseHandle;
beforeAll(() => {
  handle = createDatabase(inject('databaseUrl'), 1, { work_mem: '24MB', 'pg_trgm.similarity_threshold': '0.7' });
});
afterAll(async () => handle?.close());

describe('database kernel', () => {
  it('starts every pooled connection with the session settings', async () => {
    const { rows } = await sql<{ work_mem: string; threshold: string }>`
      select current_setting('work_mem') as work_mem, current_setting('pg_trgm.similarity_threshold') as threshold`.execute(
      handle.db,
    );
    expect(rows[0]).toEqual({ work_mem: '24MB', threshold: '0.7' });
    // The extension picks the value up when it loads: similarity 0.67 passes the default 0.3, not 0.7.
    const trigram = await sql<{ similar: boolean }>`select 'refund policy' % 'refund policies' as similar`.execute(
      handle.db,
    );
    expect(trigram.rows[0]!.similar).toBe(false);
  });

  it('refuses settings that could smuggle other startup options', () => {
    expect(sessionOptions({})).toBeUndefined();
    expect(sessionOptions({ work_mem: '32MB' })).toBe('-c work_mem=32MB');
    expect(() => sessionOptions({ work_mem: '32MB -c role=admin' })).toThrow(/Invalid session setting/);
    expect(() => sessionOptions({ 'bad name': '1' })).toThrow(/Invalid session setting/);
  });

  it('runs a marked statement as one named prepared statement per text, with each call its own values', async () => {
    const lookup = (n: number) =>
      prepared(sql<{ doubled: number; label: string }>`select ${n}::int * 2 as doubled, ${`n${n}`}::text as label`);
    const results = [];
    for (const n of [1, 2, 3]) results.push((await lookup(n).execute(handle.db)).rows[0]);
    expect(results).toEqual([
      { doubled: 2, label: 'n1' },
      { doubled: 4, label: 'n2' },
      { doubled: 6, label: 'n3' },
    ]);
    // One connection in the pool: the statements it has prepared are those of this session.
    const { rows } = await sql<{
      name: string;
      statement: string;
    }>`select name, statement from pg_prepared_statements`.execute(handle.db);
    const mine = rows.filter((row) => row.statement.includes('as doubled'));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.name).toMatch(/^sb_[0-9a-f]{40}$/);
    // An unmarked statement stays unnamed.
    await sql`select 42 as unmarked`.execute(handle.db);
    const after = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(handle.db);
    expect(after.rows.some((row) => row.statement.includes('unmarked'))).toBe(false);
  });

  it('works inside a transaction and reports errors of a prepared statement as usual', async () => {
    const failing = prepared(sql`select 1 / ${0}::int as never`);
    await expect(failing.execute(handle.db)).rejects.toThrow(/division by zero/);
    const value = await handle.db
      .transaction()
      .execute(async (trx) => (await prepared(sql<{ v: number }>`select ${7}::int as v`).execute(trx)).rows[0]!.v);
    expect(value).toBe(7);
  });
});
