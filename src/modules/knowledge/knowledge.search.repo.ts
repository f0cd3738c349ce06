/**
 * SQL of the retrieval lanes. Full text: BM25 computed from the postings (tf, chunk length,
 * document frequency per company). Docstore: exact phrase over whole documents, trigram
 * similarity over titles. Vector: the stored embeddings that feed the
 * in-process index.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db, Executor } from '../../db/database.js';

export interface LaneFilters {
  collectionIds?: string[];
  categories?: string[];
  startDate?: Date;
  endDate?: Date;
}

export interface LaneHit {
  chunk_id: string;
  score: number;
}

/** BM25 parameters (Robertson/Lucene defaults as in the BEIR baseline). */
export const BM25 = { k1: 1.2, b: 0.75 };

function chunkFilters(alias: string, filters: LaneFilters): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  if (filters.collectionIds?.length) parts.push(sql`${column('collection_id')} = any(${filters.collectionIds}::uuid[])`);
  if (filters.categories?.length) parts.push(sql`${column('categories')} && ${filters.categories}::text[]`);
  if (filters.startDate) parts.push(sql`${column('document_created_at')} >= ${filters.startDate}`);
  if (filters.endDate) parts.push(sql`${column('document_created_at')} <= ${filters.endDate}`);
  if (parts.length === 0) return sql`true`;
  return sql.join(parts, sql` and `);
}

export function hasFilters(filters: LaneFilters): boolean {
  return Boolean(filters.collectionIds?.length || filters.categories?.length || filters.startDate || filters.endDate);
}

/** The distinct lexemes of `query` under each of the text-search configurations. */
export async function queryLexemes(executor: Executor, query: string, configs: string[]): Promise<string[]> {
  const result = await sql<{ lexeme: string }>`
    select distinct u.lexeme from unnest(${configs}::text[]) cfg, unnest(to_tsvector(cfg::regconfig, ${query})) u`.execute(executor);
  return result.rows.map((row) => row.lexeme);
}

/** Top `limit` chunks by BM25 over the query's lexemes. */
export async function bm25Search(db: Db, companyId: string, lexemes: string[], filters: LaneFilters, limit: number): Promise<LaneHit[]> {
  if (lexemes.length === 0) return [];
  const { k1, b } = BM25;
  const filtered = hasFilters(filters);
  return db.transaction().execute(async (trx) => {
  // Common words bring tens of thousands of postings at 100k chunks: aggregate them in memory.
  await sql`set local work_mem = '32MB'`.execute(trx);
  const result = await sql<LaneHit>`
    with stats as (
      select greatest(chunk_count, 1)::float8 as n, greatest(token_total::float8 / greatest(chunk_count, 1), 1) as avgdl
      from kb_corpus_stats where company_id = ${companyId}
    ), postings as materialized (
      select p.lexeme, p.chunk_id, p.tf, p.dl
      from kb_postings p where p.company_id = ${companyId} and p.lexeme = any(${lexemes}::text[])
    ), df as (
      select lexeme, count(*)::float8 as df from postings group by lexeme
    ), scored as (
      select p.chunk_id,
             sum(ln(1 + (s.n - f.df + 0.5) / (f.df + 0.5)) * p.tf * (${k1}::float8 + 1)
                 / (p.tf + ${k1}::float8 * (1 - ${b}::float8 + ${b}::float8 * p.dl / s.avgdl))) as score
      from postings p join df f on f.lexeme = p.lexeme cross join stats s
      group by p.chunk_id
    )
    ${
      filtered
        ? sql`select s.chunk_id, s.score from scored s join kb_chunks c on c.id = s.chunk_id
              where ${chunkFilters('c', filters)} order by s.score desc, s.chunk_id limit ${limit}`
        : sql`select chunk_id, score from scored order by score desc, chunk_id limit ${limit}`
    }`.execute(trx);
  return result.rows;
  });
}

/** The ts_rank_cd ranking of the same lexemes (kept for the benchmark's comparison with BM25). */
export async function tsRankCdSearch(executor: Executor, companyId: string, lexemes: string[], filters: LaneFilters, limit: number): Promise<LaneHit[]> {
  if (lexemes.length === 0) return [];
  const query = lexemes.map(quoteLexeme).join(' | ');
  const result = await sql<LaneHit>`
    select c.id as chunk_id, ts_rank_cd(c.tsv, ${query}::tsquery, 1) as score
    from kb_chunks c
    where c.company_id = ${companyId} and c.tsv @@ ${query}::tsquery and ${chunkFilters('c', filters)}
    order by score desc, c.id limit ${limit}`.execute(executor);
  return result.rows;
}

