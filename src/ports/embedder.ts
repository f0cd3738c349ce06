/**
 * Sentence embeddings: text in, one unit-length vector per text out. The knowledge base embeds
 * chunks at ingestion and queries at search time with the same model; vectors of different
 * models are never compared (each model is its own vector namespace).
 */

/** A failure of the embedder, with whether trying again later may succeed. */
export class EmbeddingError extends Error {
  override readonly name = 'EmbeddingError';
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The provider's HTTP status, when it answered with one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface Embedder {
  /** `<provider>:<model>`, the vector namespace of what this embedder returns. */
  readonly id: string;
  /**
   * Embeds `texts` (in order) as L2-normalised vectors of equal length. Throws EmbeddingError
   * when the model cannot be loaded or the provider refuses.
   */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** Scales `vector` to unit length in place (a zero vector stays zero) and returns it. */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}
