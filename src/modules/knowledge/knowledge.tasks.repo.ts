/**
 * SQL of the knowledge base's background work: a document's ingestion task (claimed, released,
 * requeued, finished by one attempt), its chunks with their postings, and the per-company corpus
 * statistics they keep. Executor first, company id second; nothing here crosses companies.
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { TaskStatus } from './knowledge.tables.js';

// ---------------------------------------------------------------- tasks (documents and crawls)

/** What a worker needs to process a document; null when it is not waiting for one. */
export interface ClaimedDocument {
  id: string;
  task_id: string;
  company_id: string;
  title: string;
  questions: string[];
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
    .set({ ...CLAIMED(now, workerId), processing_started_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returning([
      'id',
      'task_id',
      'company_id',
      'title',
      'questions',
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
 * The rows that are tasks a worker claims and fences by attempt: a document's ingestion and a
 * website crawl. Their state changes are these, whichever the table.
 */
export type TaskTable = 'kb_documents' | 'kb_crawls';

/**
 * Puts back to pending the tasks of `table` processing under one of `workerIds` (dead workers),
 * or one task whose `attempt` is still the current one (handed back). Their ids, for the jobs
 * that take them again.
 */
export async function requeueTasks(
  executor: Executor,
  table: TaskTable,
  owners: { workerIds: readonly number[] } | { id: string; attempt: number },
  now: Date,
): Promise<string[]> {
  if ('workerIds' in owners && owners.workerIds.length === 0) return [];
  const rows = await executor
    .updateTable(table)
    .set({ status: 'pending', worker_id: null, updated_at: now })
    .where('status', '=', 'processing')
    .where((eb) =>
      'workerIds' in owners
        ? eb('worker_id', 'in', [...owners.workerIds])
        : eb.and([eb('id', '=', owners.id), eb('attempt', '=', owners.attempt)]),
    )
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/** Locks the task's row if `attempt` is still the running one (else another worker took it over). */
export async function lockTaskAttempt(
  executor: Executor,
  table: TaskTable,
  id: string,
  attempt: number,
): Promise<boolean> {
  const row = await executor
    .selectFrom(table)
    .select('id')
    .where('id', '=', id)
    .where('attempt', '=', attempt)
    .where('status', '=', 'processing')
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

/** A pending task taken by `workerId` (null: a direct call): processing, attempt + 1. */
export const CLAIMED = (now: Date, workerId: number | null) => ({
  status: 'processing' as const,
  attempt: sql<number>`attempt + 1`,
  worker_id: workerId,
  updated_at: now,
});

/** A document's task back to pending with a new task id (new content, or a crawled page changed). */
export const PENDING_AGAIN = (now: Date) => ({
  status: 'pending' as const,
  error: null,
  task_id: sql<string>`gen_random_uuid()`,
  completed_at: null,
  updated_at: now,
});

/**
 * Puts back to pending the ingestion tasks of dead workers (`workerIds`), or, with
 * `staleBefore`, those processing without an owner since before it (claimed by a direct call, or
 * before owners were recorded). Their ids, for the jobs that take them again.
 */
export async function requeueDocuments(
  executor: Executor,
  owners: { workerIds: readonly number[] } | { staleBefore: Date },
  now: Date,
): Promise<string[]> {
  if ('workerIds' in owners) return requeueTasks(executor, 'kb_documents', owners, now);
  const rows = await executor
    .updateTable('kb_documents')
    .set({ status: 'pending', worker_id: null, updated_at: now })
    .where('status', '=', 'processing')
    .where('worker_id', 'is', null)
    .where('processing_started_at', '<', owners.staleBefore)
    .returning('id')
    .execute();
  return rows.map((row) => row.id);
}

/** Puts one claimed task back to pending if `attempt` is still the current one. */
export async function releaseDocument(executor: Executor, id: string, attempt: number, now: Date): Promise<boolean> {
  return (await requeueTasks(executor, 'kb_documents', { id, attempt }, now)).length > 0;
}

/** Records how far run `taskId` of a document has got (one row per document, the latest run's). */
export async function saveProgress(
  executor: Executor,
  documentId: string,
  taskId: string,
  progress: { stage: string; done: number; total: number | null },
  now: Date,
): Promise<void> {
  const values = {
    stage: progress.stage,
    done: progress.done,
    total: progress.total,
    task_id: taskId,
    updated_at: now,
  };
  await executor
    .insertInto('kb_task_progress')
    .values({ document_id: documentId, ...values })
    .onConflict((oc) => oc.column('document_id').doUpdateSet(values))
    .execute();
}

/** Locks the document row if `attempt` is still the current one (else another worker took it). */
export const lockAttempt = (executor: Executor, id: string, attempt: number) =>
  lockTaskAttempt(executor, 'kb_documents', id, attempt);

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
        ocr?: { pages: number; confidence: number } | null;
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
      ocr_pages: result.ocr?.pages ?? null,
      ocr_confidence: result.ocr?.confidence ?? null,
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

export async function bumpCorpus(
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
 * Chunks inserted by one statement: its parameters are built and serialised on the event loop in
 * one piece (≈ 1 ms for 200 chunks of ~800 characters), and the loop runs while each statement
 * is at the database; 1,000 held it for several milliseconds at a time.
 */
export const CHUNKS_PER_STATEMENT = 200;

/**
 * Replaces a document's chunks: full-text vectors (title, questions and chunk text, in the document's
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
    /** Questions the document answers: indexed with the title. */
    questions: string[];
  },
  chunks: NewChunk[],
  language: string,
  config: string,
  embeddingModel: string | null,
  chunksPerStatement = CHUNKS_PER_STATEMENT,
): Promise<void> {
  await deleteChunks(executor, document.company_id, document.id);
  if (chunks.length === 0) return;
  const heading = [document.title, ...document.questions].join('\n');
  for (let start = 0; start < chunks.length; start += chunksPerStatement) {
    const batch = chunks.slice(start, start + chunksPerStatement);
    // One statement of a few array parameters: each chunk's text sent once, the vectors as one
    // binary value sliced by the database, the full-text vector and its length computed there;
    // nothing built per row on the event loop (a statement of a row per chunk sent each text
    // three times and compiled thousands of placeholders).
    const vectors = batch.flatMap((chunk) => (chunk.embedding ? [toBytes(chunk.embedding)] : []));
    const width = vectors[0]?.length ?? 0;
    if (vectors.some((vector) => vector.length !== width))
      throw new Error("a document's chunks must have vectors of one width");
    let slot = 0;
    const slots = batch.map((chunk) => (chunk.embedding ? slot++ : -1));
    await sql`
      insert into kb_chunks (company_id, document_id, collection_id, categories, document_created_at,
        ordinal, text, language, tsv, token_count, embedding, embedding_model)
      select ${document.company_id}::uuid, ${document.id}::uuid, ${document.collection_id}::uuid,
        ${document.categories}::text[], ${document.created_at}::timestamptz, c.ordinal, c.text, ${language},
        v.tsv, (select coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0) from unnest(v.tsv) u),
        case when c.slot >= 0 then substring(${Buffer.concat(vectors)}::bytea from c.slot * ${width}::int + 1 for ${width}::int) end,
        case when c.slot >= 0 then ${embeddingModel}::text end
      from unnest(${batch.map((chunk) => chunk.ordinal)}::int[], ${batch.map((chunk) => chunk.text)}::text[],
        ${slots}::int[]) with ordinality as c(ordinal, text, slot, n)
      cross join lateral (select to_tsvector(${config}::regconfig, ${heading} || ' ' || c.text) as tsv) v
      order by c.n`.execute(executor);
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
