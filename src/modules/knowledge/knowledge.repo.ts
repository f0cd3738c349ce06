/**
 * SQL of the knowledge base's records: collections and documents (their tasks, chunks and corpus
 * statistics are in knowledge.tasks.repo.ts). Every function takes the executor first and the
 * company id second; nothing here crosses companies.
 */
import { sql, type Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import { AppError } from '../../http/errors.js';
import type { KbCollectionsTable, KbDocumentsTable } from './knowledge.tables.js';
import { bumpCorpus, deleteChunks, PENDING_AGAIN } from './knowledge.tasks.repo.js';

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
  'questions',
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
  'ocr_pages',
  'ocr_confidence',
] as const;

export interface NewDocument {
  company_id: string;
  collection_id: string | null;
  title: string;
  categories: string[];
  questions?: string[];
  source_type: 'file' | 'article' | 'website';
  source_url: string | null;
  file_name: string | null;
  mime_type: string | null;
  size_bytes: number;
  source_bytes: Buffer | null;
  content: string;
  created_by: string | null;
}

export async function insertDocument(executor: Executor, row: NewDocument): Promise<DocumentRow> {
  return executor
    .insertInto('kb_documents')
    .values({
      company_id: row.company_id,
      collection_id: row.collection_id,
      title: row.title,
      categories: row.categories,
      questions: row.questions ?? [],
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

/** The progress of a document's run `taskId` (rows of earlier runs are not that run's). */
export async function findProgress(executor: Executor, documentId: string, taskId: string) {
  return executor
    .selectFrom('kb_task_progress')
    .select(['stage', 'done', 'total'])
    .where('document_id', '=', documentId)
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
  // One statement: the page with the filtered total as a scalar subquery (a page past the end asks apart).
  const count = query.select((eb) => eb.fn.countAll<number>().as('n'));
  const page = await query
    .select(DOCUMENT_COLUMNS)
    .select(count.as('total'))
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .offset(offset)
    .limit(limit)
    .execute();
  const total = page.length ? Number(page[0]!.total) : (await count.executeTakeFirstOrThrow()).n;
  return { rows: page.map(({ total: _total, ...row }) => row), total };
}

export async function updateDocumentMeta(
  executor: Executor,
  companyId: string,
  id: string,
  patch: { title?: string; categories?: string[]; questions?: string[]; collection_id?: string | null },
  now: Date,
): Promise<void> {
  await executor
    .updateTable('kb_documents')
    .set({
      title: patch.title,
      categories: patch.categories,
      questions: patch.questions,
      collection_id: patch.collection_id,
      updated_at: now,
    })
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
      ...PENDING_AGAIN(now),
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
