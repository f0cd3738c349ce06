/**
 * The knowledge base: collections, documents and their ingestion tasks, search and the checks
 * other modules call (`search`, `collectionsReadiness`). Members read; developers and above
 * write (DESIGN §5). Every query is scoped to the caller's company.
 */
import type { Db } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import { parseIsoDate } from '../../http/schemas.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { Clock } from '../../lib/clock.js';
import { hasRole } from '../../lib/roles.js';
import { FetchError, type WebFetcher } from '../../ports/web-fetcher.js';
import { detectFormat, FORMATS } from './knowledge.formats.js';
import { createCrawls } from './knowledge.crawls.js';
import { createIngestion, INGEST_JOB } from './knowledge.ingest.js';
import * as repo from './knowledge.repo.js';
import * as tasks from './knowledge.tasks.repo.js';
import type { ClaimedDocument } from './knowledge.tasks.repo.js';
import { createRetrieval, type EmbedderState, type SearchInput, type SearchOutput } from './knowledge.retrieval.js';
import type * as S from './knowledge.schemas.js';
import { createVectorIndexes } from './knowledge.vector-index.js';
import { questionList, toCollection, toDocument, toTask } from './knowledge.mappers.js';
import type { MemoryLanes } from './knowledge.memory-lanes.js';
import type { Bm25Lanes } from './knowledge.bm25-lanes.js';
import type { Lexicon } from './knowledge.lexicon.js';
import type { Parsers } from './knowledge.parsers.js';

export interface KnowledgeDeps {
  db: Db;
  queue: JobQueue;
  clock: Clock;
  fetcher: WebFetcher;
  embedding: EmbedderState;
  log: {
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
    info(obj: object, msg: string): void;
  };
  maxUploadBytes: number;
  /** How long a task may stay processing before another worker takes it over. */
  staleAfterMs?: number;
  /** Text indexes of small knowledge bases held in memory (null: every search in SQL). */
  memory: MemoryLanes | null;
  /** BM25 indexes of large knowledge bases held in memory (null: their full-text lane in SQL). */
  bm25: Bm25Lanes | null;
  /** The query words' reading the in-process lanes share. */
  lexicon?: Lexicon;
  /** Parsing, OCR and chunking in the CPU pool. */
  parsers: Parsers;
  /** Website crawls: pages fetched at once, and the least time between two fetches. */
  crawl: { concurrency: number; delayMs: number };
}

const withPrefix = (prefix: string, id: string) => `${prefix}${id}`;
/** `doc_<uuid>` / `task_<uuid>` / bare UUID → UUID (the route schema checked the form). */
export const stripPrefix = (id: string) => id.replace(/^(doc_|task_)/, '').toLowerCase();

function requireWriter(context: CompanyContext) {
  if (!hasRole(context.role, 'developer')) {
    throw AppErrors.forbidden(`Changing the knowledge base needs the developer role; your role is ${context.role}`);
  }
}

function dateRange(start?: string, end?: string): { startDate?: Date; endDate?: Date } {
  const startDate = start ? parseIsoDate(start) : undefined;
  const endDate = end ? parseIsoDate(end) : undefined;
  if (startDate && endDate && startDate > endDate) throw AppErrors.validation('start_date must not be after end_date');
  return { startDate, endDate };
}

export interface UploadedFile {
  fileName: string;
  mimeType: string;
  bytes: Buffer;
}

