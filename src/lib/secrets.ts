/** Random credentials with a readable prefix, stored only as SHA-256 hashes. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type SecretPrefix = 'sk_' | 'ct_' | 'inv_' | 'ss_' | 'pw_';

export function generateSecret(prefix: SecretPrefix): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export function sameHash(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What a listing shows of a secret: its prefix and last four characters. */
export function secretHint(secret: string): string {
  const prefix = /^[a-z]+_/.exec(secret)?.[0] ?? '';
  return `${prefix}••••${secret.slice(-4)}`;
}
