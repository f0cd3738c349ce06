/**
 * OpenAI's embeddings protocol (`POST /v1/embeddings`) through the embedder the knowledge base uses:
 * its model is listed by `GET /v1/models` (id `<provider>:<model>`, `owned_by` the provider; the bare
 * model name is accepted too). Without an embedder, 503 says what to configure.
 */
import { AppError, AppErrors, truncateQuoted } from '../../http/errors.js';
import { EmbeddingError, type Embedder } from '../../ports/embedder.js';
import type { EmbeddingBody, EmbeddingList } from './openai-api.responses.schemas.js';
import type { Model } from './openai-api.schemas.js';
import { estimateTokens, modelNotFound } from './openai-api.service.js';

export interface EmbeddingState {
  embedder: Embedder | null;
  /** Why there is none (shown in the 503). */
  reason: string | null;
}

/** Float32 little-endian bytes in base64, as OpenAI's `encoding_format: base64` gives them. */
export function base64Of(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}

export function createEmbeddings(state: EmbeddingState, createdAt: Date) {
  const created = Math.floor(createdAt.getTime() / 1000);
  const embedder = state.embedder;

  /** The embedder when `model` names it (its id or its bare model name); 503 when there is none. */
  function resolve(model: string): Embedder {
    if (!embedder) {
      throw new AppError(
        503,
        `No embedding model is configured: ${state.reason ?? 'set EMBEDDINGS_PROVIDER'} (EMBEDDINGS_PROVIDER=openai with EMBEDDINGS_URL, or local)`,
        'embeddings_unavailable',
      );
    }
    const bare = embedder.id.slice(embedder.id.indexOf(':') + 1);
    if (model !== embedder.id && model !== bare) throw modelNotFound(model);
    return embedder;
  }

  return {
    /** The embedding model as an OpenAI model object (none without an embedder). */
    models(): Model[] {
      if (!embedder) return [];
      const provider = embedder.id.slice(0, Math.max(embedder.id.indexOf(':'), 0)) || 'switchboard';
      return [{ id: embedder.id, object: 'model', created, owned_by: provider }];
    },

    async embed(body: EmbeddingBody, signal: AbortSignal): Promise<EmbeddingList> {
      const model = resolve(body.model);
      const inputs = typeof body.input === 'string' ? [body.input] : body.input;
      inputs.forEach((text, index) => {
        if (text.includes('\u0000'))
          throw AppErrors.validation(
            `Invalid field 'input${typeof body.input === 'string' ? '' : `[${index}]`}': must not contain NUL bytes`,
          );
      });
      let vectors: Float32Array[];
      try {
        vectors = await model.embed(inputs, signal);
      } catch (error) {
        if (error instanceof EmbeddingError) {
          throw new AppError(
            error.retryable ? 503 : 502,
            `The embedding model failed: ${truncateQuoted(error.message, 300)}`,
            'embeddings_failed',
          );
        }
        throw error;
      }
      const dimensions = vectors[0]?.length ?? 0;
      if (body.dimensions && body.dimensions !== dimensions) {
        throw AppErrors.validation(
          `Invalid field 'dimensions': ${model.id} gives ${dimensions} dimensions, not ${body.dimensions}`,
        );
      }
      const base64 = body.encoding_format === 'base64';
      const tokens = inputs.reduce((sum, text) => sum + estimateTokens(text.length), 0);
      return {
        object: 'list',
        data: vectors.map((vector, index) => ({
          object: 'embedding',
          index,
          embedding: base64 ? base64Of(vector) : Array.from(vector),
        })),
        model: model.id,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      };
    },
  };
}

export type Embeddings = ReturnType<typeof createEmbeddings>;
