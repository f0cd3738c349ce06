/**
 * A Google peer: the OAuth 2.0 token endpoint (`/token`, JWT-bearer grant), Calendar API v3
 * (`/calendar/v3/…`) and Gmail API v1 (`/gmail/v1/…`) on one server. The token endpoint verifies
 * the RS256 assertion with the public half of a key pair made here (node:crypto, independently of
 * the signing library), its iss/aud/scope/iat/exp, and `sub` against the delegations it was given;
 * it answers `{access_token, expires_in, token_type}` or OAuth errors `{error, error_description}`.
 * API calls need `Authorization: Bearer` with an issued token carrying the method's scope; errors
 * have Google's shape `{"error": {"code", "message", "errors": [{domain, reason, message}], "status"}}`.
 * Faults (429 with Retry-After, 403 rateLimitExceeded, 5xx, hangs) come from the vendor peer.
 */
import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { startVendorPeer, type PeerAnswer, type PeerRequest, type VendorPeer } from './vendor-peer.js';

export const CALENDAR_SCOPE = 'https://www.googleapis.com/auth/calendar';
export const GMAIL_SEND_SCOPE = 'https://www.googleapis.com/auth/gmail.send';
const GMAIL_READ_SCOPES = [
  'https://mail.google.com/',
  'https://www.googleapis.com/auth/gmail.modify',
  'https://www.googleapis.com/auth/gmail.compose',
  'https://www.googleapis.com/auth/gmail.readonly',
  'https://www.googleapis.com/auth/gmail.metadata',
];

export type ServiceAccountJson = {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  token_uri: string;
};

export interface SentMail {
  headers: Record<string, string>;
  /** Subject with RFC 2047 words decoded. */
  subject: string;
  body: string;
  raw: string;
}

export interface FakeGoogle extends VendorPeer {
  /** The service-account key JSON whose public key the token endpoint trusts. */
  credentials: ServiceAccountJson;
  /** Another well-formed key the peer does not know (its signature is refused). */
  strangerKey: string;
  /** Assertion claims of each grant asked, in order. */
  grants: Record<string, unknown>[];
  calendars: Map<string, { summary: string; timeZone: string; busy: { start: string; end: string }[] }>;
  events: Record<string, unknown>[];
  sent: SentMail[];
  /** Users the service account may act as, with the scopes delegated to it. */
  delegations: Map<string, string[]>;
}

const pkcs8 = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }).toString();

function googleError(code: number, status: string, message: string, reason: string, extra = {}): PeerAnswer {
  return {
    status: code,
    body: { error: { code, message, errors: [{ message, domain: 'global', reason, ...extra }], status } },
  };
}

const oauth = (status: number, error: string, description: string): PeerAnswer => ({
  status,
  body: { error, error_description: description },
});

const b64json = (part: string) =>
  JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

/** RFC 2047 encoded words (B and Q) decoded, for checking the Subject header. */
function decodeWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_all, _charset: string, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          ).toString('utf8'),
    );
}

