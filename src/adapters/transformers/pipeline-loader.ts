/**
 * A transformers.js pipeline loaded once, on first use, from `modelsDir/<org>/<model>` or, when
 * allowed, the model hub. A failed load is remembered, so that calls fail at once with the same
 * error until `retryAfterMs` has passed; then the next call tries again.
 */
export interface PipelineOptions {
  task: 'feature-extraction' | 'automatic-speech-recognition';
  model: string;
  modelsDir: string;
  allowDownload: boolean;
  retryAfterMs?: number;
  now?: () => number;
}

/** `fail` turns the loader's words ("… could not be loaded from …") into the caller's error. */
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
      const where = options.allowDownload ? `${options.modelsDir} or the model hub` : options.modelsDir;
      throw fail(`${options.model} could not be loaded from ${where}: ${(error as Error).message}`);
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
