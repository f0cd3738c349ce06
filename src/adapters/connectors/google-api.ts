/**
 * Calls of Google REST APIs (Calendar v3, Gmail v1) with a service-account bearer token, and
 * Google's error shape `{"error": {"code", "message", "errors": [{"domain", "reason", "message"}],
 * "status"}}` read into ConnectorError: the message and reason (or status) in the words; 403 with a
 * rate-limit reason (`rateLimitExceeded`, `userRateLimitExceeded`) retryable like a 429; a 401
 * drops the cached token so the next call asks for a new one.
 */
import { ConnectorError } from '../../ports/connectors.js';
import type { GoogleTokens, ServiceAccountKey } from './google-auth.js';
import { type ConnectorHttp, type HttpAnswer } from './http.js';

/** 403 reasons meaning "slow down", not "forbidden". */
const RATE_LIMIT_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded']);

export interface GoogleError {
  message?: string;
  reason?: string;
  status?: string;
}

/** The parts of Google's error body that matter, or {} for another shape. */
export function readGoogleError(body: unknown): GoogleError {
  const error = (body as { error?: unknown } | undefined)?.error;
  if (!error || typeof error !== 'object') return {};
  const record = error as Record<string, unknown>;
  const first = Array.isArray(record.errors) ? (record.errors[0] as Record<string, unknown> | undefined) : undefined;
  return {
    message: typeof record.message === 'string' ? record.message : undefined,
    reason: typeof first?.reason === 'string' ? first.reason : undefined,
    status: typeof record.status === 'string' ? record.status : undefined,
  };
}

export interface GoogleCall {
  vendor: string;
  credentials: ServiceAccountKey;
  scopes: readonly string[];
  subject?: string;
  method: 'GET' | 'POST';
  url: string;
  json?: unknown;
  signal: AbortSignal;
}

export interface GoogleApi {
  /** The 2xx answer, else a ConnectorError with Google's words; `error.code` is the reason or status. */
  request(call: GoogleCall): Promise<HttpAnswer>;
}

export function createGoogleApi(http: ConnectorHttp, tokens: GoogleTokens): GoogleApi {
  return {
    async request(call) {
      const auth = { credentials: call.credentials, scopes: call.scopes, subject: call.subject };
      const token = await tokens.accessToken({ ...auth, vendor: call.vendor, signal: call.signal });
      let said: GoogleError = {};
      try {
        return await http.request({
          vendor: call.vendor,
          method: call.method,
          url: call.url,
          headers: { authorization: `Bearer ${token}` },
          json: call.json,
          signal: call.signal,
          errorMessage: (body) => {
            said = readGoogleError(body);
            const code = said.reason ?? said.status;
            return said.message ? `${said.message}${code ? ` (${code})` : ''}` : undefined;
          },
        });
      } catch (error) {
        if (!(error instanceof ConnectorError) || error.status === undefined) throw error;
        if (error.status === 401) tokens.forget(auth);
        const code = said.reason ?? said.status;
        if (error.status === 403 && said.reason && RATE_LIMIT_REASONS.has(said.reason)) {
          const words = `${said.message ?? 'Rate Limit Exceeded'} (${said.reason})`;
          throw new ConnectorError(call.vendor, `rate limit reached (HTTP 403): ${words}`, {
            status: 403,
            retryable: true,
            code: said.reason,
          });
        }
        if (!code) throw error;
        throw new ConnectorError(call.vendor, error.message.replace(/^[^:]+: /, ''), {
          status: error.status,
          retryable: error.retryable,
          retryAfterMs: error.retryAfterMs,
          code,
        });
      }
    },
  };
}
