/**
 * A local ONNX sentence-embedding model through transformers.js. The model is read from
 * `modelsDir/<org>/<model>` or, when allowed, downloaded from the model hub on first use. A
 * model that cannot be loaded makes every call fail with a clear EmbeddingError (retried after
 * `retryAfterMs`), so callers can degrade to the lanes that need no vectors.
 */
import { EmbeddingError, normalize, type Embedder } from '../../ports/embedder.js';
import { pipelineLoader } from './pipeline-loader.js';

export interface LocalEmbedderOptions {
  model: string;
  modelsDir: string;
  allowDownload: boolean;
  batchSize?: number;
  retryAfterMs?: number;
  now?: () => number;
}

type Extractor = (
  texts: string[],
  options: { pooling: 'mean'; normalize: boolean },
) => Promise<{ dims: number[]; data: Float32Array }>;

export function createLocalEmbedder(options: LocalEmbedderOptions): Embedder {
  const extractor = pipelineLoader<Extractor>(
    { task: 'feature-extraction', ...options },
    // What to configure, without the server's paths (members read it as a document's embedding_error).
    (message) =>
      new EmbeddingError(
        `Local embedding model ${message}. Put the model's files under MODELS_DIR/${options.model}` +
          (options.allowDownload ? '' : ' (or allow EMBEDDINGS_ALLOW_DOWNLOAD)') +
          ', or choose another EMBEDDINGS_PROVIDER',
        false,
      ),
  );
  return {
    id: `local:${options.model}`,
    async embed(texts) {
      const extract = await extractor();
      const out: Float32Array[] = [];
      const batchSize = options.batchSize ?? 16;
      for (let start = 0; start < texts.length; start += batchSize) {
        const batch = texts.slice(start, start + batchSize);
        const tensor = await extract(batch, { pooling: 'mean', normalize: true });
        const width = tensor.dims[tensor.dims.length - 1] ?? 0;
        for (let row = 0; row < batch.length; row++) {
          out.push(normalize(tensor.data.slice(row * width, (row + 1) * width)));
        }
      }
      return out;
    },
  };
}
