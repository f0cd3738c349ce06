/**
 * Visitor tokens and identity verification of the web widget. A visitor token is a JWT (HS256,
 * signed with `jose` under a key derived from SECRET_KEY): `sub` the visitor's id, `aud` the
 * deployment (a token of one widget opens no other), `exp` (WIDGET_VISITOR_TOKEN_TTL_HOURS), and
 * for an identified customer `uid`, `name`, `email`. `user_hash` is Intercom's identity
 * verification: HMAC-SHA256 of the user id under the deployment's identity secret, in hex.
 */
import { createHash, createHmac, hkdfSync, randomUUID, timingSafeEqual } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { AppErrors } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';

const ISSUER = 'switchboard:widget';
const ALGORITHM = 'HS256';

export interface Visitor {
  visitorId: string;
  deploymentId: string;
  /** The customer's id in the company's system when identified (a valid user_hash); else null. */
  userId: string | null;
  name: string | null;
  email: string | null;
  /** The e-mail was proven too (`email_hash`): the agent's tools may use it. */
  emailVerified: boolean;
}

/** The signing key of visitor tokens: HKDF-SHA256 of the instance's secret key, for this use only. */
export function visitorTokenKey(secretKey: Buffer): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'switchboard widget visitor tokens v1', 32));
}

const audience = (deploymentId: string) => `widget:${deploymentId}`;

/**
 * The visitor id of an identified customer: the same on every device (a UUID made from the
 * deployment and the user id), so the customer finds their conversations wherever they sign in.
 */
export function customerVisitorId(deploymentId: string, userId: string): string {
  const hex = createHash('sha256').update(`${deploymentId}\u0000${userId}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Whether `hash` is HMAC-SHA256(secret, userId) in hex (compared in constant time). */
export function identityHashValid(secret: string, userId: string, hash: string): boolean {
  if (!/^[0-9a-fA-F]{64}$/.test(hash)) return false;
  const expected = createHmac('sha256', secret).update(userId, 'utf8').digest();
  return timingSafeEqual(expected, Buffer.from(hash, 'hex'));
}

export function createVisitorTokens(deps: { key: Uint8Array; ttlSeconds: number; clock: Clock }) {
  return {
    async sign(
      visitor: Omit<Visitor, 'visitorId'> & { visitorId?: string },
    ): Promise<{ token: string; visitorId: string }> {
      const visitorId = visitor.visitorId ?? randomUUID();
      const now = Math.floor(deps.clock.now().getTime() / 1000);
      const claims = visitor.userId
        ? {
            uid: visitor.userId,
            name: visitor.name,
            email: visitor.email,
            ...(visitor.emailVerified ? { ev: true } : {}),
          }
        : {};
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
        .setIssuer(ISSUER)
        .setAudience(audience(visitor.deploymentId))
        .setSubject(visitorId)
        .setIssuedAt(now)
        .setExpirationTime(now + deps.ttlSeconds)
        .sign(deps.key);
      return { token, visitorId };
    },

    /** The visitor of `Authorization: Bearer <token>` for this deployment; 401 otherwise. */
    async verify(authorization: string | undefined, deploymentId: string): Promise<Visitor> {
      const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
      if (!token)
        throw AppErrors.unauthorized(
          'Missing visitor token: send Authorization: Bearer <visitor_token> (POST /widget/v1/{key}/sessions gives one)',
        );
      try {
        const { payload } = await jwtVerify(token, deps.key, {
          algorithms: [ALGORITHM],
          issuer: ISSUER,
          audience: audience(deploymentId),
          currentDate: deps.clock.now(),
          requiredClaims: ['sub', 'exp'],
        });
        const sub = payload.sub!;
        if (!/^[0-9a-f-]{36}$/.test(sub)) throw new joseErrors.JWTInvalid('bad subject');
        const text = (value: unknown) => (typeof value === 'string' ? value : null);
        return {
          visitorId: sub,
          deploymentId,
          userId: text(payload.uid),
          name: text(payload.name),
          email: text(payload.email),
          emailVerified: payload.ev === true && typeof payload.email === 'string',
        };
      } catch (error) {
        if (error instanceof joseErrors.JWTExpired)
          throw AppErrors.unauthorized('The visitor token has expired: start a new session');
        throw AppErrors.unauthorized('Invalid visitor token for this widget: start a new session');
      }
    },
  };
}

export type VisitorTokens = ReturnType<typeof createVisitorTokens>;
