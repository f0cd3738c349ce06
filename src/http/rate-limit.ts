/**
 * Fixed-window rate limits per credential, with RateLimit-* headers (IETF draft names) and
 * Retry-After on 429. Counters live in @fastify/rate-limit's store: in memory, or in Redis
 * when REDIS_URL is set so that every instance shares them. Several windows may apply to one
 * route (an hourly quota and a per-minute burst); the headers describe the tightest one.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { AppErrors } from './errors.js';
import { sessionIdOf } from './session-cookie.js';

export interface RateWindow {
  /** Distinguishes the counters of this window from every other. */
  name: string;
  max: number;
  windowMs: number;
}

interface LimitResult {
  isAllowed: boolean;
  max?: number;
  remaining?: number;
  ttlInSeconds?: number;
  isExceeded?: boolean;
}

type Check = (request: FastifyRequest) => Promise<LimitResult>;

declare module 'fastify' {
  interface FastifyInstance {
    createRateLimit(options: Record<string, unknown>): Check;
  }
}

/** What requests are counted against: a credential header, or the client's address alone. */
export type RateKey = 'x-api-key' | 'x-api-token' | 'address';

/**
 * The credential a request is counted against: a hash of its key or token (or of the console's
 * session cookie where a key is expected), else its address. A chat token may also come as
 * `Authorization: Bearer` (the OpenAI-compatible `/v1`).
 */
/** A header's value when it is one non-empty string. */
function headerText(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function credentialOf(request: FastifyRequest, header: RateKey): string {
  if (header === 'address') return `ip:${request.ip}`;
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  // The same credential under its other names: a chat token as OpenAI's Bearer key; an API key as
  // ElevenLabs' `xi-api-key`, or the console's session cookie where a key is expected.
  const fallback =
    header === 'x-api-token' ? bearer : (headerText(request.headers['xi-api-key']) ?? sessionIdOf(request));
  const value = request.headers[header] ?? fallback;
  if (typeof value === 'string' && value.length > 0) {
    return createHash('sha256').update(value).digest('base64url').slice(0, 24);
  }
  return `ip:${request.ip}`;
}

function setHeaders(reply: FastifyReply, result: Required<Pick<LimitResult, 'max' | 'remaining' | 'ttlInSeconds'>>) {
  reply.header('ratelimit-limit', result.max);
  reply.header('ratelimit-remaining', result.remaining);
  reply.header('ratelimit-reset', result.ttlInSeconds);
}

export function rateLimitHook(
  app: FastifyInstance,
  header: RateKey,
  windows: RateWindow[],
  enabled = true,
): onRequestAsyncHookHandler {
  if (!enabled) return async () => undefined;
  const checks = windows.map((window) =>
    app.createRateLimit({
      max: window.max,
      timeWindow: window.windowMs,
      keyGenerator: (request: FastifyRequest) => `${window.name}:${credentialOf(request, header)}`,
    }),
  );
  return async (request, reply) => {
    let tightest: { max: number; remaining: number; ttlInSeconds: number } | undefined;
    for (const check of checks) {
      const result = await check(request);
      if (result.isAllowed || result.max === undefined) continue;
      const current = { max: result.max, remaining: result.remaining ?? 0, ttlInSeconds: result.ttlInSeconds ?? 0 };
      if (result.isExceeded) {
        const window = windows[checks.indexOf(check)];
        if (app.hasDecorator('metrics')) app.metrics.rateLimitRejections.inc({ limit: window?.name ?? 'unknown' });
        setHeaders(reply, { ...current, remaining: 0 });
        reply.header('retry-after', current.ttlInSeconds);
        throw AppErrors.tooManyRequests(
          `Rate limit exceeded: ${current.max} requests per ${describeWindow(window?.windowMs ?? 0)}; retry in ${current.ttlInSeconds} s`,
        );
      }
      if (!tightest || current.remaining < tightest.remaining) tightest = current;
    }
    if (tightest) setHeaders(reply, tightest);
  };
}

function describeWindow(ms: number): string {
  if (ms === 3_600_000) return 'hour';
  if (ms === 60_000) return 'minute';
  return `${Math.round(ms / 1000)} s`;
}

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
