/**
 * A provider's failures as LlmError: its HTTP status when it answered with one, whether trying
 * again later may succeed (408, 409, 429, 5xx, no answer, a stream that broke off), and a message
 * naming the provider's own words — never the API key, which is cut out if a provider echoes it.
 */
import { STATUS_CODES } from 'node:http';
import { LlmError } from '../../ports/llm.js';

const FAILED = 'The language model provider failed';

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message && !error.message.includes(cause.message)
    ? `${error.message}: ${cause.message}`
    : error.message;
}

/** The provider's error object of a body: `{error: {message, type, code}}` (OpenAI, Anthropic) or the body itself. */
export interface ProviderError {
  message?: unknown;
  type?: unknown;
  code?: unknown;
}

export function providerErrorOf(body: unknown): ProviderError | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const inner = (body as { error?: unknown }).error;
  if (inner && typeof inner === 'object') return inner as ProviderError;
  return body as ProviderError;
}

export class LlmErrors {
  constructor(private readonly secret: string | undefined) {}

  /** A message with the API key cut out, should a provider or proxy ever echo it. */
  private clean(message: string): string {
    return this.secret && this.secret.length >= 4 ? message.split(this.secret).join('[redacted]') : message;
  }

  /** An answer other than 2xx: its status, the message of its error body (else the status's name). */
  fromBody(status: number, body: Buffer): LlmError {
    let message: string | undefined;
    try {
      const error = providerErrorOf(JSON.parse(body.toString('utf8')));
      if (typeof error?.message === 'string') message = error.message;
    } catch {
      message = undefined;
    }
    return new LlmError(
      this.clean(`${FAILED} (HTTP ${status}): ${message ?? STATUS_CODES[status] ?? 'Unknown status'}`),
      isRetryableStatus(status),
      status,
    );
  }

  /** No answer at all: the connection could not be made or broke before the status line. */
  noResponse(error: unknown): LlmError {
    return new LlmError(this.clean(`${FAILED} (no response): Cannot connect to API: ${causeOf(error)}`), true);
  }

  /** The stream of a 200 broke off (the connection, a body that is not the protocol). */
  brokenStream(error: unknown): LlmError {
    return new LlmError(this.clean(`${FAILED} (HTTP 200): the stream broke off (${causeOf(error)})`), true, 200);
  }

  /**
   * An error event in a stream. Before any output it stands for the request's failure: with the
   * status the provider's error type names (OpenAI) or 529/500 (Anthropic: overloaded or not); after
   * output the reply broke off and may be tried again.
   */
  inStream(error: ProviderError | undefined, status: number | undefined, retryable: boolean): LlmError {
    const message = typeof error?.message === 'string' ? error.message : JSON.stringify(error ?? null);
    return new LlmError(
      this.clean(status === undefined ? `${FAILED}: ${message}` : `${FAILED} (HTTP ${status}): ${message}`),
      retryable,
      status,
    );
  }
}

/**
 * The HTTP status an OpenAI error event stands for: its numeric code, else what its code and
 * type name (quota and rate limits 429, authentication 401, … , else 500).
 */
export function openAiErrorStatus(error: ProviderError): number {
  const { code, type } = error;
  const numeric = typeof code === 'number' ? code : typeof code === 'string' && /^\d{3}$/.test(code) ? Number(code) : 0;
  if (Number.isInteger(numeric) && numeric >= 400 && numeric <= 599) return numeric;
  const words = [code, type]
    .filter((value) => typeof value === 'string' || typeof value === 'number')
    .join(' ')
    .toLowerCase();
  if (words.includes('insufficient_quota') || words.includes('rate_limit')) return 429;
  if (words.includes('authentication')) return 401;
  if (words.includes('permission')) return 403;
  if (words.includes('not_found')) return 404;
  if (['invalid', 'bad_request', 'context_length'].some((word) => words.includes(word))) return 400;
  if (words.includes('overload')) return 503;
  if (words.includes('timeout')) return 504;
  return 500;
}

/** Whether an OpenAI error event before any output may succeed when tried again (never a spent quota). */
export function openAiErrorRetryable(error: ProviderError, status: number): boolean {
  if (error.code === 'insufficient_quota' || error.type === 'insufficient_quota') return false;
  return isRetryableStatus(status);
}
