/**
 * The ingestion job: extract text, detect the language, chunk on sentence boundaries, embed,
 * index for full text, and finish the task as completed or failed (with an error that says
 * what went wrong). A worker owns the attempt it claimed (its worker id is on the row); a task
 * whose worker died is handed back to the queue by a sweep (src/jobs/queue.ts) and claimed again,
 * and only the current attempt may commit. Chunks are replaced, never appended, in the
 * transaction that completes the task, so a retried task can neither lose nor duplicate them.
 */
import type { Db, Executor } from '../../db/database.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { Clock } from '../../lib/clock.js';
import { CpuBusyError } from '../../lib/cpu-pool.js';
import { EmbeddingError } from '../../ports/embedder.js';
import { FetchError, type WebFetcher } from '../../ports/web-fetcher.js';
import { IngestError } from './knowledge.blocks.js';
import { formatOfMime } from './knowledge.formats.js';
import type { PreparedDocument } from './knowledge.parse.js';
import type { Parsers } from './knowledge.parsers.js';
import * as tasks from './knowledge.tasks.repo.js';
import type { EmbedderState } from './knowledge.retrieval.js';

export const INGEST_JOB = 'knowledge.ingest';

/**
 * A task processing without an owner (claimed by a direct call, or before owners were recorded)
 * for longer than this is taken to be abandoned; tasks with an owner are handed back as soon as
 * their worker is known to be dead.
 */
export const STALE_PROCESSING_MS = 10 * 60_000;
/** A task handed back after an unexpected failure (database trouble) is tried again after this. */
const RELEASE_DELAY_SECONDS = 10;

export interface IngestDeps {
  db: Db;
  queue: JobQueue;
  staleAfterMs?: number;
  clock: Clock;
  fetcher: WebFetcher;
  embedding: EmbedderState;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Called once a document's ingestion is committed (its search index changed). */
  searchChanged?: (companyId: string) => void;
  /** The worker threads that parse, read by OCR and chunk. */
  parsers: Parsers;
  /** Least time between two progress writes of one task. */
  progressIntervalMs?: number;
}

type Progress = (stage: string, done: number, total: number | null) => void;

/** The document's source read, parsed and chunked in a parser thread. */
async function extract(
  document: tasks.ClaimedDocument,
  fetcher: WebFetcher,
  parsers: Parsers,
  progress: Progress,
): Promise<PreparedDocument> {
  switch (document.source_type) {
    case 'article':
      return parsers.run({ kind: 'file', bytes: new TextEncoder().encode(document.content), format: 'text' }, progress);
    case 'file': {
      if (!document.source_bytes) throw new IngestError('The uploaded file is no longer stored; upload it again');
      const format = formatOfMime(document.mime_type);
      if (!format) throw new IngestError(`Files of type ${document.mime_type ?? 'unknown'} are no longer read`);
      return parsers.run({ kind: 'file', bytes: new Uint8Array(document.source_bytes), format }, progress);
    }
    case 'website': {
      // A crawled page: fetched by the crawl (knowledge.crawl.ts), kept until it is read.
      if (document.source_bytes)
        return document.mime_type === 'text/plain'
          ? parsers.run({ kind: 'file', bytes: new Uint8Array(document.source_bytes), format: 'text' }, progress)
          : parsers.run({ kind: 'html', html: new TextDecoder().decode(document.source_bytes) }, progress);
      let page;
      try {
        progress('fetching', 0, 1);
        page = await fetcher.fetchPage(document.source_url ?? '');
      } catch (error) {
        if (error instanceof FetchError) throw new IngestError(error.message);
        throw error;
      }
      return page.contentType.startsWith('text/plain')
        ? parsers.run({ kind: 'file', bytes: new TextEncoder().encode(page.body), format: 'text' }, progress)
        : parsers.run({ kind: 'html', html: page.body }, progress);
    }
  }
}

