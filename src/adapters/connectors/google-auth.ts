/**
 * Google service-account authorisation: the OAuth 2.0 JWT-bearer grant (RFC 7523) as Google's
 * token endpoint speaks it. An RS256 assertion `{iss: client_email, scope, aud: token_uri, iat,
 * exp ≤ iat + 1 h}` (plus `sub`, the Workspace user to act as, for domain-wide delegation), signed
 * with jose, is POSTed form-encoded to the credentials' `token_uri` through the guarded HTTP client
 * (the address comes from the tenant, so the SSRF guard applies to it as to any vendor call). The
 * answer `{access_token, expires_in, token_type: "Bearer"}` is cached in memory until a minute
 * before it expires, keyed by a hash (never the secret itself), in a bounded map.
 */
import { createHash, createPrivateKey } from 'node:crypto';
import { importPKCS8, SignJWT } from 'jose';
import { ConnectorError } from '../../ports/connectors.js';
import type { ConnectorHttp } from './http.js';

export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google refuses assertions valid for more than an hour. */
const ASSERTION_LIFETIME_S = 3600;
/** A cached token is dropped this long before Google says it expires. */
const EXPIRY_MARGIN_MS = 60_000;
const MAX_CACHED_TOKENS = 500;

export interface ServiceAccountKey {
  type?: string;
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
  [key: string]: unknown;
}

export interface GoogleTokenRequest {
  /** The product the token is for (`Gmail`, `Google Calendar`), named in errors. */
  vendor: string;
  credentials: ServiceAccountKey;
  scopes: readonly string[];
  /** The user to impersonate (domain-wide delegation), else the service account itself. */
  subject?: string;
  signal: AbortSignal;
}

export interface GoogleTokens {
  /** A bearer access token, from the cache or a fresh grant. */
  accessToken(request: GoogleTokenRequest): Promise<string>;
  /** Forgets the token of these credentials (the API refused it: revoked, key disabled). */
  forget(request: Omit<GoogleTokenRequest, 'signal' | 'vendor'>): void;
  /** How many grants were made (for tests and diagnostics). */
  readonly grants: number;
}

/** PEM keys pasted with literal `\n` sequences are read as the JSON file has them. */
function pem(key: string): string {
  return key.includes('\\n') ? key.replace(/\\n/g, '\n') : key;
}

/**
 * Why `private_key` cannot sign Google assertions (not PEM PKCS#8, not RSA), or undefined when it
 * can. The answer never quotes the key.
 */
export function privateKeyProblem(key: string): string | undefined {
  const text = pem(key).trim();
  if (!text.startsWith('-----BEGIN PRIVATE KEY-----')) {
    return 'private_key must be a PEM PKCS#8 key (-----BEGIN PRIVATE KEY-----), as in the service-account JSON file';
  }
  try {
    const parsed = createPrivateKey({ key: text, format: 'pem' });
    if (parsed.asymmetricKeyType !== 'rsa') return `private_key must be an RSA key, got ${parsed.asymmetricKeyType}`;
  } catch {
    return 'private_key is not a readable PEM PKCS#8 RSA private key';
  }
  return undefined;
}

function cacheKey(request: Omit<GoogleTokenRequest, 'signal' | 'vendor'>): string {
  const { credentials } = request;
  // The key's hash is part of the identity: another tenant naming the same client_email with a
  // different (wrong) key must not be handed this tenant's token.
  return createHash('sha256')
    .update(
      JSON.stringify([
        credentials.client_email,
        [...request.scopes].sort().join(' '),
        request.subject ?? '',
        credentials.token_uri ?? GOOGLE_TOKEN_URI,
        createHash('sha256').update(pem(credentials.private_key)).digest('hex'),
      ]),
    )
    .digest('hex');
}

interface TokenAnswer {
  access_token?: unknown;
  expires_in?: unknown;
  token_type?: unknown;
}

/** Google's words for OAuth errors, made readable for the user fixing the setup. */
const GRANT_HINTS: Record<string, string> = {
  invalid_grant: 'the service account key or its claims were refused',
  unauthorized_client:
    'the service account is not authorised for these scopes (grant domain-wide delegation for them in the Admin console)',
  invalid_client: 'the service account is unknown or disabled',
  invalid_scope: 'a requested scope is not valid',
};

