/**
 * A transformers.js pipeline loaded once, on first use, from `modelsDir/<org>/<model>` or, when
 * allowed, the model hub. A failed load is remembered, so that calls fail at once with the same
 * error until `retryAfterMs` has passed; then the next call tries again.
 */
import path from 'node:path';

export interface PipelineOptions {
  task: 'feature-extraction' | 'automatic-speech-recognition';
  model: string;
  modelsDir: string;
  allowDownload: boolean;
  retryAfterMs?: number;
  now?: () => number;
}

/**
 * The loader's words as a member may read them (the 503 of speech to text, a document's embedding_error): the models directory
 * named by its setting, MODELS_DIR, and no other absolute path of the server.
 */
export function withoutServerPaths(message: string, modelsDir: string): string {
  let text = message;
  for (const dir of new Set([path.resolve(modelsDir), modelsDir]).values())
    if (dir.length > 1) text = text.split(dir).join('MODELS_DIR');
  return text.replace(/(?<![\w./])\/(?:[^\s/"'`:;,()]+\/)*[^\s/"'`:;,()]+/g, '<path>');
}

/**
 * `fail` turns the loader's words ("… could not be loaded from MODELS_DIR: …", no server path in
 * them) into the caller's error.
 */
export function pipelineLoader<T>(options: PipelineOptions, fail: (message: string) => Error): () => Promise<T> {
  const now = options.now ?? Date.now;
  const retryAfterMs = options.retryAfterMs ?? 5 * 60_000;
  let loading: Promise<T> | null = null;
  let failedAt = 0;

  async function load(): Promise<T> {
    try {
      const { env, pipeline } = await import('@huggingface/transformers');
      env.localModelPath = options.modelsDir;
      env.allowLocalModels = true;
      env.allowRemoteModels = options.allowDownload;
      return (await pipeline(options.task, options.model, { dtype: 'q8' })) as unknown as T;
    } catch (error) {
      const where = options.allowDownload ? 'MODELS_DIR or the model hub' : 'MODELS_DIR';
      const reason = withoutServerPaths(String((error as Error)?.message ?? error), options.modelsDir);
      throw fail(`${options.model} could not be loaded from ${where}: ${reason}`);
    }
  }

  return () => {
    if (loading && failedAt > 0 && now() - failedAt > retryAfterMs) loading = null;
    if (!loading) {
      failedAt = 0;
      loading = load();
      loading.catch(() => {
        failedAt = now();
      });
    }
    return loading;
  };
}
