/**
 * The console's session cookie and its CSRF token. The cookie holds a random session id
 * (`ss_…`, stored server-side only as its SHA-256); it is HttpOnly, SameSite=Lax, Path=/, and
 * Secure with the `__Host-` prefix when the request came over HTTPS (or PUBLIC_BASE_URL is
 * https). A cookie-authenticated write (any method but GET, HEAD, OPTIONS) must carry
 * `x-csrf-token`, a value derived from the session id that only the signed-in page can learn
 * (from the sign-in answer or GET /api/public/auth/session, which other origins cannot read), and
 * an Origin, when the browser sends one, that is this service's own.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { AppErrors } from './errors.js';

const PLAIN_NAME = 'sb_session';
const SECURE_NAME = '__Host-sb_session';
const SESSION_ID = /^ss_[A-Za-z0-9_-]{43}$/;
export const CSRF_HEADER = 'x-csrf-token';

/** The session id of the request's cookie, or undefined when it has none (or a malformed one). */
export function sessionIdOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string' || header.length === 0) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index < 0) continue;
    const name = part.slice(0, index).trim();
    if (name !== SECURE_NAME && name !== PLAIN_NAME) continue;
    const value = part.slice(index + 1).trim();
    if (SESSION_ID.test(value)) return value;
  }
  return undefined;
}

export function isSecureRequest(request: FastifyRequest, publicBaseUrl: string): boolean {
  return request.protocol === 'https' || publicBaseUrl.startsWith('https:');
}

export function setSessionCookie(reply: FastifyReply, sessionId: string, expiresAt: Date, secure: boolean) {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  const name = secure ? SECURE_NAME : PLAIN_NAME;
  const flags = ['Path=/', `Max-Age=${maxAge}`, 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])];
  void reply.header('set-cookie', `${name}=${sessionId}; ${flags.join('; ')}`);
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean) {
  const name = secure ? SECURE_NAME : PLAIN_NAME;
  const flags = ['Path=/', 'Max-Age=0', 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])];
  void reply.header('set-cookie', `${name}=; ${flags.join('; ')}`);
}

/** The CSRF token of a session: derived from its id, so nothing more is stored. */
export function csrfTokenOf(sessionId: string): string {
  return createHash('sha256').update(`csrf:${sessionId}`).digest('base64url');
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Why the request's Origin (when the browser sent one) is not this service's, or null. */
function foreignOrigin(request: FastifyRequest, publicBaseUrl: string): string | null {
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return null;
  const own = new Set([new URL(publicBaseUrl).origin, `${request.protocol}://${request.host}`]);
  return own.has(origin) ? null : `Cross-origin request refused: Origin ${origin.slice(0, 100)} is not this service`;
}

/** Sign-in routes: a write from another site's page (a login forgery) is refused by its Origin. */
export function csrfOriginCheck(publicBaseUrl: string): onRequestAsyncHookHandler {
  return async (request) => {
    if (SAFE_METHODS.has(request.method)) return;
    const problem = foreignOrigin(request, publicBaseUrl);
    if (problem) throw AppErrors.forbidden(problem);
  };
}

/** Why a cookie-authenticated request is refused as a possible forgery, or null when it is not. */
export function csrfProblem(request: FastifyRequest, sessionId: string, publicBaseUrl: string): string | null {
  if (SAFE_METHODS.has(request.method)) return null;
  const foreign = foreignOrigin(request, publicBaseUrl);
  if (foreign) return foreign;
  const given = request.headers[CSRF_HEADER];
  if (typeof given !== 'string' || given.length === 0) {
    return `Missing ${CSRF_HEADER} header: a write with the session cookie needs the session's CSRF token`;
  }
  const expected = Buffer.from(csrfTokenOf(sessionId));
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    return `Invalid ${CSRF_HEADER} header: it does not belong to this session`;
  }
  return null;
}
