/**
 * SQL of the retrieval lanes. Full text: BM25 computed from the postings (tf, chunk length,
 * document frequency per company). Docstore: exact phrase over whole documents, trigram
 * similarity over titles. Vector: the stored embeddings that feed the
 * in-process index.
 */
import { sql, type RawBuilder } from 'kysely';
import { prepared, type Db, type Executor } from '../../db/database.js';
import {
  BM25,
  DOCSTORE,
  type ChunkDetails,
  type IndexChunkRow,
  type IndexDocumentRow,
  type IndexSnapshot,
  type LaneFilters,
  type LaneHit,
  type TextLanes,
} from './knowledge.search.types.js';

export { BM25, DOCSTORE };
export type { ChunkDetails, LaneFilters, LaneHit, TextLanes };

function chunkFilters(alias: string, filters: LaneFilters): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  if (filters.collectionIds?.length)
    parts.push(sql`${column('collection_id')} = any(${filters.collectionIds}::uuid[])`);
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
    select distinct u.lexeme from unnest(${configs}::text[]) cfg, unnest(to_tsvector(cfg::regconfig, ${query})) u`.execute(
    executor,
  );
  return result.rows.map((row) => row.lexeme);
}

/** One term of a phrase query: `'lexeme'` quoted for the tsquery parser. */
export function quoteLexeme(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * Session settings the lanes rely on, set on every pooled connection (no transaction per search):
 * the trigram threshold makes the title index return only titles that can pass it, and common
 * words bring tens of thousands of postings at 100k chunks, aggregated in memory.
 */
export const SEARCH_SESSION_SETTINGS = {
  'pg_trgm.similarity_threshold': String(DOCSTORE.minTitleSimilarity),
  work_mem: '32MB',
};

export interface TextLanesInput {
  companyId: string;
  query: string;
  /** Text-search configurations the query is read with. */
  configs: string[];
  filters: LaneFilters;
  /** Hits kept per lane. */
  depth: number;
  /** Full-text ranking, or null to skip the lane. */
  fulltext: 'bm25' | 'ts_rank_cd' | null;
  docstore: boolean;
  /** Hits ranked this high in a lane come back with their chunk's details. */
  detailRank: number;
  /**
   * The documents whose titles reach the docstore lane's similarity, found in memory
   * (knowledge.title-index.ts): read and checked by id instead of the title scan.
   */
  titleIds?: readonly string[] | null;
}

/**
 * BM25 over the postings (tf, chunk length, document frequency per company). Each lexeme's
 * document frequency is counted first (an index-only count per lexeme), then the postings are
 * read once and scored as they stream into the per-chunk sums: materializing the postings to
 * count them and joining them back cost about as much again as the scoring (SciFact at 101k
 * chunks, bench/retrieval/latency.ts).
 */
function bm25Lane(input: TextLanesInput) {
  const { k1, b } = BM25;
  const { companyId, filters, depth } = input;
  return sql`
    stats as (
      select greatest(chunk_count, 1)::float8 as n, greatest(token_total::float8 / greatest(chunk_count, 1), 1) as avgdl
      from kb_corpus_stats where company_id = ${companyId}
    ), df as materialized (
      select w.lexeme, d.df from unnest((select lexemes from q)::text[]) w(lexeme)
      cross join lateral (
        select count(*)::float8 as df from kb_postings p where p.company_id = ${companyId} and p.lexeme = w.lexeme
      ) d
    ), scored as (
      select p.chunk_id,
             sum(ln(1 + (s.n - f.df + 0.5) / (f.df + 0.5)) * p.tf * (${k1}::float8 + 1)
                 / (p.tf + ${k1}::float8 * (1 - ${b}::float8 + ${b}::float8 * p.dl / s.avgdl))) as score
      from kb_postings p join df f on f.lexeme = p.lexeme cross join stats s
      where p.company_id = ${companyId} and p.lexeme = any((select lexemes from q)::text[])
      group by p.chunk_id
    ), fulltext as (
      ${
        hasFilters(filters)
          ? sql`select s.chunk_id, s.score from scored s join kb_chunks c on c.id = s.chunk_id
                where ${chunkFilters('c', filters)} order by s.score desc, s.chunk_id limit ${depth}`
          : sql`select chunk_id, score from scored order by score desc, chunk_id limit ${depth}`
      }
    )`;
}

/** ts_rank_cd of the same lexemes (kept for the benchmark's comparison with BM25). */
function tsRankCdLane(input: TextLanesInput) {
  return sql`
    fulltext as (
      select c.id as chunk_id, ts_rank_cd(c.tsv, q.any_word, 1)::float8 as score
      from kb_chunks c, q
      where c.company_id = ${input.companyId} and q.any_word is not null and c.tsv @@ q.any_word and ${chunkFilters('c', input.filters)}
      order by score desc, c.id limit ${input.depth}
    )`;
}

/**
 * The docstore lane, over whole documents, answering only with exact evidence: the query as an
 * exact phrase (language-aware, score + 1) and titles similar to the query by trigrams
 * (typo-tolerant, score + the similarity). Each document is represented by its chunk that holds
 * the phrase, else its chunk richest in the query's words.
 */
function docstoreLane(input: TextLanesInput) {
  const { companyId, query, configs, filters, depth } = input;
  const documentFilters: RawBuilder<unknown>[] = [];
  if (filters.collectionIds?.length) documentFilters.push(sql`d.collection_id = any(${filters.collectionIds}::uuid[])`);
  if (filters.categories?.length) documentFilters.push(sql`d.categories && ${filters.categories}::text[]`);
  if (filters.startDate) documentFilters.push(sql`d.created_at >= ${filters.startDate}`);
  if (filters.endDate) documentFilters.push(sql`d.created_at <= ${filters.endDate}`);
  const where = documentFilters.length ? sql.join(documentFilters, sql` and `) : sql`true`;
  const phrase = sql.join(
    configs.map((config) => sql`phraseto_tsquery(${config}::regconfig, ${query})`),
    sql` || `,
  );
  // A literal, not a parameter: the prepared statement of a long query must not plan a title scan.
  const titled = query.length <= DOCSTORE.maxTitleQueryLength;
  // Titles found in memory are checked again by id against the current rows: PostgreSQL's own
  // similarity of the current title against the threshold `%` applies (the session's
  // pg_trgm.similarity_threshold, SEARCH_SESSION_SETTINGS), written so that no plan scans the
  // trigram index for it. Otherwise `%` and the trigram index.
  const similar = input.titleIds
    ? sql`d.id = any(${input.titleIds}::uuid[]) and d.company_id = ${companyId} and d.status = 'completed'
          and similarity(d.title, ${query})::float8 >= ${sql.lit(DOCSTORE.minTitleSimilarity)}::float8`
    : sql`d.company_id = ${companyId} and d.status = 'completed' and d.title % ${query}`;
  // The phrase query is computed once (a prepared statement's generic plan would call the
  // function for every row it filters).
  return sql`
    phrase_query as materialized (
      select ${phrase} as tsq
    ), phrase as (
      select d.id, 1.0::float8 as score from kb_documents d
      where d.company_id = ${companyId} and d.status = 'completed'
        and d.content_tsv @@ (select tsq from phrase_query) and ${where}
      limit ${depth}
    ), title as (
      select d.id, similarity(d.title, ${query})::float8 as score from kb_documents d
      where ${sql.lit(titled)} and ${similar} and ${where}
    ), candidates as (
      select id, sum(score) as score from (select * from phrase union all select * from title) x
      group by id order by score desc limit ${depth}
    ), best as (
      select distinct on (c.document_id) c.id as chunk_id, k.score
      from candidates k cross join q cross join phrase_query p join kb_chunks c on c.document_id = k.id and c.company_id = ${companyId}
      order by c.document_id, c.tsv @@ p.tsq desc, coalesce(ts_rank(c.tsv, q.any_word), 0) desc, c.ordinal
    ), docstore as (
      select chunk_id, score from best order by score desc, chunk_id limit ${depth}
    )`;
}

/**
 * One text lane in one statement (one round trip): the query's lexemes, the lane's ranking, and
 * the details of the chunks it ranks within `detailRank`.
 */
async function laneSearch(
  executor: Executor,
  input: TextLanesInput,
  lane: 'fulltext' | 'docstore',
  detailIds: readonly string[] = [],
) {
  const { query, configs, detailRank } = input;
  // The details of other chunks asked for (the in-process lane's top hits) in the same round trip.
  const extra = detailIds.length
    ? sql`union all
    select null::uuid, null::float8, null::bigint, c.id, c.text, c.document_id, d.title, d.questions, c.collection_id,
           c.categories, c.language
    from kb_chunks c join kb_documents d on d.id = c.document_id
    where c.company_id = ${input.companyId} and c.id = any(${detailIds}::uuid[])`
    : sql``;
  // Lexemes quoted for the tsquery parser as quoteLexeme does; chr(92) is a backslash, chr(39) a quote.
  const quoted = sql`chr(39) || replace(replace(l, chr(92), chr(92) || chr(92)), chr(39), chr(39) || chr(39)) || chr(39)`;
  const ranking =
    lane === 'docstore' ? docstoreLane(input) : input.fulltext === 'ts_rank_cd' ? tsRankCdLane(input) : bm25Lane(input);
  const result = await prepared(sql<
    { chunk_id: string | null; score: number | null; rank: unknown } & Partial<ChunkDetails>
  >`
    with words as materialized (
      select distinct u.lexeme as l from unnest(${configs}::text[]) cfg, unnest(to_tsvector(cfg::regconfig, ${query})) u
    ), q as materialized (
      select coalesce(array_agg(l), '{}') as lexemes, string_agg(${quoted}, ' | ')::tsquery as any_word from words
    ), ${ranking}, hits as (
      select chunk_id, score, row_number() over (order by score desc, chunk_id) as rank from ${sql.ref(lane)}
    )
    select h.chunk_id, h.score, h.rank, x.*
    from hits h
    left join lateral (
      -- Only the top hits are looked up, each by its primary key (the lanes only rank the
      -- company's chunks); offset 0 keeps the subquery, and with it the outer rank as a one-time
      -- filter, from being merged into a join.
      select c.id, c.text, c.document_id, d.title, d.questions, c.collection_id, c.categories, c.language
      from kb_chunks c join kb_documents d on d.id = c.document_id
      where h.rank <= ${detailRank} and c.id = h.chunk_id
      offset 0
    ) x on true
    ${extra}
    order by rank nulls last`).execute(executor);
  const hits: LaneHit[] = [];
  for (const { chunk_id, score } of result.rows) if (chunk_id !== null) hits.push({ chunk_id, score: score! });
  const details = result.rows
    .filter((row) => row.id)
    .map(({ chunk_id: _chunk, score: _score, rank: _rank, ...detail }) => detail as ChunkDetails);
  return { hits, details };
}

/**
 * The full-text and docstore lanes, one statement each, side by side on two connections: on a
 * 40-article knowledge base as on SciFact this answers sooner than both lanes in one statement
 * (one backend doing both), bench/chat and bench/retrieval.
 */
export async function textLanes(executor: Executor, input: TextLanesInput): Promise<TextLanes> {
  const [fulltext, docstore] = await Promise.all([
    input.fulltext ? laneSearch(executor, input, 'fulltext') : null,
    input.docstore ? laneSearch(executor, input, 'docstore') : null,
  ]);
  return {
    fulltext: fulltext?.hits ?? null,
    docstore: docstore?.hits ?? null,
    details: [...(fulltext?.details ?? []), ...(docstore?.details ?? [])],
  };
}

/**
 * The docstore lane (one statement) with the details of `detailIds` too: the top hits of a
 * full-text lane answered in memory, whose details would otherwise cost a round trip of their own.
 */
export async function docstoreWithDetails(
  executor: Executor,
  input: TextLanesInput,
  detailIds: readonly string[],
): Promise<{ hits: LaneHit[]; details: ChunkDetails[] }> {
  return laneSearch(executor, input, 'docstore', detailIds);
}

/** The lexemes (with positions) of each word read alone under `config`, in the order given. */
export async function wordLexemes(
  executor: Executor,
  config: string,
  words: string[],
): Promise<{ lexeme: string; positions: number[] }[][]> {
  const result = await sql<{ i: number; lexeme: string | null; positions: number[] | null }>`
    select w.i::int as i, u.lexeme, u.positions::int[] as positions
    from unnest(${words}::text[]) with ordinality as w(word, i)
    left join lateral unnest(to_tsvector(${config}::regconfig, w.word)) u on true`.execute(executor);
  const lexemes: { lexeme: string; positions: number[] }[][] = words.map(() => []);
  for (const row of result.rows)
    if (row.lexeme !== null) lexemes[row.i - 1]!.push({ lexeme: row.lexeme, positions: row.positions ?? [] });
  return lexemes;
}

/**
 * Everything the in-process text lanes need of one company, read in one snapshot, or null when
 * the company has more than `maxChunks` chunks.
 */
export async function textIndexSnapshot(db: Db, companyId: string, maxChunks: number): Promise<IndexSnapshot | null> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const corpus = await sql<{ chunk_count: number; token_total: number }>`
      select chunk_count::int, token_total::float8 as token_total from kb_corpus_stats where company_id = ${companyId}`.execute(
        trx,
      );
      const stats = corpus.rows[0] ?? null;
      if (stats && stats.chunk_count > maxChunks) return null;
      const chunks = await sql<IndexChunkRow>`
      select id, document_id, ordinal, text, language, collection_id, categories, document_created_at, token_count, tsv::text as tsv
      from kb_chunks where company_id = ${companyId} order by document_id, ordinal`.execute(trx);
      if (chunks.rows.length > maxChunks) return null;
      const documents = await sql<IndexDocumentRow>`
      select id, title, questions, status, collection_id, categories, created_at,
             case when status = 'completed' then content_tsv::text end as tsv
      from kb_documents where company_id = ${companyId}`.execute(trx);
      return { chunks: chunks.rows, documents: documents.rows, corpus: stats };
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

export async function chunkDetails(executor: Executor, companyId: string, ids: string[]): Promise<ChunkDetails[]> {
  if (ids.length === 0) return [];
  return executor
    .selectFrom('kb_chunks as c')
    .innerJoin('kb_documents as d', 'd.id', 'c.document_id')
    .select([
      'c.id',
      'c.text',
      'c.document_id',
      'd.title',
      'd.questions',
      'c.collection_id',
      'c.categories',
      'c.language',
    ])
    .where('c.company_id', '=', companyId)
    .where('c.id', 'in', ids)
    .execute();
}

/** Documents sharing some of `lexemes` with a text, best first (candidates of a similarity check). */
export async function similarCandidates(
  executor: Executor,
  companyId: string,
  lexemes: string[],
  limit: number,
): Promise<{ id: string; title: string; content: string }[]> {
  if (lexemes.length === 0) return [];
  const query = lexemes.map(quoteLexeme).join(' | ');
  const result = await sql<{ id: string; title: string; content: string }>`
    select d.id, d.title, d.content from kb_documents d
    where d.company_id = ${companyId} and d.status = 'completed' and d.content_tsv @@ ${query}::tsquery
    order by ts_rank(d.content_tsv, ${query}::tsquery) desc, d.id limit ${limit}`.execute(executor);
  return result.rows;
}
