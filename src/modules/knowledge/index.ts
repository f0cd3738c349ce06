/**
 * createKnowledgeModule: the knowledge base's service over the adapters the container chose
 * (embedder, web fetcher). The container calls this once.
 */
import type { KnowledgeConfig } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { Clock } from '../../lib/clock.js';
import type { WebFetcher } from '../../ports/web-fetcher.js';
import type { EmbedderState } from './knowledge.retrieval.js';
import { Collection, Document } from './knowledge.schemas.js';
import { createKnowledgeService, type KnowledgeDeps } from './knowledge.service.js';

export { collectionsRoutes } from './knowledge.collections.routes.js';
export { documentsRoutes } from './knowledge.documents.routes.js';
export type { KnowledgeService } from './knowledge.service.js';
/** Session settings the search statements expect on every database connection. */
export { SEARCH_SESSION_SETTINGS } from './knowledge.search.repo.js';

/** Schemas with an $id that routes reference (the app adds them to the OpenAPI components). */
export const KNOWLEDGE_SCHEMAS = [Collection, Document];

export function createKnowledgeModule(
  config: KnowledgeConfig,
  deps: { db: Db; queue: JobQueue; clock: Clock; log: KnowledgeDeps['log']; embedding: EmbedderState; fetcher: WebFetcher & { close(): Promise<void> } },
) {
  const service = createKnowledgeService({ ...deps, maxUploadBytes: config.maxUploadBytes });
  return Object.assign(service, { close: () => deps.fetcher.close() });
}
