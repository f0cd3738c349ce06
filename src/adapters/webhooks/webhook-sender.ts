/**
 * The webhook sender, on undici: the network policy of connectors (src/adapters/connectors/
 * network-guard.ts: private and reserved addresses refused at connect time unless
 * ALLOW_PRIVATE_URLS), one time limit over the whole call, at most `maxResponseBytes` of the
 * answer read, redirects never followed (a 3xx is a failed attempt naming where it pointed).
 */
import { Agent, request } from 'undici';
import { retryAfterMs } from '../connectors/http.js';
import {
  BlockedAddressError,
  checkHostName,
  guardedLookup,
  type ResolveAddresses,
} from '../connectors/network-guard.js';
import { startTimeLimit } from '../../lib/abort-limit.js';
import type { WebhookOutcome, WebhookSender } from '../../ports/webhook-sender.js';

export interface WebhookSenderOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
  resolve?: ResolveAddresses;
  /** Connections kept per receiver's origin (the per-endpoint concurrency is enforced above this). */
  connectionsPerOrigin?: number;
}

const USER_AGENT = 'Switchboard-Webhooks/1.0';

/** Why `url` is not an address webhooks are sent to, or null. */
export function urlProblem(url: string, allowPrivate: boolean): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return `must be http or https, got ${parsed.protocol}`;
  if (parsed.username || parsed.password) return 'must not contain credentials (user:password@)';
  try {
    checkHostName(parsed.hostname, allowPrivate);
  } catch (error) {
    return `is refused: ${(error as Error).message}`;
  }
  return null;
}

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const agent = new Agent({
    connect: { lookup: guardedLookup({ allowPrivate: options.allowPrivate, resolve: options.resolve }) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connections: options.connectionsPerOrigin ?? 16,
  });

  function describe(error: unknown, timedOut: boolean, host: string): string {
    if (timedOut) return `no answer within ${options.timeoutMs} ms`;
    const cause = ((error as { cause?: unknown }).cause ?? error) as NodeJS.ErrnoException;
    if (cause instanceof BlockedAddressError || cause.code === 'EBLOCKED')
      return `refused to call ${host}: ${cause.message}`;
    const code = cause.code ?? (error as NodeJS.ErrnoException).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return `no answer within ${options.timeoutMs} ms`;
    }
    return `could not reach ${host} (${code ?? cause.message})`;
  }

  /** Reads at most the cap; true when the body was larger. */
  async function drain(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<boolean> {
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > options.maxResponseBytes) {
        body.destroy();
        return true;
      }
    }
    return false;
  }

  return {
    checkUrl: (url) => urlProblem(url, options.allowPrivate),

    async send({ url, headers, body, signal }): Promise<WebhookOutcome> {
      const began = performance.now();
      const latency = () => Math.round(performance.now() - began);
      const problem = urlProblem(url, options.allowPrivate);
      if (problem) return { ok: false, status: null, latencyMs: 0, error: `the address ${problem}` };
      const host = new URL(url).host;
      const limit = startTimeLimit(signal, options.timeoutMs);
      try {
        const response = await request(url, {
          dispatcher: agent,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
          body,
          signal: limit.signal,
        });
        const status = response.statusCode;
        const retryAfter = retryAfterMs(response.headers['retry-after']);
        const extra = retryAfter === undefined ? {} : { retryAfterMs: retryAfter };
        if (status >= 300 && status < 400) {
          await response.body.dump();
          const location = String(response.headers.location ?? '');
          let where = '';
          try {
            where = location ? ` to ${new URL(location, url).host}` : '';
          } catch {
            where = '';
          }
          return {
            ok: false,
            status,
            latencyMs: latency(),
            error: `redirected (HTTP ${status})${where}; redirects are not followed`,
          };
        }
        const declared = Number(response.headers['content-length'] ?? 0);
        const tooLarge =
          declared > options.maxResponseBytes ? (response.body.destroy(), true) : await drain(response.body as never);
        if (tooLarge) {
          return {
            ok: false,
            status,
            latencyMs: latency(),
            error: `the answer is larger than ${options.maxResponseBytes} bytes`,
            ...extra,
          };
        }
        const ok = status >= 200 && status < 300;
        return { ok, status, latencyMs: latency(), error: ok ? null : `HTTP ${status}`, ...extra };
      } catch (error) {
        if (signal.aborted)
          return { ok: false, status: null, latencyMs: latency(), error: 'the sending worker stopped' };
        return { ok: false, status: null, latencyMs: latency(), error: describe(error, limit.timedOut, host) };
      } finally {
        limit.release();
      }
    },

    close: () => agent.close(),
  };
}
