/**
 * createKnowledgeModule: the knowledge base's service over the adapters the container chose
 * (embedder, web fetcher). The container calls this once.
 */
import type { KnowledgeConfig } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { Clock } from '../../lib/clock.js';
import type { CpuPool } from '../../lib/cpu-pool.js';
import type { WebFetcher } from '../../ports/web-fetcher.js';
import type { EmbedderState } from './knowledge.retrieval.js';
import { Collection, Document } from './knowledge.schemas.js';
import { createMemoryLanes } from './knowledge.memory-lanes.js';
import { createBm25Lanes } from './knowledge.bm25-lanes.js';
import { createLexicon } from './knowledge.lexicon.js';
import { ocrSetup } from './knowledge.ocr.js';
import { createParsers } from './knowledge.parsers.js';
import { createKnowledgeService, type KnowledgeDeps } from './knowledge.service.js';

export { collectionsRoutes } from './knowledge.collections.routes.js';
export { documentsRoutes } from './knowledge.documents.routes.js';
export { DOCUMENTS_KIND } from './knowledge.parsers.js';
export type { KnowledgeService } from './knowledge.service.js';
/** Content words as the answerer compares them, and the support-domain equivalents of a query's. */
export {
  contentTerms,
  languageOfText,
  normalizeArabic,
  type LanguageHints,
  type TermLanguage,
} from './knowledge.terms.js';
export { expandTerms, type Expansion } from './knowledge.expansion.js';
/** Session settings the search statements expect on every database connection. */
export { SEARCH_SESSION_SETTINGS } from './knowledge.search.repo.js';

/** Schemas with an $id that routes reference (the app adds them to the OpenAPI components). */
export const KNOWLEDGE_SCHEMAS = [Collection, Document];

export function createKnowledgeModule(
  config: KnowledgeConfig,
  deps: {
    db: Db;
    queue: JobQueue;
    clock: Clock;
    log: KnowledgeDeps['log'];
    embedding: EmbedderState;
    fetcher: WebFetcher & { close(): Promise<void> };
    /** The service's CPU pool: parsing, OCR and chunking run there (kind `documents`). */
    cpu: CpuPool;
    /** Whether every change to the knowledge tables is being heard (the change listener is connected). */
    changesHeard: () => boolean;
  },
) {
  const maxChunks = config.searchMemoryMaxChunks;
  const lexicon = createLexicon(deps.db, {
    onError: (error) => deps.log.warn({ err: error }, 'looking up query words failed'),
  });
  const memory =
    maxChunks > 0
      ? createMemoryLanes({
          db: deps.db,
          maxChunks,
          budgetChunks: maxChunks * 4,
          isEnabled: deps.changesHeard,
          log: deps.log,
          lexicon,
        })
      : null;
  const bm25 =
    config.searchIndexMaxChunks > maxChunks
      ? createBm25Lanes({
          db: deps.db,
          minChunks: maxChunks,
          maxChunks: config.searchIndexMaxChunks,
          budgetBytes: config.searchIndexBudgetBytes,
          isEnabled: deps.changesHeard,
          log: deps.log,
        })
      : null;
  const ocr = ocrSetup(config.ocrLanguages);
  const parsers = createParsers(deps.cpu, ocr.setup);
  const service = createKnowledgeService({
    ...deps,
    memory,
    bm25,
    lexicon,
    parsers,
    maxUploadBytes: config.maxUploadBytes,
    crawl: config.crawl,
  });
  return Object.assign(service, {
    /** A company's knowledge changed on some instance (no id: anything may have changed). */
    knowledgeChanged: (companyId?: string) => {
      memory?.changed(companyId);
      bm25?.changed(companyId);
    },
    memory,
    bm25,
    /** Chunks and bytes of each company's in-process BM25 index (the metrics gauge). */
    searchIndexStats: () => bm25?.stats() ?? [],
    close: async () => {
      memory?.close();
      bm25?.close();
      ocr.close();
      await deps.fetcher.close();
    },
  });
}

export type KnowledgeModule = ReturnType<typeof createKnowledgeModule>;