function parseMessage(raw: string): SentMail | undefined {
  const split = raw.indexOf('\r\n\r\n');
  if (split < 0) return undefined;
  const headers: Record<string, string> = {};
  for (const line of raw
    .slice(0, split)
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.slice(split + 4);
  if (/quoted-printable/i.test(headers['content-transfer-encoding'] ?? '')) {
    const bytes = body
      .replace(/=\r\n/g, '')
      .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    body = Buffer.from(bytes, 'latin1').toString('utf8');
  } else if (/base64/i.test(headers['content-transfer-encoding'] ?? '')) {
    body = Buffer.from(body, 'base64').toString('utf8');
  }
  return { headers, subject: decodeWords(headers.subject ?? ''), body, raw };
}

export async function startFakeGoogle(): Promise<FakeGoogle> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const tokens = new Map<string, { scopes: string[]; sub?: string }>();
  const grants: Record<string, unknown>[] = [];
  const calendars: FakeGoogle['calendars'] = new Map([
    [
      'team@acme.example',
      {
        summary: 'Acme support team',
        timeZone: 'Europe/Paris',
        busy: [{ start: '2026-03-02T09:00:00Z', end: '2026-03-02T10:00:00Z' }],
      },
    ],
  ]);
  const events: Record<string, unknown>[] = [];
  const sent: SentMail[] = [];
  const delegations = new Map<string, string[]>([['agent@acme.example', [GMAIL_SEND_SCOPE, CALENDAR_SCOPE]]]);
  let url = '';
  const clientEmail = 'switchboard@acme-project.iam.gserviceaccount.com';

  function token(request: PeerRequest): PeerAnswer {
    if (request.method !== 'POST') return oauth(405, 'invalid_request', 'Method not allowed');
    if (!String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
      return oauth(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
    }
    const form = new URLSearchParams(request.body);
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      return oauth(400, 'unsupported_grant_type', `Invalid grant_type: ${form.get('grant_type') ?? ''}`);
    }
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return oauth(400, 'invalid_request', 'Invalid JWT: not a JWS compact serialization');
    const [header, payload, signature] = parts as [string, string, string];
    let head: Record<string, unknown>;
    let claims: Record<string, unknown>;
    try {
      head = b64json(header);
      claims = b64json(payload);
    } catch {
      return oauth(400, 'invalid_request', 'Invalid JWT: unreadable header or claims');
    }
    grants.push(claims);
    const signed = Buffer.from(`${header}.${payload}`);
    if (head.alg !== 'RS256' || !verify('RSA-SHA256', signed, publicKey, Buffer.from(signature, 'base64url'))) {
      return oauth(400, 'invalid_grant', 'Invalid JWT Signature.');
    }
    if (claims.iss !== clientEmail) return oauth(400, 'invalid_grant', 'Invalid grant: account not found');
    if (claims.aud !== `${url}/token`) {
      return oauth(400, 'invalid_grant', `Invalid JWT: Failed audience check. The expected value was ${url}/token`);
    }
    const now = Math.floor(Date.now() / 1000);
    const iat = Number(claims.iat);
    const exp = Number(claims.exp);
    if (!Number.isInteger(iat) || !Number.isInteger(exp) || exp - iat > 3600 || exp <= now || iat > now + 300) {
      return oauth(
        400,
        'invalid_grant',
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
      );
    }
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [];
    if (!scopes.length) return oauth(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    const sub = typeof claims.sub === 'string' ? claims.sub : undefined;
    if (sub !== undefined && !scopes.every((scope) => delegations.get(sub)?.includes(scope))) {
      return oauth(
        401,
        'unauthorized_client',
        'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.',
      );
    }
    const accessToken = `ya29.${randomBytes(24).toString('base64url')}`;
    tokens.set(accessToken, { scopes, sub });
    return { status: 200, body: { access_token: accessToken, expires_in: 3599, token_type: 'Bearer' } };
  }

  function bearer(request: PeerRequest, allowed: string[]): PeerAnswer | { scopes: string[]; sub?: string } {
    const auth = String(request.headers.authorization ?? '');
    if (!auth) {
      return googleError(401, 'UNAUTHENTICATED', 'Request is missing required authentication credential.', 'required');
    }
    const grant = auth.startsWith('Bearer ') ? tokens.get(auth.slice(7)) : undefined;
    if (!grant) {
      return googleError(
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token.',
        'authError',
        { location: 'Authorization', locationType: 'header' },
      );
    }
    if (!grant.scopes.some((scope) => allowed.includes(scope))) {
      return googleError(
        403,
        'PERMISSION_DENIED',
        'Request had insufficient authentication scopes.',
        'insufficientPermissions',
      );
    }
    return grant;
  }

  const notFound = () => googleError(404, 'NOT_FOUND', 'Not Found', 'notFound');
  const required = (what: string) => googleError(400, 'INVALID_ARGUMENT', `Missing ${what}.`, 'required');

  function calendar(request: PeerRequest, path: string): PeerAnswer {
    const grant = bearer(request, [CALENDAR_SCOPE]);
    if ('status' in grant) return grant;
    const body = (request.json ?? {}) as Record<string, unknown>;
    if (path === '/freeBusy' && request.method === 'POST') {
      if (typeof body.timeMin !== 'string') return required('timeMin parameter');
      if (typeof body.timeMax !== 'string') return required('timeMax parameter');
      const [min, max] = [Date.parse(body.timeMin), Date.parse(body.timeMax)];
      if (Number.isNaN(min) || Number.isNaN(max))
        return googleError(400, 'INVALID_ARGUMENT', 'Bad Request', 'badRequest');
      if (max <= min)
        return googleError(400, 'INVALID_ARGUMENT', 'The specified time range is empty.', 'timeRangeEmpty');
      const items = Array.isArray(body.items) ? (body.items as { id?: string }[]) : [];
      const answer: Record<string, unknown> = {};
      for (const { id = '' } of items) {
        const found = calendars.get(id);
        answer[id] = found
          ? { busy: found.busy.filter((slot) => Date.parse(slot.end) > min && Date.parse(slot.start) < max) }
          : { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] };
      }
      return {
        status: 200,
        body: { kind: 'calendar#freeBusy', timeMin: body.timeMin, timeMax: body.timeMax, calendars: answer },
      };
    }
    const match = /^\/calendars\/([^/?]+)(\/events)?(?:\?.*)?$/.exec(path);
    const found = match ? calendars.get(decodeURIComponent(match[1]!)) : undefined;
    if (!match || !found) return notFound();
    const id = decodeURIComponent(match[1]!);
    if (!match[2] && request.method === 'GET') {
      return {
        status: 200,
        body: { kind: 'calendar#calendar', etag: '"1"', id, summary: found.summary, timeZone: found.timeZone },
      };
    }
    if (!match[2] || request.method !== 'POST') return notFound();
    const start = (body.start ?? {}) as { dateTime?: string; timeZone?: string };
    const end = (body.end ?? {}) as { dateTime?: string; timeZone?: string };
    if (!start.dateTime) return required('start time');
    if (!end.dateTime) return required('end time');
    if (Date.parse(end.dateTime) <= Date.parse(start.dateTime)) {
      return googleError(400, 'INVALID_ARGUMENT', 'The specified time range is empty.', 'timeRangeEmpty');
    }
    if (Array.isArray(body.attendees) && body.attendees.length && !grant.sub) {
      return googleError(
        403,
        'PERMISSION_DENIED',
        'Service accounts cannot invite attendees without Domain-Wide Delegation of Authority.',
        'forbiddenForServiceAccounts',
      );
    }
    const event = {
      kind: 'calendar#event',
      id: randomBytes(8).toString('hex'),
      status: 'confirmed',
      htmlLink: `https://calendar.example/event?eid=${events.length + 1}`,
      ...body,
    };
    events.push({ ...event, calendarId: id, query: path.split('?')[1] ?? '' });
    found.busy.push({ start: start.dateTime, end: end.dateTime });
    return { status: 200, body: event };
  }

  function gmail(request: PeerRequest, path: string): PeerAnswer {
    if (path === '/users/me/profile' && request.method === 'GET') {
      const grant = bearer(request, GMAIL_READ_SCOPES);
      if ('status' in grant) return grant;
      return { status: 200, body: { emailAddress: grant.sub, messagesTotal: 12, threadsTotal: 9, historyId: '1001' } };
    }
    if (path !== '/users/me/messages/send' || request.method !== 'POST') return notFound();
    const grant = bearer(request, [GMAIL_SEND_SCOPE, ...GMAIL_READ_SCOPES.slice(0, 3)]);
    if ('status' in grant) return grant;
    if (!grant.sub) {
      return googleError(400, 'FAILED_PRECONDITION', 'Precondition check failed.', 'failedPrecondition');
    }
    const raw = (request.json as { raw?: unknown } | undefined)?.raw;
    if (typeof raw !== 'string' || !raw) {
      return googleError(
        400,
        'INVALID_ARGUMENT',
        "'raw' RFC822 payload message string or uploading message via /upload/* URL required",
        'invalidArgument',
      );
    }
    const mail = parseMessage(Buffer.from(raw, 'base64url').toString('utf8'));
    if (!mail?.headers.to) return googleError(400, 'INVALID_ARGUMENT', 'Invalid To header', 'invalidArgument');
    sent.push(mail);
    return {
      status: 200,
      body: { id: randomBytes(8).toString('hex'), threadId: randomBytes(8).toString('hex'), labelIds: ['SENT'] },
    };
  }

  const peer = await startVendorPeer((request) => {
    const path = request.path;
    if (path === '/token') return token(request);
    if (path.startsWith('/calendar/v3/')) return calendar(request, path.slice('/calendar/v3'.length));
    if (path.startsWith('/gmail/v1/')) return gmail(request, path.slice('/gmail/v1'.length));
    return notFound();
  });
  url = peer.url;
  return Object.assign(peer, {
    credentials: {
      type: 'service_account' as const,
      project_id: 'acme-project',
      private_key_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678',
      private_key: pkcs8(privateKey),
      client_email: clientEmail,
      client_id: '109876543210987654321',
      token_uri: `${peer.url}/token`,
    },
    strangerKey: pkcs8(stranger.privateKey),
    grants,
    calendars,
    events,
    sent,
    delegations,
  });
}
