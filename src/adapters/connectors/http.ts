/**
 * The HTTP client of connectors, on undici: the network policy of website uploads (private and
 * reserved addresses refused at connect time unless ALLOW_PRIVATE_URLS), a time limit over the
 * whole call (INTEGRATION_TIMEOUT_MS), a cap on the answer's size, redirects never followed (an
 * API that redirects is answered with an error naming where it pointed), and vendor error
 * answers turned into ConnectorError: 429 (with Retry-After), 408 and 5xx retryable, the rest not.
 * Nothing here logs; messages name the vendor, the status and the vendor's own words, never a
 * header: an error body is scrubbed of the credentials the request carried (its authorization
 * header and what it decodes to, credential-named headers, form fields and query parameters) in
 * every encoding, and of anything shaped like a credential, before a word of it is read.
 */
import type { Transformer } from 'node:stream/web';
import { Agent, fetch as undiciFetch, request } from 'undici';
import { startTimeLimit } from '../../lib/abort-limit.js';
import { createScrubber, type Scrubber } from '../../lib/scrub.js';
import { ConnectorError } from '../../ports/connectors.js';
import { BlockedAddressError, checkHostName, guardedLookup, type ResolveAddresses } from './network-guard.js';

export interface ConnectorHttpOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Resolver used at connect time (default: the system's). */
  resolve?: ResolveAddresses;
  userAgent?: string;
}

export interface HttpCall {
  /** The vendor's product name, used in every error message. */
  vendor: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  /** Sent as JSON with `content-type: application/json; charset=utf-8`. */
  json?: unknown;
  /** Sent form-encoded (`application/x-www-form-urlencoded`), e.g. to an OAuth 2.0 token endpoint. */
  form?: Record<string, string>;
  signal: AbortSignal;
  /** The vendor's words in an error answer (its JSON error shape); default: common shapes. */
  errorMessage?: (body: unknown) => string | undefined;
  /** The error of a non-2xx answer when the vendor's body says more than its status (undefined: the default mapping). */
  errorFor?: (status: number, body: unknown, headers: HttpAnswer['headers']) => ConnectorError | undefined;
  /**
   * `text`: a 2xx answer that is not JSON resolves with its text as `body` instead of failing;
   * `bytes`: a 2xx answer resolves with its bytes (a Buffer) as `body` (media downloads).
   */
  accept?: 'json' | 'text' | 'bytes';
  /** The largest answer read for this call (default INTEGRATION_MAX_RESPONSE_KB). */
  maxBytes?: number;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined for an empty body). */
  body: unknown;
}

export interface ConnectorHttp {
  /** Sends the call; resolves with a 2xx JSON answer, throws ConnectorError otherwise. */
  request(call: HttpCall): Promise<HttpAnswer>;
  /**
   * A WHATWG `fetch` on the same policy, for vendor SDKs that take one (MCP's client): the SSRF
   * guard, the time limit, the size cap on the answer's body (read as it streams), no redirects.
   * Failures reject with ConnectorError naming `vendor`; an answer of any status resolves.
   */
  fetchFor(vendor: string): (input: string | URL, init?: RequestInit) => Promise<Response>;
  close(): Promise<void>;
}

const MAX_VENDOR_WORDS = 300;

/** Retry-After as milliseconds (delta seconds or an HTTP date), undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  if (/^\d+(\.\d+)?$/.test(raw.trim())) return Math.round(Number(raw) * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The words of the usual JSON error shapes: `{message}`, `{error}`, `{error: {message}}`, `{errors}`. */
export function commonErrorMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return body || undefined;
  if (!body || typeof body !== 'object') return undefined;
  const record = body as Record<string, unknown>;
  for (const key of ['message', 'error_description', 'error', 'errors', 'detail', 'description']) {
    const value = record[key];
    if (typeof value === 'string' && value) return value;
    if (Array.isArray(value) && value.length) return value.map((item) => commonErrorMessage(item) ?? '').join('; ');
    if (value && typeof value === 'object') {
      const nested = commonErrorMessage(value);
      if (nested) return nested;
    }
  }
  return undefined;
}

function clip(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_VENDOR_WORDS ? `${oneLine.slice(0, MAX_VENDOR_WORDS)}…` : oneLine;
}