/** One term of a phrase query: `'lexeme'` quoted for the tsquery parser. */
export function quoteLexeme(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * The docstore lane's title match: only for queries short enough to be a title lookup (a long
 * query's trigrams make the index scan cost tens of milliseconds at 100k chunks), and only for
 * titles close to the query (exact evidence).
 */
export const DOCSTORE = { minTitleSimilarity: 0.6, maxTitleQueryLength: 64 };

/**
 * The docstore lane, over whole documents, answering only with exact evidence: the query as an
 * exact phrase (language-aware, score + 1) and titles similar to the query by trigrams
 * (typo-tolerant, score + the similarity). Each document is represented by its chunk that holds
 * the phrase, else its chunk richest in the query's words.
 */
export async function docstoreSearch(
  db: Db,
  companyId: string,
  query: string,
  lexemes: string[],
  configs: string[],
  filters: LaneFilters,
  limit: number,
): Promise<LaneHit[]> {
  const documentFilters: RawBuilder<unknown>[] = [];
  if (filters.collectionIds?.length) documentFilters.push(sql`d.collection_id = any(${filters.collectionIds}::uuid[])`);
  if (filters.categories?.length) documentFilters.push(sql`d.categories && ${filters.categories}::text[]`);
  if (filters.startDate) documentFilters.push(sql`d.created_at >= ${filters.startDate}`);
  if (filters.endDate) documentFilters.push(sql`d.created_at <= ${filters.endDate}`);
  const where = documentFilters.length ? sql.join(documentFilters, sql` and `) : sql`true`;
  const phrase = sql.join(configs.map((config) => sql`phraseto_tsquery(${config}::regconfig, ${query})`), sql` || `);
  const anyWord = lexemes.map(quoteLexeme).join(' | ');
  const titled = query.length <= DOCSTORE.maxTitleQueryLength;
  return db.transaction().execute(async (trx) => {
    // The trigram index then only returns titles that can pass the threshold.
    if (titled) await sql`select set_config('pg_trgm.similarity_threshold', ${String(DOCSTORE.minTitleSimilarity)}, true)`.execute(trx);
    const result = await sql<LaneHit>`
    with phrase as (
      select d.id, 1.0::float8 as score from kb_documents d
      where d.company_id = ${companyId} and d.status = 'completed'
        and d.content_tsv @@ (${phrase}) and ${where}
      limit ${limit}
    ), title as (
      select d.id, similarity(d.title, ${query})::float8 as score from kb_documents d
      where ${titled} and d.company_id = ${companyId} and d.status = 'completed' and d.title % ${query} and ${where}
    ), candidates as (
      select id, sum(score) as score from (select * from phrase union all select * from title) x
      group by id order by score desc limit ${limit}
    ), best as (
      select distinct on (c.document_id) c.id as chunk_id, k.score
      from candidates k join kb_chunks c on c.document_id = k.id and c.company_id = ${companyId}
      order by c.document_id, c.tsv @@ (${phrase}) desc,
               case when ${anyWord} = '' then 0 else ts_rank(c.tsv, ${anyWord}::tsquery) end desc, c.ordinal
    )
    select chunk_id, score from best order by score desc, chunk_id limit ${limit}`.execute(trx);
    return result.rows;
  });
}

export interface VectorRow {
  id: string;
  collection_id: string | null;
  categories: string[];
  document_created_at: Date;
  embedding: Buffer;
}

/** Every stored vector of one model in a company (the in-process index is built from these). */
export async function vectorRows(executor: Executor, companyId: string, model: string): Promise<VectorRow[]> {
  const rows = await executor
    .selectFrom('kb_chunks')
    .select(['id', 'collection_id', 'categories', 'document_created_at', 'embedding'])
    .where('company_id', '=', companyId)
    .where('embedding_model', '=', model)
    .where('embedding', 'is not', null)
    .execute();
  return rows as VectorRow[];
}

export interface ChunkDetails {
  id: string;
  text: string;
  document_id: string;
  title: string;
  collection_id: string | null;
  categories: string[];
  language: string;
}

export async function chunkDetails(executor: Executor, companyId: string, ids: string[]): Promise<ChunkDetails[]> {
  if (ids.length === 0) return [];
  return executor
    .selectFrom('kb_chunks as c')
    .innerJoin('kb_documents as d', 'd.id', 'c.document_id')
    .select(['c.id', 'c.text', 'c.document_id', 'd.title', 'c.collection_id', 'c.categories', 'c.language'])
    .where('c.company_id', '=', companyId)
    .where('c.id', 'in', ids)
    .execute();
}

/** Documents sharing some of `lexemes` with a text, best first (candidates of a similarity check). */
export async function similarCandidates(executor: Executor, companyId: string, lexemes: string[], limit: number): Promise<{ id: string; title: string; content: string }[]> {
  if (lexemes.length === 0) return [];
  const query = lexemes.map(quoteLexeme).join(' | ');
  const result = await sql<{ id: string; title: string; content: string }>`
    select d.id, d.title, d.content from kb_documents d
    where d.company_id = ${companyId} and d.status = 'completed' and d.content_tsv @@ ${query}::tsquery
    order by ts_rank(d.content_tsv, ${query}::tsquery) desc, d.id limit ${limit}`.execute(executor);
  return result.rows;
}