export function createKnowledgeService(deps: KnowledgeDeps) {
  const { db, queue, clock, embedding } = deps;
  const vectors = createVectorIndexes(db);
  const retrieval = createRetrieval({
    db,
    vectors,
    embedding,
    memory: deps.memory,
    bm25: deps.bm25,
    lexicon: deps.lexicon,
  });
  // Every instance hears of a change through its notification (migration 0014); this one at once.
  const searchChanged = (companyId: string) => {
    deps.memory?.changed(companyId);
    deps.bm25?.changed(companyId);
  };
  const ingestion = createIngestion({
    db,
    queue,
    clock,
    fetcher: deps.fetcher,
    embedding,
    log: deps.log,
    staleAfterMs: deps.staleAfterMs,
    searchChanged,
    parsers: deps.parsers,
  });
  queue.defineTask<{ documentId: string }, ClaimedDocument>({
    name: INGEST_JOB,
    claim: (trx, data, workerId) => ingestion.claim(trx, data.documentId, workerId),
    run: ingestion.run,
    requeue: ingestion.requeue,
    release: ingestion.release,
    // Each poller takes one task at a time and fetches again as soon as it is done.
    pollingIntervalSeconds: 0.5,
    concurrency: 4,
  });

  const crawls = createCrawls({ ...deps, ...deps.crawl, searchChanged });

  async function collection(context: CompanyContext, id: string) {
    const row = await repo.findCollection(db, context.companyId, id);
    if (!row) throw AppErrors.notFound('Collection', id);
    return row;
  }

  async function document(context: CompanyContext, id: string) {
    const row = await repo.findDocument(db, context.companyId, stripPrefix(id));
    if (!row) throw AppErrors.notFound('Document', id);
    return row;
  }

  async function checkCollection(context: CompanyContext, id: string | null | undefined) {
    if (id) await collection(context, id);
  }

  async function enqueue(newDocument: repo.NewDocument): Promise<S.UploadResult> {
    const row = await db.transaction().execute(async (trx) => {
      const inserted = await repo.insertDocument(trx, newDocument);
      await queue.send(trx, INGEST_JOB, { documentId: inserted.id });
      return inserted;
    });
    return { task_id: withPrefix('task_', row.task_id), document_id: withPrefix('doc_', row.id), status: row.status };
  }

  const base = (
    context: CompanyContext,
    title: string,
    categories: string[] | undefined,
    collectionId: string | undefined,
  ) => ({
    company_id: context.companyId,
    collection_id: collectionId ?? null,
    title: title.trim(),
    categories: [...new Set(categories ?? [])],
    created_by: context.userId,
  });

  return {
    embeddingState: embedding,

    // -------------------------------------------------------------- collections
    async createCollection(context: CompanyContext, body: S.CreateCollectionBody): Promise<S.Collection> {
      requireWriter(context);
      // Another company, existing or not, is a 404 like any row of another company (DESIGN §4).
      if (body.company_id.toLowerCase() !== context.companyId) throw AppErrors.notFound('Company', body.company_id);
      const row = await repo.insertCollection(db, {
        company_id: context.companyId,
        name: body.name.trim(),
        description: body.description ?? '',
        is_private: body.is_private ?? false,
        created_by: context.userId,
      });
      return toCollection(row);
    },
    async listCollections(context: CompanyContext, skip: number, limit: number): Promise<S.Collection[]> {
      return (await repo.listCollections(db, context.companyId, skip, limit)).map(toCollection);
    },
    async getCollection(context: CompanyContext, id: string): Promise<S.Collection> {
      return toCollection(await collection(context, id));
    },
    async updateCollection(context: CompanyContext, id: string, body: S.UpdateCollectionBody): Promise<S.Collection> {
      requireWriter(context);
      await collection(context, id);
      const patch = { name: body.name?.trim(), description: body.description, is_private: body.is_private };
      await repo.updateCollection(db, context.companyId, id, patch, clock.now());
      return toCollection(await collection(context, id));
    },
    async deleteCollection(context: CompanyContext, id: string, cascade: boolean): Promise<{ status: 'deleted' }> {
      requireWriter(context);
      await db.transaction().execute(async (trx) => {
        if (!(await repo.findCollection(trx, context.companyId, id))) throw AppErrors.notFound('Collection', id);
        if (cascade) {
          for (const documentId of await repo.documentIdsOfCollection(trx, context.companyId, id)) {
            await repo.deleteDocumentRow(trx, context.companyId, documentId);
          }
        } else {
          await repo.detachCollection(trx, context.companyId, id, clock.now());
        }
        await repo.deleteCollection(trx, context.companyId, id);
      });
      searchChanged(context.companyId);
      return { status: 'deleted' };
    },

    // -------------------------------------------------------------- documents
    async uploadFile(
      context: CompanyContext,
      input: { title: string; categories?: string[]; collectionId?: string; file: UploadedFile },
    ): Promise<S.UploadResult> {
      requireWriter(context);
      const { file } = input;
      if (file.bytes.length === 0) throw AppErrors.validation('The uploaded file is empty');
      const detected = detectFormat(file);
      if (!('format' in detected)) {
        if (detected.status === 413) throw AppErrors.payloadTooLarge(detected.message);
        if (detected.status === 415) throw AppErrors.unsupportedMediaType(detected.message);
        throw AppErrors.validation(detected.message);
      }
      const type = FORMATS[detected.format].mime;
      await checkCollection(context, input.collectionId);
      return enqueue({
        ...base(context, input.title, input.categories, input.collectionId),
        source_type: 'file',
        source_url: null,
        file_name: file.fileName,
        mime_type: type,
        size_bytes: file.bytes.length,
        source_bytes: file.bytes,
        content: '',
      });
    },
    async uploadArticle(context: CompanyContext, body: S.UploadArticleBody): Promise<S.UploadResult> {
      requireWriter(context);
      if (!body.content.trim()) throw AppErrors.validation('content must not be blank');
      await checkCollection(context, body.collection_id);
      return enqueue({
        ...base(context, body.document_title, body.categories, body.collection_id),
        questions: questionList(body.questions ?? []),
        source_type: 'article',
        source_url: null,
        file_name: null,
        mime_type: 'text/plain',
        size_bytes: Buffer.byteLength(body.content),
        source_bytes: null,
        content: body.content,
      });
    },
    async uploadWebsite(context: CompanyContext, body: S.UploadWebsiteBody): Promise<S.UploadResult> {
      requireWriter(context);
      let url: URL;
      try {
        url = new URL(body.url);
      } catch {
        throw AppErrors.validation(`url must be an absolute http(s) URL, got "${body.url}"`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw AppErrors.validation(`url must use http or https, got ${url.protocol}`);
      // Credentials would be stored in source_url and shown to every member.
      if (url.username || url.password)
        throw AppErrors.validation('url must not contain credentials (user:password@); use a public page');
      // The network policy now (literal address, local names, DNS answers); the fetch checks again.
      await deps.fetcher.checkUrl(url.href).catch((error: unknown) => {
        throw error instanceof FetchError ? AppErrors.validation(`url is refused: ${error.message}`) : error;
      });
      await checkCollection(context, body.collection_id);
      return enqueue({
        ...base(context, body.document_title, body.categories, body.collection_id),
        source_type: 'website',
        source_url: url.href,
        file_name: null,
        mime_type: 'text/html',
        size_bytes: 0,
        source_bytes: null,
        content: '',
      });
    },
    async crawlWebsite(context: CompanyContext, body: S.CrawlWebsiteBody): Promise<S.Crawl> {
      requireWriter(context);
      return crawls.crawlWebsite(context, body);
    },
    getCrawl: crawls.getCrawl,
    /** The crawl job's handler (exported for tests and tools). */
    crawl: crawls.crawl,
    async getDocument(context: CompanyContext, id: string): Promise<S.Document> {
      const row = await document(context, id);
      return toDocument(row, (await repo.findDocumentContent(db, context.companyId, row.id)) ?? '');
    },
    async listDocuments(context: CompanyContext, body: S.ListDocumentsBody) {
      const page = body.page ?? 1;
      const limit = body.limit ?? 10;
      const filters = {
        categories: body.categories,
        collectionId: body.collection_id,
        ...dateRange(body.start_date, body.end_date),
      };
      const { rows, total } = await repo.listDocuments(db, context.companyId, filters, (page - 1) * limit, limit);
      return { data: rows.map((row) => toDocument(row)), total, page, limit };
    },
    async updateDocument(context: CompanyContext, id: string, body: S.UpdateDocumentBody): Promise<S.Document> {
      requireWriter(context);
      const row = await document(context, id);
      await checkCollection(context, body.collection_id);
      await db.transaction().execute(async (trx) => {
        await repo.updateDocumentMeta(
          trx,
          context.companyId,
          row.id,
          {
            title: body.document_title?.trim(),
            categories: body.categories ? [...new Set(body.categories)] : undefined,
            questions: body.questions && questionList(body.questions),
            collection_id: body.collection_id,
          },
          clock.now(),
        );
        // The title and the questions are part of every chunk's full-text vector: a change reindexes.
        const retitled =
          row.status === 'completed' &&
          ((body.document_title !== undefined && body.document_title.trim() !== row.title) ||
            (body.questions !== undefined && questionList(body.questions).join('\n') !== row.questions.join('\n')));
        if (body.content !== undefined || retitled) {
          const content = body.content ?? (await repo.findDocumentContent(trx, context.companyId, row.id)) ?? '';
          if (!content.trim()) throw AppErrors.validation('content must not be blank');
          await repo.resetDocumentForIngestion(trx, context.companyId, row.id, content, clock.now());
          await queue.send(trx, INGEST_JOB, { documentId: row.id });
        }
      });
      searchChanged(context.companyId);
      return this.getDocument(context, row.id);
    },
    async deleteDocument(context: CompanyContext, id: string): Promise<{ status: 'deleted' }> {
      requireWriter(context);
      const row = await document(context, id);
      await db.transaction().execute((trx) => repo.deleteDocumentRow(trx, context.companyId, row.id));
      searchChanged(context.companyId);
      return { status: 'deleted' };
    },
    async task(context: CompanyContext, taskId: string): Promise<S.Task> {
      const row = await repo.findDocumentByTask(db, context.companyId, stripPrefix(taskId));
      if (!row) throw AppErrors.notFound('Task', taskId);
      return toTask(row, row.status === 'pending' ? null : await repo.findProgress(db, row.id, row.task_id));
    },
    async searchDocuments(context: CompanyContext, body: S.SearchBody, signal?: AbortSignal) {
      if (body.collection_id) await collection(context, body.collection_id);
      const output = await this.search(context.companyId, {
        query: body.query,
        topK: body.top_k ?? 4,
        categories: body.categories,
        collectionIds: body.collection_id ? [body.collection_id] : undefined,
        ...dateRange(body.start_date, body.end_date),
        lanes: {
          vector: body.search_method.enable_vectorsearch ?? true,
          fulltext: body.search_method.enable_fulltextsearch ?? true,
          docstore: body.search_method.enable_docstoresearch ?? true,
        },
        signal,
      });
      return { query: body.query, ...output, total: output.results.length };
    },
    async checkSimilarity(context: CompanyContext, body: S.CheckSimilarityBody) {
      // Another company, existing or not, is a 404 like any row of another company (DESIGN §4).
      if (body.customer_id.toLowerCase() !== context.companyId) throw AppErrors.notFound('Company', body.customer_id);
      const threshold = body.similarity ?? 0.9;
      const result = await retrieval.similar(context.companyId, body.document, threshold);
      return {
        ...result,
        threshold,
        matches: result.matches.map((match) => ({ ...match, document_id: withPrefix('doc_', match.document_id) })),
      };
    },
    async stats(context: CompanyContext) {
      const [raw, collections] = await Promise.all([
        tasks.knowledgeStats(db, context.companyId),
        repo.countCollections(db, context.companyId),
      ]);
      const sum = (key: 'status' | 'source_type' | 'language') => {
        const out: Record<string, number> = {};
        for (const row of raw.documents) out[row[key] ?? 'und'] = (out[row[key] ?? 'und'] ?? 0) + row.n;
        return out;
      };
      const byStatus = { pending: 0, processing: 0, completed: 0, failed: 0, ...sum('status') };
      const unavailable = raw.documents
        .filter((row) => row.embedding_status === 'unavailable')
        .reduce((n, row) => n + row.n, 0);
      return {
        total_documents: raw.documents.reduce((n, row) => n + row.n, 0),
        total_chunks: raw.corpus?.chunk_count ?? 0,
        total_collections: collections,
        total_bytes: raw.documents.reduce((n, row) => n + Number(row.bytes), 0),
        by_status: byStatus,
        by_source_type: sum('source_type'),
        by_language: Object.fromEntries(Object.entries(sum('language')).filter(([, n]) => n > 0)),
        categories: raw.categories.map((row) => ({ category: row.category, count: row.n })),
        embeddings: {
          available: embedding.embedder !== null && unavailable === 0,
          provider: embedding.embedder?.id ?? null,
          reason:
            embedding.reason ??
            (unavailable > 0
              ? 'Some documents were indexed without embeddings: the embedder failed (see their embedding_error)'
              : null),
          embedded_chunks: raw.vectors.reduce((n, row) => n + row.n, 0),
          documents_without_embeddings: unavailable,
        },
        vector_index: 'in-process' as const,
      };
    },

    // -------------------------------------------------------------- for other modules
    /** Hybrid search over a company's knowledge (chat retrieval, built-in responder). */
    async search(companyId: string, input: SearchInput): Promise<SearchOutput> {
      const output = await retrieval.search(companyId, input);
      return {
        ...output,
        results: output.results.map((result) => ({ ...result, document_id: withPrefix('doc_', result.document_id) })),
      };
    },
    /** For roll-outs: which of `collectionIds` are missing, still processing, or have failures. */
    async collectionsReadiness(companyId: string, collectionIds: string[]) {
      const ids = [...new Set(collectionIds.map((id) => id.toLowerCase()))];
      const valid = ids.filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id));
      const existing = new Set(await repo.existingCollectionIds(db, companyId, valid));
      const states = await repo.collectionTaskStates(db, companyId, [...existing]);
      return {
        missing: ids.filter((id) => !existing.has(id)),
        processing: states.filter((state) => state.unfinished).map((state) => state.collection_id),
        failed: states.filter((state) => state.failed).map((state) => state.collection_id),
      };
    },
    /** The job handler (exported for tests and tools). */
    ingest: ingestion.ingest,
    /**
     * At start-up: tasks processing without an owner for longer than the stale threshold, and
     * tasks pending for over a minute (their job may be gone), get a job again. Tasks of dead
     * workers are the queue's sweep's (src/jobs/queue.ts).
     */
    async recover(): Promise<number> {
      const stale = await db.transaction().execute((trx) => ingestion.requeueStale(trx));
      // Pending tasks younger than a minute still have their job in the queue (sent with the row).
      const ids = await tasks.pendingDocumentIds(db, new Date(clock.now().getTime() - 60_000));
      for (const documentId of ids) await queue.send(db, INGEST_JOB, { documentId });
      if (stale + ids.length) deps.log.info({ stale, pending: ids.length }, 'knowledge tasks re-enqueued at start-up');
      return stale + ids.length;
    },
  };
}

export type KnowledgeService = ReturnType<typeof createKnowledgeService>;
