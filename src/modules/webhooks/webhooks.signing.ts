/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): a secret is `whsec_` and the
 * base64 of 32 random bytes; the signature of a message is `v1,` and the base64 HMAC-SHA256, keyed
 * with those bytes, of `{webhook-id}.{webhook-timestamp}.{body}`. Several signatures (during a
 * rotation) are separated by spaces; a receiver accepts the message when one of them matches.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new signing secret, `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** `v1,<base64 signature>` of one message with one secret. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of a message; one signature per secret (current first). */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signature(secret, id, timestamp, body)).join(' '),
  };
}
