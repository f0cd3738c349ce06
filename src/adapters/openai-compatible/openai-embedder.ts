/**
 * Embeddings over the OpenAI embeddings protocol (`POST {baseUrl}/embeddings` with
 * `{ model, input }` → `{ data: [{ index, embedding }] }`): OpenAI itself, Ollama, vLLM,
 * LM Studio, text-embeddings-inference and the like.
 */
import { startTimeLimit, type AbortLimit } from '../../lib/abort-limit.js';
import { EmbeddingError, normalize, type Embedder } from '../../ports/embedder.js';

export interface OpenAiEmbedderOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  batchSize?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

interface EmbeddingsResponse {
  data?: { index?: number; embedding?: unknown }[];
  error?: { message?: string } | string;
}

function providerMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as EmbeddingsResponse;
    if (typeof parsed.error === 'string') return parsed.error;
    if (parsed.error?.message) return parsed.error.message;
  } catch {
    // not JSON: use the text
  }
  return body.slice(0, 200);
}

export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
  const doFetch = options.fetch ?? fetch;
  const batchSize = options.batchSize ?? 64;

  async function embedBatch(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    // The limit covers the answer's body too.
    const limit = startTimeLimit(signal, options.timeoutMs ?? 30_000);
    try {
      return await embedWithin(input, signal, limit);
    } finally {
      limit.release();
    }
  }

  /** One batch's request and answer, within `limit`. */
  async function embedWithin(
    input: string[],
    signal: AbortSignal | undefined,
    limit: AbortLimit,
  ): Promise<Float32Array[]> {
    let response: Response;
    try {
      response = await doFetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: options.model, input }),
        signal: limit.signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      const reason = limit.timedOut ? 'timed out' : (error as Error).message;
      throw new EmbeddingError(`Embeddings provider unreachable at ${endpoint}: ${reason}`, true);
    }
    const text = await response.text();
    if (!response.ok) {
      const retryable = response.status === 429 || response.status >= 500;
      throw new EmbeddingError(
        `Embeddings provider answered ${response.status}: ${providerMessage(text)}`,
        retryable,
        response.status,
      );
    }
    let parsed: EmbeddingsResponse;
    try {
      parsed = JSON.parse(text) as EmbeddingsResponse;
    } catch {
      throw new EmbeddingError('Embeddings provider returned a body that is not JSON', false, response.status);
    }
    const data = parsed.data ?? [];
    if (data.length !== input.length) {
      throw new EmbeddingError(`Embeddings provider returned ${data.length} vectors for ${input.length} inputs`, false);
    }
    const vectors = new Array<Float32Array>(input.length);
    data.forEach((item, position) => {
      const index = item.index ?? position;
      if (!Array.isArray(item.embedding) || !item.embedding.every((value) => typeof value === 'number')) {
        throw new EmbeddingError('Embeddings provider returned an embedding that is not an array of numbers', false);
      }
      vectors[index] = normalize(Float32Array.from(item.embedding as number[]));
    });
    return vectors;
  }

  return {
    id: `openai:${options.model}`,
    async embed(texts, signal) {
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        out.push(...(await embedBatch(texts.slice(start, start + batchSize), signal)));
      }
      return out;
    },
  };
}
