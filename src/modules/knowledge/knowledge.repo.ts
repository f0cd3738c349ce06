/**
 * SQL of the knowledge base's records: collections, documents and their tasks, chunks with
 * their postings and the per-company corpus statistics. Every function takes the executor first
 * and the company id second; nothing here crosses companies.
 */
import { sql, type Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import { AppError } from '../../http/errors.js';
import type { KbCollectionsTable, KbDocumentsTable, TaskStatus } from './knowledge.tables.js';

export type CollectionRow = Selectable<KbCollectionsTable> & { document_count: number };
export type DocumentRow = Omit<Selectable<KbDocumentsTable>, 'source_bytes' | 'content_tsv' | 'content' | 'worker_id'>;

function translate(error: unknown): never {
  const code = (error as { code?: string }).code;
  if (code === '23505') throw new AppError(409, 'A collection with this name already exists in your company');
  if (code === '23503') throw new AppError(404, 'Collection not found');
  throw error;
}

// ---------------------------------------------------------------- collections

const documentCount = sql<number>`(select count(*)::int from kb_documents d where d.collection_id = c.id)`;

export async function insertCollection(
  executor: Executor,
  row: { company_id: string; name: string; description: string; is_private: boolean; created_by: string },
): Promise<CollectionRow> {
  const inserted = await executor
    .insertInto('kb_collections')
    .values({
      company_id: row.company_id,
      name: row.name,
      description: row.description,
      is_private: row.is_private,
      created_by: row.created_by,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
    .catch(translate);
  return { ...inserted, document_count: 0 };
}

export async function findCollection(
  executor: Executor,
  companyId: string,
  id: string,
): Promise<CollectionRow | undefined> {
  return executor
    .selectFrom('kb_collections as c')
    .selectAll('c')
    .select(documentCount.as('document_count'))
    .where('c.company_id', '=', companyId)
    .where('c.id', '=', id)
    .executeTakeFirst() as Promise<CollectionRow | undefined>;
}

export async function listCollections(
  executor: Executor,
  companyId: string,
  skip: number,
  limit: number,
): Promise<CollectionRow[]> {
  return executor
    .selectFrom('kb_collections as c')
    .selectAll('c')
    .select(documentCount.as('document_count'))
    .where('c.company_id', '=', companyId)
    .orderBy('c.created_at', 'desc')
    .orderBy('c.id')
    .offset(skip)
    .limit(limit)
    .execute() as Promise<CollectionRow[]>;
}

export async function countCollections(executor: Executor, companyId: string): Promise<number> {
  const row = await executor
    .selectFrom('kb_collections')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('company_id', '=', companyId)
    .executeTakeFirstOrThrow();
  return row.n;
}

export async function updateCollection(
  executor: Executor,
  companyId: string,
  id: string,
  patch: { name?: string; description?: string; is_private?: boolean },
  now: Date,
): Promise<boolean> {
  const result = await executor
    .updateTable('kb_collections')
    .set({ name: patch.name, description: patch.description, is_private: patch.is_private, updated_at: now })
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst()
    .catch(translate);
  return result.numUpdatedRows > 0n;
}

export async function deleteCollection(executor: Executor, companyId: string, id: string): Promise<boolean> {
  const result = await executor
    .deleteFrom('kb_collections')
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Ids among `ids` that are collections of the company. */
export async function existingCollectionIds(executor: Executor, companyId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await executor
    .selectFrom('kb_collections')
    .select('id')
    .where('company_id', '=', companyId)
    .where('id', 'in', ids)
    .execute();
  return rows.map((row) => row.id);
}

/** Per collection among `ids`: whether some document is unfinished, whether some failed. */
export async function collectionTaskStates(
  executor: Executor,
  companyId: string,
  ids: string[],
): Promise<{ collection_id: string; unfinished: boolean; failed: boolean }[]> {
  if (ids.length === 0) return [];
  const rows = await executor
    .selectFrom('kb_documents')
    .select([
      'collection_id',
      sql<boolean>`bool_or(status in ('pending', 'processing'))`.as('unfinished'),
      sql<boolean>`bool_or(status = 'failed')`.as('failed'),
    ])
    .where('company_id', '=', companyId)
    .where('collection_id', 'in', ids)
    .groupBy('collection_id')
    .execute();
  return rows.map((row) => ({ collection_id: row.collection_id!, unfinished: row.unfinished, failed: row.failed }));
}

// ---------------------------------------------------------------- documents

const DOCUMENT_COLUMNS = [
  'id',
  'company_id',
  'collection_id',
  'title',
  'categories',
  'source_type',
  'source_url',
  'file_name',
  'mime_type',
  'size_bytes',
  'language',
  'task_id',
  'status',
  'error',
  'attempt',
  'chunk_count',
  'embedding_status',
  'embedding_error',
  'embedding_model',
  'created_by',
  'created_at',
  'updated_at',
  'processing_started_at',
  'completed_at',
] as const;

export interface NewDocument {
  company_id: string;
  collection_id: string | null;
  title: string;
  categories: string[];
  source_type: 'file' | 'article' | 'website';
  source_url: string | null;
  file_name: string | null;
  mime_type: string | null;
  size_bytes: number;
  source_bytes: Buffer | null;
  content: string;
  created_by: string;
}

export async function insertDocument(executor: Executor, row: NewDocument): Promise<DocumentRow> {
  return executor
    .insertInto('kb_documents')
    .values({
      company_id: row.company_id,
      collection_id: row.collection_id,
      title: row.title,
      categories: row.categories,
      source_type: row.source_type,
      source_url: row.source_url,
      file_name: row.file_name,
      mime_type: row.mime_type,
      size_bytes: row.size_bytes,
      source_bytes: row.source_bytes,
      content: row.content,
      created_by: row.created_by,
    })
    .returning(DOCUMENT_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function findDocument(
  executor: Executor,
  companyId: string,
  id: string,
): Promise<DocumentRow | undefined> {
  return executor
    .selectFrom('kb_documents')
    .select(DOCUMENT_COLUMNS)
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findDocumentContent(
  executor: Executor,
  companyId: string,
  id: string,
): Promise<string | undefined> {
  const row = await executor
    .selectFrom('kb_documents')
    .select('content')
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.content;
}

export async function findDocumentByTask(
  executor: Executor,
  companyId: string,
  taskId: string,
): Promise<DocumentRow | undefined> {
  return executor
    .selectFrom('kb_documents')
    .select(DOCUMENT_COLUMNS)
    .where('company_id', '=', companyId)
    .where('task_id', '=', taskId)
    .executeTakeFirst();
}

export interface DocumentFilters {
  categories?: string[];
  collectionId?: string;
  startDate?: Date;
  endDate?: Date;
}

export async function listDocuments(
  executor: Executor,
  companyId: string,
  filters: DocumentFilters,
  offset: number,
  limit: number,
): Promise<{ rows: DocumentRow[]; total: number }> {
  let query = executor.selectFrom('kb_documents').where('company_id', '=', companyId);
  if (filters.categories?.length) query = query.where('categories', '&&', sql<string[]>`${filters.categories}::text[]`);
  if (filters.collectionId) query = query.where('collection_id', '=', filters.collectionId);
  if (filters.startDate) query = query.where('created_at', '>=', filters.startDate);
  if (filters.endDate) query = query.where('created_at', '<=', filters.endDate);
  const [rows, total] = await Promise.all([
    query.select(DOCUMENT_COLUMNS).orderBy('created_at', 'desc').orderBy('id').offset(offset).limit(limit).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.n };
}

export async function updateDocumentMeta(
  executor: Executor,
  companyId: string,
  id: string,
  patch: { title?: string; categories?: string[]; collection_id?: string | null },
  now: Date,
): Promise<void> {
  await executor
    .updateTable('kb_documents')
    .set({ title: patch.title, categories: patch.categories, collection_id: patch.collection_id, updated_at: now })
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .execute();
  // The chunks carry copies of the filters (and the title is part of their full-text index
  // only after re-ingestion; filters apply at once).
  const chunkPatch: { collection_id?: string | null; categories?: string[] } = {};
  if (patch.collection_id !== undefined) chunkPatch.collection_id = patch.collection_id;
  if (patch.categories !== undefined) chunkPatch.categories = patch.categories;
  if (Object.keys(chunkPatch).length) {
    await executor
      .updateTable('kb_chunks')
      .set(chunkPatch)
      .where('company_id', '=', companyId)
      .where('document_id', '=', id)
      .execute();
    await bumpCorpus(executor, companyId, 0, 0);
  }
}

/** Puts a document back to pending with new content (update of content), with a new task. */
export async function resetDocumentForIngestion(
  executor: Executor,
  companyId: string,
  id: string,
  content: string,
  now: Date,
): Promise<DocumentRow> {
  return executor
    .updateTable('kb_documents')
    .set({
      content,
      source_type: 'article',
      source_bytes: null,
      status: 'pending',
      error: null,
      task_id: sql<string>`gen_random_uuid()`,
      completed_at: null,
      updated_at: now,
      size_bytes: Buffer.byteLength(content),
    })
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .returning(DOCUMENT_COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function deleteDocumentRow(executor: Executor, companyId: string, id: string): Promise<boolean> {
  await deleteChunks(executor, companyId, id);
  const result = await executor
    .deleteFrom('kb_documents')
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function documentIdsOfCollection(
  executor: Executor,
  companyId: string,
  collectionId: string,
): Promise<string[]> {
  const rows = await executor
    .selectFrom('kb_documents')
    .select('id')
    .where('company_id', '=', companyId)
    .where('collection_id', '=', collectionId)
    .execute();
  return rows.map((row) => row.id);
}

export async function detachCollection(
  executor: Executor,
  companyId: string,
  collectionId: string,
  now: Date,
): Promise<void> {
  await executor
    .updateTable('kb_documents')
    .set({ collection_id: null, updated_at: now })
    .where('company_id', '=', companyId)
    .where('collection_id', '=', collectionId)
    .execute();
  const result = await executor
    .updateTable('kb_chunks')
    .set({ collection_id: null })
    .where('company_id', '=', companyId)
    .where('collection_id', '=', collectionId)
    .executeTakeFirst();
  if (result.numUpdatedRows > 0n) await bumpCorpus(executor, companyId, 0, 0);
}

// ---------------------------------------------------------------- ingestion task

/** What a worker needs to process a document; null when it is not waiting for one. */
export interface ClaimedDocument {
  id: string;
  company_id: string;
  title: string;
  source_type: 'file' | 'article' | 'website';
  source_url: string | null;
  mime_type: string | null;
  source_bytes: Buffer | null;
  content: string;
  attempt: number;
  categories: string[];
  collection_id: string | null;
  created_at: Date;
}

/**
 * Takes a pending task for `workerId` (null: a direct call, no registered worker): status →
 * processing, attempt + 1, owner recorded.
 */
export async function claimDocument(
  executor: Executor,
  id: string,
  now: Date,
  workerId: number | null,
): Promise<ClaimedDocument | undefined> {
  return executor
    .updateTable('kb_documents')
    .set({
      status: 'processing',
      attempt: sql<number>`attempt + 1`,
      worker_id: workerId,
      processing_started_at: now,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returning([
      'id',
      'company_id',
      'title',
      'source_type',
      'source_url',
      'mime_type',
      'source_bytes',
      'content',
      'attempt',
      'categories',
      'collection_id',
      'created_at',
    ])
    .executeTakeFirst();
}

/**
 * Puts back to pending the tasks processing under one of `workerIds` (dead workers), or, with
 * `staleBefore`, processing without an owner since before it (claimed by a direct call, or before
 * owners were recorded). Their ids, for the jobs that take them again.
 */
export async function requeueDocuments(
  executor: Executor,
  owners: { workerIds: readonly number[] } | { staleBefore: Date },
  now: Date,
): Promise<string[]> {
  if ('workerIds' in owners && owners.workerIds.length === 0) return [];
  const rows = await executor
    .updateTable('kb_documents')
    .set({ status: 'pending', worker_id: null, updated_at: now })
    .where('status', '=', 'processing')
    .where((eb) =>
      'workerIds' in owners
        ? eb('worker_id', 'in', [...owners.workerIds])
        : eb.and([eb('worker_id', 'is', null), eb('processing_started_at', '<', owners.staleBefore)]),
    )
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/** Puts one claimed task back to pending if `attempt` is still the current one. */
export async function releaseDocument(executor: Executor, id: string, attempt: number, now: Date): Promise<boolean> {
  const result = await executor
    .updateTable('kb_documents')
    .set({ status: 'pending', worker_id: null, updated_at: now })
    .where('id', '=', id)
    .where('attempt', '=', attempt)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Locks the document row if `attempt` is still the current one (else another worker took it). */
export async function lockAttempt(executor: Executor, id: string, attempt: number): Promise<boolean> {
  const row = await executor
    .selectFrom('kb_documents')
    .select('id')
    .where('id', '=', id)
    .where('attempt', '=', attempt)
    .where('status', '=', 'processing')
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

export async function finishDocument(
  executor: Executor,
  id: string,
  result:
    | {
        status: 'completed';
        content: string;
        title: string;
        language: string;
        config: string;
        chunkCount: number;
        embeddingStatus: 'completed' | 'unavailable';
        embeddingError: string | null;
        embeddingModel: string | null;
      }
    | { status: 'failed'; error: string },
  now: Date,
): Promise<void> {
  if (result.status === 'failed') {
    await executor
      .updateTable('kb_documents')
      .set({ status: 'failed', error: result.error, source_bytes: null, completed_at: now, updated_at: now })
      .where('id', '=', id)
      .execute();
    return;
  }
  await executor
    .updateTable('kb_documents')
    .set({
      status: 'completed' as TaskStatus,
      error: null,
      content: result.content,
      title: result.title,
      // tsvector input is capped at 1 MB; the first 500k characters carry the phrase lane.
      content_tsv: sql<string>`to_tsvector(${result.config}::regconfig, left(${result.content}, 500000))`,
      language: result.language,
      chunk_count: result.chunkCount,
      embedding_status: result.embeddingStatus,
      embedding_error: result.embeddingError,
      embedding_model: result.embeddingModel,
      source_bytes: null,
      completed_at: now,
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
}

/**
 * Ids of documents pending since before `pendingBefore` (for recovery at start-up: a task that
 * has just been created still has its job in the queue).
 */
export async function pendingDocumentIds(executor: Executor, pendingBefore: Date): Promise<string[]> {
  const rows = await executor
    .selectFrom('kb_documents')
    .select('id')
    .where('status', '=', 'pending')
    .where('created_at', '<', pendingBefore)
    .execute();
  return rows.map((row) => row.id);
}

// ---------------------------------------------------------------- chunks and postings

export interface NewChunk {
  ordinal: number;
  text: string;
  embedding: Float32Array | null;
}

async function bumpCorpus(
  executor: Executor,
  companyId: string,
  chunkDelta: number,
  tokenDelta: number,
): Promise<void> {
  await sql`
    insert into kb_corpus_stats as s (company_id, chunk_count, token_total, version)
    values (${companyId}, ${chunkDelta}, ${tokenDelta}, 1)
    on conflict (company_id) do update set
      chunk_count = s.chunk_count + excluded.chunk_count,
      token_total = s.token_total + excluded.token_total,
      version = s.version + 1`.execute(executor);
}

/** Removes a document's chunks and their postings, and takes them out of the statistics. */
export async function deleteChunks(executor: Executor, companyId: string, documentId: string): Promise<void> {
  const totals = await sql<{ chunks: number; tokens: number }>`
    select count(*)::int as chunks, coalesce(sum(token_count), 0)::bigint as tokens
    from kb_chunks where company_id = ${companyId} and document_id = ${documentId}`.execute(executor);
  const { chunks, tokens } = totals.rows[0] ?? { chunks: 0, tokens: 0 };
  if (chunks === 0) return;
  await sql`
    delete from kb_postings p
    using (select c.id, unnest(tsvector_to_array(c.tsv)) as lexeme
           from kb_chunks c where c.company_id = ${companyId} and c.document_id = ${documentId}) x
    where p.company_id = ${companyId} and p.lexeme = x.lexeme and p.chunk_id = x.id`.execute(executor);
  await executor
    .deleteFrom('kb_chunks')
    .where('company_id', '=', companyId)
    .where('document_id', '=', documentId)
    .execute();
  await bumpCorpus(executor, companyId, -chunks, -Number(tokens));
}

function toBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/**
 * Replaces a document's chunks: full-text vectors (title and chunk text, in the document's
 * text-search configuration), postings for BM25, embeddings, statistics and version.
 */
export async function replaceChunks(
  executor: Executor,
  document: {
    id: string;
    company_id: string;
    collection_id: string | null;
    categories: string[];
    created_at: Date;
    title: string;
  },
  chunks: NewChunk[],
  language: string,
  config: string,
  embeddingModel: string | null,
): Promise<void> {
  await deleteChunks(executor, document.company_id, document.id);
  if (chunks.length === 0) return;
  for (let start = 0; start < chunks.length; start += 500) {
    const batch = chunks.slice(start, start + 500);
    await executor
      .insertInto('kb_chunks')
      .values(
        batch.map((chunk) => {
          const tsv = sql<string>`to_tsvector(${config}::regconfig, ${document.title} || ' ' || ${chunk.text})`;
          return {
            company_id: document.company_id,
            document_id: document.id,
            collection_id: document.collection_id,
            categories: document.categories,
            document_created_at: document.created_at,
            ordinal: chunk.ordinal,
            text: chunk.text,
            language,
            tsv,
            token_count: sql<number>`(select coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0) from unnest(${tsv}) u)`,
            embedding: chunk.embedding ? toBytes(chunk.embedding) : null,
            embedding_model: chunk.embedding ? embeddingModel : null,
          };
        }),
      )
      .execute();
  }
  await sql`
    insert into kb_postings (company_id, lexeme, chunk_id, tf, dl)
    select c.company_id, u.lexeme, c.id, coalesce(array_length(u.positions, 1), 1), c.token_count
    from kb_chunks c, unnest(c.tsv) u
    where c.company_id = ${document.company_id} and c.document_id = ${document.id}
    order by u.lexeme`.execute(executor);
  const totals = await sql<{ tokens: number }>`
    select coalesce(sum(token_count), 0)::bigint as tokens from kb_chunks
    where company_id = ${document.company_id} and document_id = ${document.id}`.execute(executor);
  await bumpCorpus(executor, document.company_id, chunks.length, Number(totals.rows[0]?.tokens ?? 0));
}

// ---------------------------------------------------------------- statistics

export async function corpusVersion(executor: Executor, companyId: string): Promise<number> {
  const row = await executor
    .selectFrom('kb_corpus_stats')
    .select('version')
    .where('company_id', '=', companyId)
    .executeTakeFirst();
  return row?.version ?? 0;
}

export async function knowledgeStats(executor: Executor, companyId: string) {
  const documents = await sql<{
    status: TaskStatus;
    source_type: string;
    language: string | null;
    embedding_status: string;
    n: number;
    chunks: number;
    bytes: number;
  }>`
    select status, source_type, language, embedding_status, count(*)::int as n,
           coalesce(sum(chunk_count), 0)::int as chunks, coalesce(sum(size_bytes), 0)::bigint as bytes
    from kb_documents where company_id = ${companyId}
    group by status, source_type, language, embedding_status`.execute(executor);
  const categories = await sql<{ category: string; n: number }>`
    select category, count(*)::int as n from kb_documents, unnest(categories) as category
    where company_id = ${companyId} group by category order by n desc, category limit 100`.execute(executor);
  const vectors = await sql<{ model: string; n: number }>`
    select embedding_model as model, count(*)::int as n from kb_chunks
    where company_id = ${companyId} and embedding is not null group by embedding_model`.execute(executor);
  const corpus = await executor
    .selectFrom('kb_corpus_stats')
    .selectAll()
    .where('company_id', '=', companyId)
    .executeTakeFirst();
  return { documents: documents.rows, categories: categories.rows, vectors: vectors.rows, corpus };
}