export function createGoogleTokens(http: ConnectorHttp, now: () => number = Date.now): GoogleTokens {
  const cache = new Map<string, { token: string; expiresAt: number }>();
  const pending = new Map<string, Promise<string>>();
  let grants = 0;

  function remember(key: string, token: string, expiresAt: number) {
    const at = now();
    for (const [other, entry] of cache) if (entry.expiresAt <= at) cache.delete(other);
    while (cache.size >= MAX_CACHED_TOKENS) cache.delete(cache.keys().next().value!);
    cache.set(key, { token, expiresAt });
  }

  async function grant(request: GoogleTokenRequest, key: string): Promise<string> {
    const { credentials, vendor } = request;
    const tokenUri = credentials.token_uri ?? GOOGLE_TOKEN_URI;
    let signingKey: Awaited<ReturnType<typeof importPKCS8>>;
    try {
      signingKey = await importPKCS8(pem(credentials.private_key), 'RS256');
    } catch {
      throw new ConnectorError(vendor, 'the service account private_key is not a PEM PKCS#8 RSA key', {
        retryable: false,
        code: 'invalid_private_key',
      });
    }
    const issuedAt = Math.floor(now() / 1000);
    const claims: Record<string, string> = { scope: request.scopes.join(' ') };
    const jwt = new SignJWT(claims)
      .setProtectedHeader({
        alg: 'RS256',
        typ: 'JWT',
        ...(credentials.private_key_id ? { kid: credentials.private_key_id } : {}),
      })
      .setIssuer(credentials.client_email)
      .setAudience(tokenUri)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ASSERTION_LIFETIME_S);
    if (request.subject) jwt.setSubject(request.subject);
    const assertion = await jwt.sign(signingKey);

    let oauthError: { error?: string; description?: string } = {};
    grants += 1;
    const answer = await http
      .request({
        vendor,
        method: 'POST',
        url: tokenUri,
        form: { grant_type: JWT_BEARER, assertion },
        signal: request.signal,
        errorMessage: (body) => {
          const record = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
          oauthError = {
            error: typeof record.error === 'string' ? record.error : undefined,
            description: typeof record.error_description === 'string' ? record.error_description : undefined,
          };
          return oauthError.error ? undefined : typeof body === 'string' ? body : undefined;
        },
      })
      .catch((error: unknown) => {
        if (!(error instanceof ConnectorError) || !oauthError.error || error.retryable) throw error;
        const hint = GRANT_HINTS[oauthError.error];
        const said = oauthError.description ? `: ${oauthError.description.slice(0, 300)}` : '';
        throw new ConnectorError(
          vendor,
          `token grant refused (HTTP ${error.status}) ${oauthError.error}${hint ? ` (${hint})` : ''}${said}`,
          { status: error.status, retryable: false, code: oauthError.error },
        );
      });
    const body = (answer.body ?? {}) as TokenAnswer;
    if (typeof body.access_token !== 'string' || !body.access_token) {
      throw new ConnectorError(vendor, 'the token endpoint answered without an access_token', {
        status: answer.status,
        retryable: false,
      });
    }
    if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') {
      throw new ConnectorError(vendor, `the token endpoint issued a ${body.token_type} token, not Bearer`, {
        status: answer.status,
        retryable: false,
      });
    }
    const lifetime = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
    const expiresAt = now() + lifetime * 1000 - EXPIRY_MARGIN_MS;
    if (expiresAt > now()) remember(key, body.access_token, expiresAt);
    return body.access_token;
  }

  return {
    async accessToken(request) {
      const key = cacheKey(request);
      const cached = cache.get(key);
      if (cached && cached.expiresAt > now()) return cached.token;
      if (cached) cache.delete(key);
      const inFlight = pending.get(key);
      if (inFlight) return inFlight;
      const promise = grant(request, key).finally(() => pending.delete(key));
      pending.set(key, promise);
      return promise;
    },
    forget(request) {
      cache.delete(cacheKey(request));
    },
    get grants() {
      return grants;
    },
  };
}
