/**
 * The vendors' request signatures, checked on the raw body before anything else is read:
 * Slack's v0 scheme (`X-Slack-Signature: v0=<hex HMAC-SHA256(signing_secret,
 * "v0:{X-Slack-Request-Timestamp}:{body}")>`, the timestamp within five minutes of now, as
 * @slack/bolt's verifier) and Meta's (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app_secret,
 * body)>`). Comparisons are constant-time; a refusal says why without echoing the signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack refuses requests whose timestamp is more than five minutes from now (replays). */
export const SLACK_MAX_AGE_SECONDS = 5 * 60;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export function verifySlackSignature(
  signingSecret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: Buffer,
  nowSeconds: number,
): SignatureCheck {
  const signature = one(headers['x-slack-signature']);
  const timestamp = one(headers['x-slack-request-timestamp']);
  if (!signature || !timestamp)
    return { ok: false, reason: 'X-Slack-Signature and X-Slack-Request-Timestamp are required' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'X-Slack-Request-Timestamp is not a Unix time' };
  if (Math.abs(nowSeconds - Number(timestamp)) > SLACK_MAX_AGE_SECONDS) {
    return { ok: false, reason: 'X-Slack-Request-Timestamp is more than five minutes from now (stale or replayed)' };
  }
  if (!/^v0=[0-9a-f]{64}$/.test(signature)) return { ok: false, reason: 'X-Slack-Signature is not a v0 signature' };
  const expected = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest('hex')}`;
  return sameHex(expected, signature)
    ? { ok: true }
    : { ok: false, reason: 'X-Slack-Signature does not match the body' };
}

export function verifyMetaSignature(
  appSecret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: Buffer,
): SignatureCheck {
  const signature = one(headers['x-hub-signature-256']);
  if (!signature) return { ok: false, reason: 'X-Hub-Signature-256 is required' };
  if (!/^sha256=[0-9a-f]{64}$/.test(signature))
    return { ok: false, reason: 'X-Hub-Signature-256 is not a sha256 signature' };
  const expected = `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
  return sameHex(expected, signature)
    ? { ok: true }
    : { ok: false, reason: 'X-Hub-Signature-256 does not match the body' };
}

/** Whether `given` equals `expected` (a verify token), in constant time over their hashes. */
export function sameSecret(expected: string, given: string): boolean {
  const a = createHmac('sha256', 'verify-token').update(expected).digest();
  const b = createHmac('sha256', 'verify-token').update(given).digest();
  return timingSafeEqual(a, b);
}

/** Whether a serviceUrl's host is one of `allowed` (`host`, `host:port`, or `*.domain` for any subdomain). */
export function serviceHostAllowed(serviceUrl: string, allowed: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(serviceUrl);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
  const host = url.hostname.toLowerCase();
  const withPort = url.port ? `${host}:${url.port}` : host;
  return allowed.some((raw) => {
    const entry = raw.toLowerCase();
    if (entry.startsWith('*.')) {
      const [domain, port] = entry.slice(2).split(':');
      return host.endsWith(`.${domain}`) && (port === undefined || port === url.port);
    }
    // An entry without a port allows the host on its protocol's default port only.
    return entry.includes(':') ? entry === withPort : entry === host && !url.port;
  });
}
