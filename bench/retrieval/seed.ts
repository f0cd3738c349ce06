/**
 * Seeds a company's knowledge base with SQL, as the ingestion would write it: a test
 * collection's documents chunked as the ingestion chunks them (`chunkText`), with the same
 * tsvectors (title + text), token counts, postings and corpus statistics — without running the
 * ingestion's pipeline per document (minutes at SciFact's size).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { chunkText } from '../../src/modules/knowledge/knowledge.text.js';
import type { Dataset } from './datasets.js';

/**
 * The collection's documents into the company (documents, chunks; postings when asked), 500 per
 * statement. Returns our document id → the collection's document id.
 */
export async function seedDataset(
  db: Db,
  companyId: string,
  createdBy: string,
  dataset: Dataset,
  options: { postings: boolean } = { postings: false },
): Promise<Map<string, string>> {
  const docs = dataset.corpus.map((doc) => ({
    id: randomUUID(),
    corpus_id: doc.id,
    title: doc.title,
    content: doc.text || doc.title,
    chunks: chunkText(doc.text || doc.title, 'en'),
  }));
  for (let start = 0; start < docs.length; start += 500) {
    const batch = docs.slice(start, start + 500).map(({ corpus_id: _id, ...doc }) => doc);
    await sql`
      with d as (
        select * from jsonb_to_recordset(${JSON.stringify(batch)}::jsonb) as x(id uuid, title text, content text, chunks text[])
      ), ins as (
        insert into kb_documents (id, company_id, title, categories, source_type, content, content_tsv, language, status,
                                  chunk_count, embedding_status, created_by, completed_at)
        select d.id, ${companyId}, d.title, '{}', 'article', d.content, to_tsvector('english', d.title || ' ' || d.content),
               'en', 'completed', cardinality(d.chunks), 'unavailable', ${createdBy}, now()
        from d returning id, title, created_at
      )
      insert into kb_chunks (company_id, document_id, categories, document_created_at, ordinal, text, language, tsv, token_count)
      select ${companyId}, ins.id, '{}', ins.created_at, c.ordinal - 1, c.text, 'en',
             to_tsvector('english', ins.title || ' ' || c.text),
             (select coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0) from unnest(to_tsvector('english', ins.title || ' ' || c.text)) u)
      from ins join d on d.id = ins.id, unnest(d.chunks) with ordinality c(text, ordinal)`.execute(db);
  }
  if (options.postings) {
    await sql`insert into kb_postings (company_id, lexeme, chunk_id, tf, dl)
      select c.company_id, u.lexeme, c.id, coalesce(array_length(u.positions, 1), 1), c.token_count
      from kb_chunks c, unnest(c.tsv) u where c.company_id = ${companyId}`.execute(db);
    await setCorpusStats(db, companyId);
  }
  return new Map(docs.map((doc) => [doc.id, doc.corpus_id]));
}

/** The company's corpus statistics from its chunks (a new version); the change log of the load forgotten. */
export async function setCorpusStats(db: Db, companyId: string) {
  await sql`insert into kb_corpus_stats as s (company_id, chunk_count, token_total)
    select ${companyId}, count(*), coalesce(sum(token_count), 0) from kb_chunks where company_id = ${companyId}
    on conflict (company_id) do update set chunk_count = excluded.chunk_count, token_total = excluded.token_total,
      version = s.version + 1`.execute(db);
  await sql`delete from kb_chunk_changes where company_id = ${companyId}`.execute(db);
}