export function createIngestion(deps: IngestDeps) {
  const { db, clock, fetcher, embedding, log, queue, parsers } = deps;
  const staleAfterMs = deps.staleAfterMs ?? STALE_PROCESSING_MS;
  const progressIntervalMs = deps.progressIntervalMs ?? 1000;

  /**
   * A task's progress reporter: a new stage is written at once, figures within a stage at most
   * every progressIntervalMs; one write at a time, the latest figures win.
   */
  function reporter(document: tasks.ClaimedDocument) {
    let last = { stage: '', at: 0 };
    let pending: { stage: string; done: number; total: number | null } | null = null;
    let writing: Promise<void> = Promise.resolve();
    const write = () => {
      const next = pending;
      pending = null;
      if (!next) return;
      writing = writing
        .then(() => tasks.saveProgress(db, document.id, document.task_id, next, clock.now()))
        .catch((error: unknown) => log.warn({ err: error, documentId: document.id }, 'task progress not saved'));
    };
    const report: Progress = (stage, done, total) => {
      pending = { stage, done, total };
      const now = Date.now();
      if (stage !== last.stage || now - last.at >= progressIntervalMs) {
        last = { stage, at: now };
        write();
      }
    };
    return { report, flush: () => (write(), writing) };
  }

  async function embedChunks(chunks: string[], title: string) {
    if (!embedding.embedder)
      return { vectors: null, status: 'unavailable' as const, error: embedding.reason, model: null };
    try {
      const vectors = await embedding.embedder.embed(chunks.map((chunk) => `${title}\n${chunk}`));
      return { vectors, status: 'completed' as const, error: null, model: embedding.embedder.id };
    } catch (error) {
      const message = error instanceof EmbeddingError ? error.message : `Embedding failed: ${(error as Error).message}`;
      log.warn({ err: error }, 'embeddings unavailable; document indexed for full text only');
      return { vectors: null, status: 'unavailable' as const, error: message, model: null };
    }
  }

  async function process(document: tasks.ClaimedDocument): Promise<void> {
    const progress = reporter(document);
    try {
      await indexDocument(document, progress.report);
    } finally {
      await progress.flush();
    }
  }

  async function indexDocument(document: tasks.ClaimedDocument, progress: Progress): Promise<void> {
    const prepared = await extract(document, fetcher, parsers, progress);
    const { content: text, language, config, chunks } = prepared;
    const title = document.title;
    if (!text || chunks.length === 0)
      throw new IngestError(
        document.source_type === 'file'
          ? prepared.ocr
            ? 'No text could be extracted from the file, OCR included (an empty or unreadable scan?)'
            : 'No text could be extracted from the file (an empty document?)'
          : 'The document has no text',
      );
    progress('embedding', 0, chunks.length);
    const embedded = await embedChunks(chunks, title);
    progress('indexing', 0, chunks.length);
    await db.transaction().execute(async (trx) => {
      if (!(await tasks.lockAttempt(trx, document.id, document.attempt))) return;
      // The document row first: the corpus statistics row (locked by replaceChunks) is then held
      // only until the commit right after.
      await tasks.finishDocument(
        trx,
        document.id,
        {
          status: 'completed',
          content: text,
          title,
          language,
          config,
          chunkCount: chunks.length,
          embeddingStatus: embedded.status,
          embeddingError: embedded.error,
          embeddingModel: embedded.model,
          ocr: prepared.ocr ?? null,
        },
        clock.now(),
      );
      await tasks.replaceChunks(
        trx,
        { ...document, title },
        chunks.map((chunk, ordinal) => ({ ordinal, text: chunk, embedding: embedded.vectors?.[ordinal] ?? null })),
        language,
        config,
        embedded.model,
      );
    });
    progress('indexing', chunks.length, chunks.length);
    deps.searchChanged?.(document.company_id);
  }

  async function run(document: tasks.ClaimedDocument): Promise<void> {
    try {
      await process(document);
    } catch (error) {
      // The CPU pool is full: the queue hands the task back for later (release), it has not failed.
      if (error instanceof CpuBusyError) throw error;
      const message = error instanceof IngestError ? error.message : `Processing failed: ${(error as Error).message}`;
      if (!(error instanceof IngestError))
        log.error({ err: error, documentId: document.id }, 'document ingestion failed');
      await db.transaction().execute(async (trx) => {
        if (await tasks.lockAttempt(trx, document.id, document.attempt)) {
          await tasks.finishDocument(trx, document.id, { status: 'failed', error: message }, clock.now());
        }
      });
      deps.searchChanged?.(document.company_id);
    }
  }

  /** Sends a job for each task put back to pending, in the transaction that did it. */
  async function enqueue(trx: Executor, ids: string[]): Promise<number> {
    for (const documentId of ids) await queue.send(trx, INGEST_JOB, { documentId });
    return ids.length;
  }

  return {
    /** Takes a pending task for a worker (in the job's fetch transaction). */
    claim: (trx: Executor, documentId: string, workerId: number | null) =>
      tasks.claimDocument(trx, documentId, clock.now(), workerId),
    run,
    /** Claims and works a task in this call (tests and tools; the queue's workers use claim and run). */
    async ingest(documentId: string): Promise<void> {
      const document = await tasks.claimDocument(db, documentId, clock.now(), null);
      if (document) await run(document);
    },
    /** Hands the tasks of dead workers back to the queue. */
    requeue: async (trx: Executor, workerIds: readonly number[]) =>
      enqueue(trx, await tasks.requeueDocuments(trx, { workerIds }, clock.now())),
    /** Hands back ownerless tasks processing for longer than the stale threshold (at start-up). */
    requeueStale: async (trx: Executor) =>
      enqueue(
        trx,
        await tasks.requeueDocuments(trx, { staleBefore: new Date(clock.now().getTime() - staleAfterMs) }, clock.now()),
      ),
    /** Hands one claimed task back for later (its run failed unexpectedly). */
    async release(trx: Executor, document: tasks.ClaimedDocument): Promise<void> {
      if (await tasks.releaseDocument(trx, document.id, document.attempt, clock.now()))
        await queue.send(trx, INGEST_JOB, { documentId: document.id }, { startAfterSeconds: RELEASE_DELAY_SECONDS });
    },
  };
}