/** The ConnectorError of a non-2xx answer. */
export function errorForStatus(
  vendor: string,
  status: number,
  words: string | undefined,
  headers: HttpAnswer['headers'],
): ConnectorError {
  const said = words ? `: ${clip(words)}` : '';
  if (status === 429) {
    const wait = retryAfterMs(headers['retry-after']);
    const after = wait === undefined ? '' : ` (retry after ${Math.ceil(wait / 1000)} s)`;
    return new ConnectorError(vendor, `rate limit reached (HTTP 429)${after}${said}`, {
      status,
      retryable: true,
      retryAfterMs: wait,
    });
  }
  if (status === 401 || status === 403) {
    const what = status === 401 ? 'credentials were refused' : 'access denied';
    return new ConnectorError(vendor, `${what} (HTTP ${status})${said}`, { status, retryable: false });
  }
  if (status >= 500 || status === 408) {
    return new ConnectorError(vendor, `server error (HTTP ${status})${said}`, {
      status,
      retryable: true,
      retryAfterMs: retryAfterMs(headers['retry-after']),
    });
  }
  return new ConnectorError(vendor, `request refused (HTTP ${status})${said}`, { status, retryable: false });
}

const CREDENTIAL_NAME = /auth|token|key|secret|password|passwd|session|cookie|signature|credential|assertion/i;

/** The credentials a call carries, as the values to scrub from what the vendor answers. */
export function callCredentials(call: Pick<HttpCall, 'url' | 'headers' | 'form'>): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(call.headers ?? {})) {
    if (!CREDENTIAL_NAME.test(name) || typeof value !== 'string') continue;
    found.push(value);
    const scheme = /^(\w+)\s+(.+)$/.exec(value);
    if (scheme) {
      found.push(scheme[2]!);
      if (scheme[1]!.toLowerCase() === 'basic') found.push(Buffer.from(scheme[2]!, 'base64').toString('utf8'));
    }
  }
  for (const [name, value] of Object.entries(call.form ?? {})) if (CREDENTIAL_NAME.test(name)) found.push(value);
  try {
    for (const [name, value] of new URL(call.url).searchParams) if (CREDENTIAL_NAME.test(name)) found.push(value);
  } catch {
    // An invalid URL is refused before any call.
  }
  return found;
}

function parseBody(vendor: string, status: number, text: string, contentType: string, acceptText = false): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    if (status >= 400) return text.slice(0, MAX_VENDOR_WORDS * 2);
    if (acceptText) return text;
    throw new ConnectorError(
      vendor,
      `answered with something other than JSON (HTTP ${status}, ${contentType || 'no content type'})`,
      { status, retryable: false },
    );
  }
}

function scrubberOf(call: HttpCall): Scrubber {
  return createScrubber(callCredentials(call));
}

