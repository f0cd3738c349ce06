/** The knowledge base's outside world chosen from config: the embedder and the web fetcher. */
import type { KnowledgeConfig } from '../../config.js';
import type { Embedder } from '../../ports/embedder.js';
import type { WebFetcher } from '../../ports/web-fetcher.js';
import { createOpenAiEmbedder } from '../openai-compatible/openai-embedder.js';
import { createLocalEmbedder } from '../transformers/local-embedder.js';
import { createSafeFetcher } from '../web/safe-fetcher.js';

export interface KnowledgeAdapters {
  embedding: { embedder: Embedder | null; reason: string | null };
  fetcher: WebFetcher & { close(): Promise<void> };
}

export function embedderFromConfig(config: KnowledgeConfig['embeddings']): KnowledgeAdapters['embedding'] {
  switch (config.provider) {
    case 'none':
      return { embedder: null, reason: 'No embedder is configured (EMBEDDINGS_PROVIDER=none)' };
    case 'openai':
      return {
        embedder: createOpenAiEmbedder({
          baseUrl: config.url!,
          apiKey: config.apiKey,
          model: config.model,
          batchSize: config.batchSize,
          timeoutMs: config.timeoutMs,
        }),
        reason: null,
      };
    case 'local':
      return {
        embedder: createLocalEmbedder({
          model: config.model,
          modelsDir: config.modelsDir,
          allowDownload: config.allowDownload,
          batchSize: Math.min(config.batchSize, 32),
        }),
        reason: null,
      };
  }
}

export function createKnowledgeAdapters(config: KnowledgeConfig): KnowledgeAdapters {
  return {
    embedding: embedderFromConfig(config.embeddings),
    fetcher: createSafeFetcher({
      allowPrivate: config.allowPrivateUrls,
      allowedHosts: config.allowedHosts,
      timeoutMs: config.fetchTimeoutMs,
      maxBytes: config.fetchMaxBytes,
    }),
  };
}
