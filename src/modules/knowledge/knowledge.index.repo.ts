/**
 * SQL of the in-process BM25 index (knowledge.bm25-index.ts) and title index
 * (knowledge.title-index.ts): a company's chunks and titles read in one snapshot with the corpus
 * statistics they go with, and the chunks changed since a version (the change log of migration
 * 0205) with the titles of their documents, also in one snapshot.
 */
import { sql } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { Bm25ChunkRow, CorpusState } from './knowledge.bm25-index.js';
import type { TitleRow } from './knowledge.title-index.js';

export interface CorpusRow extends CorpusState {
  /** The log holds every change after this version (older ones were pruned). */
  changes_from: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CHUNK_COLUMNS = sql`id, token_count, collection_id, categories, document_created_at, tsv::text as tsv`;

/**
 * A title's trigrams as PostgreSQL reads them, or null for a title of ASCII when the process
 * reads ASCII as it does (`show_trgm` costs about 0.1 ms a title).
 */
function titleTrigrams(asciiReadHere: boolean) {
  return asciiReadHere ? sql`case when d.title ~ '[^\x01-\x7f]' then show_trgm(d.title) end` : sql`show_trgm(d.title)`;
}

async function corpusRow(executor: Executor, companyId: string): Promise<CorpusRow> {
  const result = await sql<CorpusRow>`
    select chunk_count::float8 as chunk_count, token_total::float8 as token_total, version::float8 as version,
           changes_from::float8 as changes_from
    from kb_corpus_stats where company_id = ${companyId}`.execute(executor);
  return result.rows[0] ?? { chunk_count: 0, token_total: 0, version: 0, changes_from: 0 };
}

/** The company's corpus statistics now (to decide whether to build, before reading the chunks). */
export async function corpusState(executor: Executor, companyId: string): Promise<CorpusRow> {
  return corpusRow(executor, companyId);
}

/**
 * Every chunk of the company, `pageSize` at a time through a cursor, with the statistics of the
 * same snapshot, then (with `onTitles`) every document's title with its trigrams (`TitleRow`);
 * the callbacks may take their time (the snapshot holds).
 */
export async function readAllChunks(
  db: Db,
  companyId: string,
  pageSize: number,
  onStart: (corpus: CorpusRow) => void,
  onPage: (rows: Bm25ChunkRow[]) => Promise<void>,
  onTitles?: { asciiReadHere: boolean; onPage: (rows: TitleRow[]) => Promise<void> },
): Promise<CorpusRow> {
  if (!UUID.test(companyId)) throw new Error('Not a company id');
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const corpus = await corpusRow(trx, companyId);
      onStart(corpus);
      // A cursor's statement takes no parameters: the id, checked above, is a literal.
      await sql`declare bm25_chunks no scroll cursor for
        select ${CHUNK_COLUMNS} from kb_chunks where company_id = ${sql.lit(companyId)}`.execute(trx);
      for (;;) {
        const page = await sql<Bm25ChunkRow>`fetch ${sql.raw(String(pageSize))} from bm25_chunks`.execute(trx);
        if (page.rows.length === 0) break;
        await onPage(page.rows);
      }
      await sql`close bm25_chunks`.execute(trx);
      if (onTitles) {
        await sql`declare bm25_titles no scroll cursor for
          select d.id, d.title, ${titleTrigrams(onTitles.asciiReadHere)} as trigrams
          from kb_documents d where d.company_id = ${sql.lit(companyId)}`.execute(trx);
        for (;;) {
          const page = await sql<TitleRow>`fetch ${sql.raw(String(pageSize))} from bm25_titles`.execute(trx);
          if (page.rows.length === 0) break;
          await onTitles.onPage(page.rows);
        }
        await sql`close bm25_titles`.execute(trx);
      }
      return corpus;
    });
}

export type ChangesSince =
  | { kind: 'current'; corpus: CorpusRow }
  /** The log no longer reaches back to the version asked for, or holds more than `maxIds` chunks. */
  | { kind: 'rebuild'; corpus: CorpusRow }
  | { kind: 'changes'; corpus: CorpusRow; ids: string[]; rows: Bm25ChunkRow[]; titles: TitleRow[] };

/**
 * The chunks touched after `version` (ids), the current rows of those still present, and the
 * titles of their documents (a title changes only with its document's chunks: re-ingested).
 */
export async function changesSince(
  db: Db,
  companyId: string,
  version: number,
  maxIds: number,
  asciiReadHere = false,
): Promise<ChangesSince> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const corpus = await corpusRow(trx, companyId);
      if (corpus.version === version) return { kind: 'current', corpus } as const;
      if (corpus.version < version || version < corpus.changes_from) return { kind: 'rebuild', corpus } as const;
      const changed = await sql<{ chunk_id: string }>`
        select distinct chunk_id from kb_chunk_changes
        where company_id = ${companyId} and version > ${version} and version <= ${corpus.version}
        limit ${maxIds + 1}`.execute(trx);
      if (changed.rows.length > maxIds) return { kind: 'rebuild', corpus } as const;
      const ids = changed.rows.map((row) => row.chunk_id);
      const rows = await sql<Bm25ChunkRow>`
        select ${CHUNK_COLUMNS} from kb_chunks where company_id = ${companyId} and id = any(${ids}::uuid[])`.execute(
        trx,
      );
      const titles = await sql<TitleRow>`
        select d.id, d.title, ${titleTrigrams(asciiReadHere)} as trigrams from kb_documents d
        where d.company_id = ${companyId}
          and d.id in (select document_id from kb_chunks where company_id = ${companyId} and id = any(${ids}::uuid[]))`.execute(
        trx,
      );
      return { kind: 'changes', corpus, ids, rows: rows.rows, titles: titles.rows } as const;
    });
}

/**
 * Forgets the change log of a company older than `olderThanSeconds`, and records up to which
 * version it was pruned (an index older than that is rebuilt whole).
 */
export async function pruneChanges(executor: Executor, companyId: string, olderThanSeconds: number): Promise<void> {
  await sql`
    with gone as (
      delete from kb_chunk_changes
      where company_id = ${companyId} and changed_at < now() - make_interval(secs => ${olderThanSeconds})
      returning version
    )
    update kb_corpus_stats s set changes_from = x.v
    from (select max(version) as v from gone) x
    where s.company_id = ${companyId} and x.v is not null and x.v > s.changes_from`.execute(executor);
}

/** PostgreSQL's trigrams (`show_trgm`) of each text, in the order given. */
export async function textTrigrams(executor: Executor, texts: string[]): Promise<string[][]> {
  const result = await sql<{ i: number; trigrams: string[] }>`
    select t.i::int as i, show_trgm(t.text) as trigrams from unnest(${texts}::text[]) with ordinality as t(text, i)`.execute(
    executor,
  );
  const read: string[][] = texts.map(() => []);
  for (const row of result.rows) read[row.i - 1] = row.trigrams;
  return read;
}