export function createConnectorHttp(options: ConnectorHttpOptions): ConnectorHttp {
  const agent = new Agent({
    connect: { lookup: guardedLookup({ allowPrivate: options.allowPrivate, resolve: options.resolve }) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });

  function target(call: HttpCall): URL {
    let url: URL;
    try {
      url = new URL(call.url);
    } catch {
      throw new ConnectorError(call.vendor, 'the configured address is not a valid URL', { retryable: false });
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new ConnectorError(call.vendor, `only http and https addresses are called, got ${url.protocol}`, {
        retryable: false,
      });
    }
    if (url.username || url.password) {
      throw new ConnectorError(call.vendor, 'addresses with credentials (user:password@) are not called', {
        retryable: false,
      });
    }
    try {
      checkHostName(url.hostname, options.allowPrivate);
    } catch (error) {
      throw new ConnectorError(call.vendor, `refused to call ${url.host}: ${(error as Error).message}`, {
        retryable: false,
      });
    }
    return url;
  }

  async function readCapped(call: HttpCall, body: AsyncIterable<Buffer> & { destroy(): void }, status: number) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      const max = call.maxBytes ?? options.maxResponseBytes;
      if (size > max) {
        body.destroy();
        throw new ConnectorError(call.vendor, `the answer is larger than ${max} bytes`, {
          status,
          retryable: false,
        });
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  }

  function failure(call: HttpCall, url: URL, error: unknown, timedOut: boolean): Error {
    if (error instanceof ConnectorError) return error;
    if (call.signal.aborted) return (call.signal.reason as Error) ?? new Error('aborted');
    if (timedOut) {
      return new ConnectorError(call.vendor, `no answer within ${options.timeoutMs} ms`, { retryable: true });
    }
    const cause = ((error as { cause?: unknown }).cause ?? error) as NodeJS.ErrnoException;
    if (cause instanceof BlockedAddressError || cause.code === 'EBLOCKED') {
      return new ConnectorError(call.vendor, `refused to call ${url.host}: ${cause.message}`, { retryable: false });
    }
    const code = cause.code ?? (error as NodeJS.ErrnoException).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new ConnectorError(call.vendor, `no answer within ${options.timeoutMs} ms`, { retryable: true });
    }
    return new ConnectorError(call.vendor, `could not reach ${url.host} (${code ?? cause.message})`, {
      retryable: code !== 'ENOTFOUND',
    });
  }

  return {
    async request(call) {
      const url = target(call);
      const limit = startTimeLimit(call.signal, options.timeoutMs);
      const headers: Record<string, string> = {
        'user-agent': options.userAgent ?? 'Switchboard integrations',
        accept:
          call.accept === 'bytes'
            ? '*/*'
            : call.accept === 'text'
              ? 'application/json, text/*;q=0.9, */*;q=0.5'
              : 'application/json',
        ...call.headers,
      };
      if (call.json !== undefined) headers['content-type'] = 'application/json; charset=utf-8';
      else if (call.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
      try {
        const response = await request(url, {
          dispatcher: agent,
          method: call.method,
          headers,
          body:
            call.json !== undefined
              ? JSON.stringify(call.json)
              : call.form !== undefined
                ? new URLSearchParams(call.form).toString()
                : undefined,
          signal: limit.signal,
        });
        const { statusCode: status, headers: answerHeaders, body } = response;
        if (status >= 300 && status < 400) {
          await body.dump();
          const location = String(answerHeaders.location ?? '');
          const where = location ? ` to ${new URL(location, url).host}` : '';
          throw new ConnectorError(call.vendor, `redirected (HTTP ${status})${where}; redirects are not followed`, {
            status,
            retryable: false,
          });
        }
        const declared = Number(answerHeaders['content-length'] ?? 0);
        const max = call.maxBytes ?? options.maxResponseBytes;
        if (declared > max) {
          body.destroy();
          throw new ConnectorError(call.vendor, `the answer is larger than ${max} bytes`, {
            status,
            retryable: false,
          });
        }
        const bytes = await readCapped(call, body as never, status);
        if (call.accept === 'bytes' && status < 300) return { status, headers: answerHeaders, body: bytes };
        let text = bytes.toString('utf8');
        if (status >= 400) text = scrubberOf(call)(text);
        const contentType = String(answerHeaders['content-type'] ?? '');
        const parsed = parseBody(call.vendor, status, text, contentType, call.accept === 'text');
        if (status >= 400) {
          const mapped = call.errorFor?.(status, parsed, answerHeaders);
          if (mapped) throw mapped;
          const words = (call.errorMessage ?? commonErrorMessage)(parsed) ?? commonErrorMessage(parsed);
          throw errorForStatus(call.vendor, status, words, answerHeaders);
        }
        return { status, headers: answerHeaders, body: parsed };
      } catch (error) {
        throw failure(call, url, error, limit.timedOut);
      } finally {
        limit.release();
      }
    },
    fetchFor(vendor) {
      return async (input, init = {}) => {
        const call: HttpCall = {
          vendor,
          method: 'GET',
          url: String(input),
          signal: init.signal ?? new AbortController().signal,
        };
        const url = target(call);
        // The limit covers the body too, read by the caller after this returns: released when the
        // body ends, fails or is cancelled.
        const limit = startTimeLimit(call.signal, options.timeoutMs);
        let answer: Awaited<ReturnType<typeof undiciFetch>>;
        try {
          answer = await undiciFetch(url, {
            ...(init as object),
            redirect: 'manual',
            dispatcher: agent,
            signal: limit.signal,
          });
        } catch (error) {
          limit.release();
          throw failure(call, url, error, limit.timedOut);
        }
        if (answer.status >= 300 && answer.status < 400) {
          limit.release();
          await answer.body?.cancel();
          throw new ConnectorError(vendor, `redirected (HTTP ${answer.status}); redirects are not followed`, {
            status: answer.status,
            retryable: false,
          });
        }
        const max = options.maxResponseBytes;
        if (Number(answer.headers.get('content-length') ?? 0) > max) {
          limit.release();
          await answer.body?.cancel();
          throw new ConnectorError(vendor, `the answer is larger than ${max} bytes`, {
            status: answer.status,
            retryable: false,
          });
        }
        if (!answer.body) limit.release();
        let size = 0;
        // `cancel` (the upstream failed or the reader cancelled) is the streams standard's, not yet
        // in TypeScript's types; a runtime without it keeps the limit until it passes, no longer.
        const capping: Transformer<Uint8Array, Uint8Array> & { cancel(): void } = {
          transform(chunk, controller) {
            size += chunk.byteLength;
            if (size > max) {
              limit.release();
              controller.error(
                new ConnectorError(vendor, `the answer is larger than ${max} bytes`, {
                  status: answer.status,
                  retryable: false,
                }),
              );
            } else controller.enqueue(chunk);
          },
          flush() {
            limit.release();
          },
          cancel() {
            limit.release();
          },
        };
        const capped = answer.body?.pipeThrough(new TransformStream<Uint8Array, Uint8Array>(capping));
        return new Response(capped as ReadableStream<Uint8Array> | undefined, {
          status: answer.status,
          statusText: answer.statusText,
          headers: answer.headers as unknown as Headers,
        });
      };
    },
    close: () => agent.close(),
  };
}
