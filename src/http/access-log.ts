/**
 * What the access log records of a request: its method, its path, and its query with the values
 * that could be credentials masked — a parameter named like one (`token`, `key`, `secret`,
 * `signature`, `code`, `hub.verify_token` …) or a value shaped like one (a JWT, an auth scheme's
 * credential, a long opaque string) — so a token sent in a URL is never written to the log.
 * Identifiers (UUIDs), numbers, dates and short words stay readable for debugging.
 */
import { SCRUB_MASK, scrubShapes } from '../lib/scrub.js';

/** The longest query the log keeps (a longer one is cut, marked with an ellipsis). */
const MAX_QUERY = 512;

const CREDENTIAL_NAME =
  /token|secret|passw|passwd|pwd|api[-_.]?key|apikey|^key$|[-_.]key$|auth|sig|signature|credential|session|cookie|code|otp|nonce|ticket|challenge|assertion|jwt|bearer|private/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Whether a query value looks like an opaque credential (long, unspaced, letters and digits mixed). */
function opaque(value: string): boolean {
  if (value.length < 20 || UUID.test(value) || DATE.test(value)) return false;
  return /^[A-Za-z0-9+/=_.~-]+$/.test(value) && /\d/.test(value) && /[A-Za-z]/.test(value);
}

/** The query string of `url` (without `?`) with credential values masked; '' when there is none. */
export function scrubbedQuery(url: string): string {
  const at = url.indexOf('?');
  if (at < 0 || at === url.length - 1) return '';
  const raw = url.slice(at + 1).split('#', 1)[0]!;
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(raw);
  } catch {
    return SCRUB_MASK;
  }
  const parts: string[] = [];
  for (const [name, value] of params) {
    const masked =
      CREDENTIAL_NAME.test(name) || opaque(value) || scrubShapes(value) !== value || scrubShapes(name) !== name;
    // A name that is itself a credential (`?<token>`) is masked too.
    const secretName = !CREDENTIAL_NAME.test(name) && (opaque(name) || scrubShapes(name) !== name);
    parts.push(
      `${secretName ? SCRUB_MASK : encodeURIComponent(name)}=${masked ? SCRUB_MASK : encodeURIComponent(value)}`,
    );
  }
  const query = parts.join('&');
  return query.length > MAX_QUERY ? `${query.slice(0, MAX_QUERY)}…` : query;
}

/** The path of `url`, without its query (cut when very long). */
export function pathOf(url: string): string {
  const path = url.split('?', 1)[0]!.split('#', 1)[0]!;
  return path.length > 1024 ? `${path.slice(0, 1024)}…` : path;
}

interface LoggedRequest {
  method: string;
  url: string;
  ip?: string;
  host?: string;
  socket?: { remotePort?: number };
}

/** The pino serializer of `req` in the access log: method, path, scrubbed query, host and peer. */
export function accessLogRequest(request: LoggedRequest): Record<string, unknown> {
  const query = scrubbedQuery(request.url);
  return {
    method: request.method,
    path: pathOf(request.url),
    ...(query ? { query } : {}),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
