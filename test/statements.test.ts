/** Statements compiled once (src/db/statements.ts): each call binds its own values, on the pool or in a transaction. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabase, prepared, type DatabaseHandle } from '../src/db/database.js';
import { statement, statementShapes } from '../src/db/statements.js';

let handle: DatabaseHandle;
// One connection: the temporary table below is this session's, on the pool's path and in a transaction.
beforeAll(async () => {
  handle = createDatabase(inject('databaseUrl'), 1);
  await sql`create temporary table statement_notes (company_id text not null, id int not null, body text)`.execute(
    handle.db,
  );
  await sql`insert into statement_notes values ('a', 1, 'one of a'), ('a', 2, 'two of a'), ('b', 1, 'one of b')`.execute(
    handle.db,
  );
});
afterAll(async () => handle?.close());

type Note = { company_id: string; id: number; body: string | null };
// The table is not in the schema's types: statements over it are written as `sql` templates.
const notesOf = statement(
  (_, p: { companyId: string }) =>
    sql<Note>`select company_id, id, body from statement_notes where company_id = ${p.companyId} order by id`,
);

describe('compiled statements', () => {
  it('binds each call its own values, compiled once', async () => {
    const [a, b, none] = await Promise.all([
      notesOf.execute(handle.db, { companyId: 'a' }),
      notesOf.execute(handle.db, { companyId: 'b' }),
      notesOf.execute(handle.db, { companyId: 'c' }),
    ]);
    expect(a.rows.map((row) => row.body)).toEqual(['one of a', 'two of a']);
    expect(b.rows).toEqual([{ company_id: 'b', id: 1, body: 'one of b' }]);
    expect(none).toEqual({ rows: [], rowCount: 0 });
    expect(notesOf.text).toBe('select company_id, id, body from statement_notes where company_id = $1 order by id');
    const again = await notesOf.execute(handle.db, { companyId: 'b' });
    expect(again.rows.map((row) => row.id)).toEqual([1]);
  });

  it('reads nested parameters, and reports rows written', async () => {
    const rename = statement(
      (_, p: { note: { companyId: string; id: number }; body: string }) =>
        sql`update statement_notes set body = ${p.body} where company_id = ${p.note.companyId} and id = ${p.note.id}`,
    );
    const result = await rename.execute(handle.db, { note: { companyId: 'a', id: 2 }, body: 'second of a' });
    expect(result.rowCount).toBe(1);
    const missed = await rename.execute(handle.db, { note: { companyId: 'b', id: 2 }, body: 'never' });
    expect(missed.rowCount).toBe(0);
    const a = await notesOf.execute(handle.db, { companyId: 'a' });
    expect(a.rows.map((row) => row.body)).toEqual(['one of a', 'second of a']);
  });

  it('refuses a value captured when the statement is built (it would bind every later call)', async () => {
    const captured = 'a';
    const leaky = statement(
      (_, p: { id: number }) => sql`select body from statement_notes where company_id = ${captured} and id = ${p.id}`,
    );
    await expect(leaky.execute(handle.db, { id: 1 })).rejects.toThrow(/binds a value that is not a parameter/);
    // Built with the query builder: a constant is refused the same way.
    const builder = statement((db, p: { id: string }) =>
      db.selectFrom('chat_turn_owners').select('id').where('id', '=', p.id).where('seen_at', '>', new Date(0)),
    );
    await expect(builder.execute(handle.db, { id: 'x' })).rejects.toThrow(/not a parameter/);
  });

  it('runs on the transaction’s own connection inside a transaction', async () => {
    const insert = statement(
      (_, p: { companyId: string; id: number }) =>
        sql`insert into statement_notes (company_id, id) values (${p.companyId}, ${p.id})`,
    );
    await expect(
      handle.db.transaction().execute(async (trx) => {
        const written = await insert.execute(trx, { companyId: 'd', id: 1 });
        expect(written.rowCount).toBe(1);
        expect((await notesOf.execute(trx, { companyId: 'd' })).rows).toHaveLength(1);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await notesOf.execute(handle.db, { companyId: 'd' })).rows).toHaveLength(0);
  });

  it('runs a statement marked `prepared` as a named prepared statement', async () => {
    const count = statement((_, p: { companyId: string }) =>
      prepared(sql<{ n: number }>`select count(*)::int as n from statement_notes where company_id = ${p.companyId}`),
    );
    expect((await count.execute(handle.db, { companyId: 'a' })).rows).toEqual([{ n: 2 }]);
    expect((await count.execute(handle.db, { companyId: 'b' })).rows).toEqual([{ n: 1 }]);
    const { rows } = await sql<{
      name: string;
    }>`select name from pg_prepared_statements where statement like '%count(*)::int as n%'`.execute(handle.db);
    expect(rows.map((row) => row.name)).toEqual([expect.stringMatching(/^sb_[0-9a-f]{40}$/)]);
  });

  it('compiles one statement per shape', async () => {
    const notes = statementShapes(
      (shape: 'all' | 'one') => (_, p: { companyId: string; id: number }) =>
        shape === 'one'
          ? sql<Note>`select company_id, id, body from statement_notes where company_id = ${p.companyId} and id = ${p.id}`
          : sql<Note>`select company_id, id, body from statement_notes where company_id = ${p.companyId}`,
    );
    expect(notes('one')).toBe(notes('one'));
    expect(notes('one')).not.toBe(notes('all'));
    expect((await notes('one').execute(handle.db, { companyId: 'a', id: 1 })).rows).toHaveLength(1);
    expect((await notes('all').execute(handle.db, { companyId: 'a', id: 1 })).rows).toHaveLength(2);
  });
});
