/**
 * A document's chunks are written in statements of a bounded number of chunks (so no one
 * statement's parameters hold the event loop long): however they are cut, every chunk is written
 * exactly once, in order, with the same full-text vectors, postings and corpus statistics as in
 * one statement, and a replacement leaves nothing of the chunks before it.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tasks from '../../src/modules/knowledge/knowledge.tasks.repo.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant } from '../helpers/factories.js';
import { uploadArticle } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
});
afterAll(async () => t?.close());

const CHUNKS = Array.from(
  { length: 23 },
  (_, i) => `Section ${i + 1}: the pump number ${i + 1} is primed before the valve ${i % 5} is opened.`,
);

describe('chunks written in bounded statements', () => {
  it('writes every chunk once, in order, with the same vectors, postings and statistics as one statement', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const upload = await uploadArticle(t.app, tenant.headers, { document_title: 'Pumps', content: 'Pumps.' });
    const id = upload.document_id.slice(4);
    const db = t.container.db;
    const row = await db.selectFrom('kb_documents').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const document = { ...row, questions: ['How is a pump primed?'] };
    const snapshot = async () => ({
      chunks: (
        await sql<{ ordinal: number; text: string; tsv: string; token_count: number }>`
          select ordinal, text, tsv::text as tsv, token_count from kb_chunks
          where document_id = ${id} order by ordinal, id`.execute(db)
      ).rows,
      postings: (
        await sql<{ lexeme: string; ordinal: number; tf: number; dl: number }>`
          select p.lexeme, c.ordinal, p.tf, p.dl from kb_postings p join kb_chunks c on c.id = p.chunk_id
          where c.document_id = ${id} order by c.ordinal, p.lexeme`.execute(db)
      ).rows,
      corpus: await db
        .selectFrom('kb_corpus_stats')
        .select(['chunk_count', 'token_total'])
        .where('company_id', '=', row.company_id)
        .executeTakeFirst(),
    });
    const write = (texts: string[], perStatement?: number) =>
      db.transaction().execute((trx) =>
        tasks.replaceChunks(
          trx,
          document,
          texts.map((text, ordinal) => ({ ordinal, text, embedding: null })),
          'en',
          'english',
          null,
          perStatement,
        ),
      );

    await write(CHUNKS, 1000);
    const whole = await snapshot();
    expect(whole.chunks.map((c) => c.ordinal)).toEqual(CHUNKS.map((_, i) => i));
    expect(whole.postings.length).toBeGreaterThan(CHUNKS.length);

    // Cut in statements of 4 (the last one of 3), of 1, and of the default size: the same rows.
    for (const perStatement of [4, 1, undefined]) {
      await write(CHUNKS.slice(0, 5), 2); // something else first: replaced entirely
      await write(CHUNKS, perStatement);
      expect(await snapshot(), `${perStatement ?? 'default'} per statement`).toEqual(whole);
    }
  });
});
