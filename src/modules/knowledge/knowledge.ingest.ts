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
import { CpuBusyError, cpuJobModule, type CpuJob, type CpuPool } from '../../lib/cpu-pool.js';
import { EmbeddingError } from '../../ports/embedder.js';
import { FetchError, type WebFetcher } from '../../ports/web-fetcher.js';
import { IngestError, PDF_TYPE } from './knowledge.extract.js';
import type { PrepareInput, PreparedText } from './knowledge.extract.job.js';
import * as tasks from './knowledge.tasks.repo.js';
import type { EmbedderState } from './knowledge.retrieval.js';
import { textSearchConfig } from './knowledge.text.js';

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
  /** Extraction runs there (DOCUMENTS_KIND). */
  cpu: CpuPool;
  embedding: EmbedderState;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Called once a document's ingestion is committed (its search index changed). */
  searchChanged?: (companyId: string) => void;
}

/** The pool's kind for document extraction (the container sizes its queue). */
export const DOCUMENTS_KIND = 'documents';

const PREPARE_JOB: CpuJob<PrepareInput, PreparedText> = {
  kind: DOCUMENTS_KIND,
  module: cpuJobModule(import.meta.url, './knowledge.extract.job'),
  name: 'prepare',
  reviveError: (failure) =>
    failure.name === 'IngestError' ? new IngestError(failure.message) : new Error(failure.message),
};

/** What the pool is given for a document: its bytes (moved to the thread) or the fetched page. */
async function prepareInput(document: tasks.ClaimedDocument, fetcher: WebFetcher): Promise<PrepareInput> {
  switch (document.source_type) {
    case 'article':
      return { source: 'text', text: document.content };
    case 'file': {
      if (!document.source_bytes) throw new IngestError('The uploaded file is no longer stored; upload it again');
      const bytes = new Uint8Array(document.source_bytes);
      return { source: document.mime_type === PDF_TYPE ? 'pdf' : 'docx', bytes };
    }
    case 'website': {
      try {
        const page = await fetcher.fetchPage(document.source_url ?? '');
        return page.contentType.startsWith('text/plain')
          ? { source: 'text', text: page.body }
          : { source: 'html', html: page.body, url: page.url };
      } catch (error) {
        if (error instanceof FetchError) throw new IngestError(error.message);
        throw error;
      }
    }
  }
}

/** Extracts, cleans and chunks the document in the CPU pool. */
async function prepare(document: tasks.ClaimedDocument, deps: Pick<IngestDeps, 'fetcher' | 'cpu'>) {
  const input = await prepareInput(document, deps.fetcher);
  const transfer = 'bytes' in input ? [input.bytes.buffer] : [];
  return deps.cpu.run(PREPARE_JOB, input, { transfer });
}

export function createIngestion(deps: IngestDeps) {
  const { db, clock, embedding, log, queue } = deps;
  const staleAfterMs = deps.staleAfterMs ?? STALE_PROCESSING_MS;

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
    const { text, language, chunks } = await prepare(document, deps);
    const title = document.title;
    if (!text)
      throw new IngestError(
        document.source_type === 'file'
          ? 'No text could be extracted from the file (a scanned or empty document?)'
          : 'The document has no text',
      );
    const config = textSearchConfig(language);
    const embedded = await embedChunks(chunks, title);
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
    deps.searchChanged?.(document.company_id);
  }

  async function run(document: tasks.ClaimedDocument): Promise<void> {
    try {
      await process(document);
    } catch (error) {
      // A full pool is no fault of the document: the task is handed back for later.
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
