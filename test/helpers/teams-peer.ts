/**
 * Microsoft's side of a Teams bot, both ways, for channel tests. It serves the OpenID metadata
 * and its JWKS as login.botframework.com does (`jwks_uri`; RSA keys with `kid` and the channels
 * they are endorsed for), signs activity tokens as the Bot Connector does (RS256, issuer
 * `https://api.botframework.com`, audience the app id, `serviceurl` claim, an hour's expiry),
 * issues client-credentials tokens as login.microsoftonline.com does (form-encoded
 * `grant_type=client_credentials`, `client_id`, `client_secret`, scope
 * `https://api.botframework.com/.default`; AADSTS errors otherwise), and records what the bot
 * sends to the connector: `POST /v3/conversations/{id}/activities[/{activityId}]` with its bearer.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { startVendorPeer, type VendorPeer } from './vendor-peer.js';

export interface TeamsSent {
  conversationId: string;
  replyToId: string | null;
  activity: { type: string; text?: string; textFormat?: string; replyToId?: string; from?: { id: string } };
  authorization: string | undefined;
}

export interface TeamsPeer extends VendorPeer {
  appId: string;
  appPassword: string;
  /** The bot's channel account id (the activity's recipient). */
  botId: string;
  sent: TeamsSent[];
  tokensIssued(): number;
  config(): Record<string, unknown>;
  /** The Bearer token the Bot Connector would send with an activity. */
  sign(
    claims?: Record<string, unknown>,
    options?: { key?: 'known' | 'unknown'; expiresIn?: string; kid?: string },
  ): Promise<string>;
  activity(fields?: Record<string, unknown>): Record<string, unknown>;
}

export async function startTeamsPeer(): Promise<TeamsPeer> {
  const appId = randomUUID();
  const appPassword = 'bot~secret.' + randomUUID();
  const botId = `28:${appId}`;
  const known = await generateKeyPair('RS256', { extractable: true });
  const stranger = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(known.publicKey)), kid: 'key-1', use: 'sig', alg: 'RS256' };
  const issued = new Set<string>();
  const sent: TeamsSent[] = [];
  let tokensIssued = 0;
  let url = '';
  const peer = await startVendorPeer((request) => {
    const path = new URL(request.path, 'http://peer').pathname;
    if (request.method === 'GET' && path === '/v1/.well-known/openidconfiguration') {
      return {
        status: 200,
        body: {
          issuer: 'https://api.botframework.com',
          authorization_endpoint: 'https://invalid.botframework.com',
          jwks_uri: `${url}/v1/.well-known/keys`,
          id_token_signing_alg_values_supported: ['RS256'],
          token_endpoint_auth_methods_supported: ['private_key_jwt'],
        },
      };
    }
    if (request.method === 'GET' && path === '/v1/.well-known/keys') {
      return { status: 200, body: { keys: [{ ...jwk, endorsements: ['msteams', 'webchat'] }] } };
    }
    if (request.method === 'POST' && path === '/botframework.com/oauth2/v2.0/token') {
      const form = new URLSearchParams(request.body);
      if (!String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
        return {
          status: 400,
          body: {
            error: 'invalid_request',
            error_description: 'AADSTS900144: The request body must contain the following parameter: grant_type.',
          },
        };
      if (
        form.get('grant_type') !== 'client_credentials' ||
        form.get('scope') !== 'https://api.botframework.com/.default'
      )
        return {
          status: 400,
          body: {
            error: 'invalid_scope',
            error_description: 'AADSTS70011: The provided value for the input parameter scope is not valid.',
          },
        };
      if (form.get('client_id') !== appId || form.get('client_secret') !== appPassword)
        return {
          status: 401,
          body: {
            error: 'invalid_client',
            error_description: 'AADSTS7000215: Invalid client secret provided.\r\nTrace ID: 1\r\nCorrelation ID: 2',
          },
        };
      const token = `eyJ0.${randomUUID()}`;
      issued.add(token);
      tokensIssued++;
      return {
        status: 200,
        body: { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: token },
      };
    }
    const match = /^\/v3\/conversations\/([^/]+)\/activities(?:\/([^/]+))?$/.exec(path);
    if (request.method === 'POST' && match) {
      const bearer = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
      if (!issued.has(bearer))
        return { status: 401, body: { message: 'Authorization has been denied for this request.' } };
      const activity = request.json as TeamsSent['activity'];
      if (!activity || typeof activity.type !== 'string')
        return { status: 400, body: { error: { code: 'BadArgument', message: 'Activity is required' } } };
      sent.push({
        conversationId: decodeURIComponent(match[1]!),
        replyToId: match[2] ? decodeURIComponent(match[2]) : null,
        activity,
        authorization: request.headers.authorization,
      });
      return { status: 200, body: { id: `1:${randomUUID()}` } };
    }
    return { status: 404, body: { error: { code: 'NotFound', message: path } } };
  });
  url = peer.url;
  const port = new URL(url).port;
  return Object.assign(peer, {
    appId,
    appPassword,
    botId,
    sent,
    tokensIssued: () => tokensIssued,
    config: () => ({
      app_id: appId,
      app_password: appPassword,
      token_url: `${url}/botframework.com/oauth2/v2.0/token`,
      openid_metadata_url: `${url}/v1/.well-known/openidconfiguration`,
      service_url_hosts: [`127.0.0.1:${port}`],
    }),
    async sign(claims: Record<string, unknown> = {}, options: { key?: 'known' | 'unknown'; kid?: string } = {}) {
      const key: CryptoKey = options.key === 'unknown' ? stranger.privateKey : known.privateKey;
      const now = Math.floor(Date.now() / 1000);
      const jwt = await new SignJWT({
        serviceurl: `${url}/`,
        iss: 'https://api.botframework.com',
        aud: appId,
        iat: now - 600,
        nbf: now - 600,
        exp: now + 3600,
        ...claims,
      })
        .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? 'key-1', typ: 'JWT' })
        .sign(key);
      return `Bearer ${jwt}`;
    },
    activity: (fields: Record<string, unknown> = {}) => ({
      type: 'message',
      id: `1:${randomUUID()}`,
      timestamp: new Date().toISOString(),
      serviceUrl: `${url}/`,
      channelId: 'msteams',
      from: { id: '29:1AbCdEf', name: 'Megan Bowen', aadObjectId: '8a6e0c5c-1f2b-4c43-9a0e-0d8c6c5d7e11' },
      conversation: { conversationType: 'personal', tenantId: 'tenant-1', id: 'a:1ConversationIdXyz' },
      recipient: { id: botId, name: 'Helper' },
      text: 'Where is my order?',
      textFormat: 'plain',
      locale: 'en-US',
      ...fields,
    }),
  }) as TeamsPeer;
}
