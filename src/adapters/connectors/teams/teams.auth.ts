/**
 * Bot Framework authentication, both ways (as botframework-connector does it):
 *
 * - Outgoing: the OAuth 2.0 client-credentials grant at `token_url` (default
 *   `https://login.microsoftonline.com/{tenant_id or botframework.com}/oauth2/v2.0/token`,
 *   scope `https://api.botframework.com/.default`), form-encoded through the guarded client; the
 *   `{token_type, expires_in, access_token}` answer cached until five minutes before it expires,
 *   keyed by a hash of the app id, password and URL (never the secret itself).
 * - Incoming: the activity's `Authorization: Bearer <jwt>` checked with jose: the OpenID metadata
 *   (`openid_metadata_url`, default Bot Framework's) names the JWKS; the token's `kid` must be one
 *   of its keys, endorsed for the activity's channel when the key lists endorsements; RS256,
 *   issuer `https://api.botframework.com`, audience the app id, expiry and not-before with five
 *   minutes' skew; the `serviceurl` claim (any case) equal to the activity's serviceUrl. Metadata
 *   and keys are kept for a day, and fetched again (at most every five minutes) for an unknown kid.
 */
import { createHash } from 'node:crypto';
import { decodeProtectedHeader, importJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
import { ConnectorError } from '../../../ports/connectors.js';
import type { TeamsChannelConfig, TeamsTokenCheck } from '../../../ports/channels.js';
import type { ConnectorHttp } from '../http.js';

export const BOT_FRAMEWORK_ISSUER = 'https://api.botframework.com';
export const BOT_FRAMEWORK_SCOPE = 'https://api.botframework.com/.default';
export const BOT_FRAMEWORK_OPENID_METADATA = 'https://login.botframework.com/v1/.well-known/openidconfiguration';
/** Clock skew allowed on exp and nbf (botframework-connector's five minutes). */
export const CLOCK_SKEW_SECONDS = 300;
const VENDOR = 'Microsoft Teams';
const TOKEN_MARGIN_MS = 5 * 60_000;
const KEYS_TTL_MS = 24 * 3600_000;
const KEYS_REFRESH_MIN_MS = 5 * 60_000;
const MAX_CACHED = 500;

export function teamsTokenUrl(config: Pick<TeamsChannelConfig, 'token_url' | 'tenant_id'>): string {
  return (
    config.token_url ??
    `https://login.microsoftonline.com/${encodeURIComponent(config.tenant_id ?? 'botframework.com')}/oauth2/v2.0/token`
  );
}

interface KeySet {
  keys: (JWK & { endorsements?: unknown })[];
  fetchedAt: number;
}

export function createTeamsAuth(http: ConnectorHttp, now: () => number = Date.now) {
  const tokens = new Map<string, { token: string; expiresAt: number }>();
  const keySets = new Map<string, KeySet>();

  const tokenKey = (config: TeamsChannelConfig) =>
    createHash('sha256')
      .update(JSON.stringify([config.app_id, config.app_password, teamsTokenUrl(config)]))
      .digest('hex');

  async function grant(config: TeamsChannelConfig, signal: AbortSignal): Promise<{ token: string; expiresIn: number }> {
    const answer = await http.request({
      vendor: VENDOR,
      method: 'POST',
      url: teamsTokenUrl(config),
      form: {
        grant_type: 'client_credentials',
        client_id: config.app_id,
        client_secret: config.app_password,
        scope: BOT_FRAMEWORK_SCOPE,
      },
      signal,
      errorMessage: (body) => {
        const record = body as { error?: unknown; error_description?: unknown } | undefined;
        const words = [record?.error, record?.error_description].filter((v) => typeof v === 'string');
        // Microsoft's descriptions end with trace and correlation ids: the first line says it.
        return words.length ? words.join(': ').split(/\r?\n/, 1)[0] : undefined;
      },
    });
    const body = answer.body as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (typeof body?.access_token !== 'string' || !body.access_token) {
      throw new ConnectorError(VENDOR, 'the token endpoint answered without an access_token', { retryable: false });
    }
    const expiresIn = Number(body.expires_in);
    return { token: body.access_token, expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600 };
  }

  async function keysOf(url: string, signal: AbortSignal, fresh: boolean): Promise<KeySet> {
    const kept = keySets.get(url);
    const age = kept ? now() - kept.fetchedAt : Infinity;
    if (kept && age < KEYS_TTL_MS && (!fresh || age < KEYS_REFRESH_MIN_MS)) return kept;
    const metadata = (await http.request({ vendor: VENDOR, method: 'GET', url, signal })).body as
      { jwks_uri?: unknown } | undefined;
    if (typeof metadata?.jwks_uri !== 'string') {
      throw new ConnectorError(VENDOR, 'the OpenID metadata names no jwks_uri', { retryable: true });
    }
    const jwks = (await http.request({ vendor: VENDOR, method: 'GET', url: metadata.jwks_uri, signal })).body as
      { keys?: unknown } | undefined;
    if (!Array.isArray(jwks?.keys)) throw new ConnectorError(VENDOR, 'the JWKS holds no keys', { retryable: true });
    const set = { keys: jwks.keys as KeySet['keys'], fetchedAt: now() };
    if (keySets.size >= MAX_CACHED) keySets.delete(keySets.keys().next().value!);
    keySets.set(url, set);
    return set;
  }

  return {
    /** A bearer token for the Bot Framework connector, cached until 5 minutes before expiry. */
    async accessToken(config: TeamsChannelConfig, signal: AbortSignal): Promise<string> {
      const key = tokenKey(config);
      const kept = tokens.get(key);
      if (kept && kept.expiresAt > now()) return kept.token;
      const { token, expiresIn } = await grant(config, signal);
      if (tokens.size >= MAX_CACHED) tokens.delete(tokens.keys().next().value!);
      tokens.set(key, { token, expiresAt: now() + Math.max(0, expiresIn * 1000 - TOKEN_MARGIN_MS) });
      return token;
    },

    /** Forgets the cached token of this app (the connector refused it). */
    forget(config: TeamsChannelConfig) {
      tokens.delete(tokenKey(config));
    },

    async verify(
      config: TeamsChannelConfig,
      authorization: string | undefined,
      activity: { serviceUrl: string; channelId: string },
    ): Promise<TeamsTokenCheck> {
      const match = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/.exec(authorization ?? '');
      if (!match) return { ok: false, reason: 'a Bot Framework bearer token is required' };
      const jwt = match[1]!;
      let kid: string | undefined;
      try {
        const header = decodeProtectedHeader(jwt);
        if (header.alg !== 'RS256') return { ok: false, reason: `the token's algorithm ${header.alg} is not RS256` };
        kid = header.kid;
      } catch {
        return { ok: false, reason: 'the token is not a JWT' };
      }
      if (!kid) return { ok: false, reason: 'the token names no signing key (kid)' };
      const url = config.openid_metadata_url ?? BOT_FRAMEWORK_OPENID_METADATA;
      const signal = AbortSignal.timeout(10_000);
      let set = await keysOf(url, signal, false);
      let jwk = set.keys.find((key) => key.kid === kid);
      if (!jwk) {
        set = await keysOf(url, signal, true);
        jwk = set.keys.find((key) => key.kid === kid);
      }
      if (!jwk) return { ok: false, reason: 'the token was signed with a key the OpenID metadata does not list' };
      const endorsements = Array.isArray(jwk.endorsements) ? (jwk.endorsements as unknown[]) : null;
      if (endorsements && activity.channelId && !endorsements.includes(activity.channelId)) {
        return { ok: false, reason: `the signing key is not endorsed for channel ${activity.channelId}` };
      }
      let claims: JWTPayload;
      try {
        const key = await importJWK({ ...jwk, alg: 'RS256' }, 'RS256');
        ({ payload: claims } = await jwtVerify(jwt, key, {
          algorithms: ['RS256'],
          issuer: BOT_FRAMEWORK_ISSUER,
          audience: config.app_id,
          clockTolerance: CLOCK_SKEW_SECONDS,
          currentDate: new Date(now()),
          requiredClaims: ['exp'],
        }));
      } catch (error) {
        const code = (error as { code?: string }).code ?? 'ERR_JWT_INVALID';
        return { ok: false, reason: `the token was refused (${code})` };
      }
      const claim = Object.entries(claims).find(([name]) => name.toLowerCase() === 'serviceurl')?.[1];
      const trim = (value: string) => value.replace(/\/+$/, '');
      if (typeof claim !== 'string' || trim(claim) !== trim(activity.serviceUrl)) {
        return { ok: false, reason: "the token's serviceurl claim does not match the activity's serviceUrl" };
      }
      return { ok: true };
    },
  };
}

export type TeamsAuth = ReturnType<typeof createTeamsAuth>;
