/**
 * Passwords: the policy (OWASP ASVS 5.0 §6.2: at least 12 characters, at most 128, any
 * character, no composition rules, refused when common or breached or made of the user's own
 * e-mail) and scrypt hashes in PHC form. scrypt runs on libuv's thread pool, never on the event
 * loop; at most two hashes run at once and a bounded queue waits behind them, past which the
 * request is refused with 503 and Retry-After.
 */
import { dictionary } from '@zxcvbn-ts/language-common';
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { AppErrors } from '../../http/errors.js';

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 128;

/**
 * About 49,000 passwords most seen in breach corpora, the list zxcvbn-ts ships offline
 * (@zxcvbn-ts/language-common, `passwords-common`), compared case-insensitively.
 */
const COMMON_PASSWORDS = new Set(dictionary['passwords-common'].map((word) => word.toLowerCase()));

/** Why `password` is refused, or null when it meets the policy. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `The password must have at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `The password must have at most ${PASSWORD_MAX_LENGTH} characters`;
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower) || COMMON_PASSWORDS.has(lower.replace(/[\d\W_]+$/u, ''))) {
    return 'This password is among the most common ones found in data breaches; choose another';
  }
  if (new Set(password).size < 4) return 'The password repeats too few characters; choose another';
  const local = email.toLowerCase().split('@')[0] ?? '';
  if (local.length >= 4 && lower.includes(local)) return 'The password must not contain your e-mail address';
  return null;
}

// OWASP's scrypt parameters (N=2^15, r=8, p=3: 32 MiB per hash).
const PARAMS = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_LENGTH = 32;
const MAX_RUNNING = 2;
const MAX_WAITING = 64;

let running = 0;
const waiting: (() => void)[] = [];

async function withSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_RUNNING) {
    if (waiting.length >= MAX_WAITING) {
      throw AppErrors.unavailable('Too many sign-ins are being checked at once; retry in a moment', 2);
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else {
    running += 1;
  }
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

function derive(password: string, salt: Buffer, options: ScryptOptions & { N: number; r: number; p: number }) {
  return new Promise<Buffer>((resolve, reject) =>
    scrypt(
      password.normalize('NFC'),
      salt,
      KEY_LENGTH,
      { ...options, maxmem: 256 * options.N * options.r },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

/** `$scrypt$ln=15,r=8,p=3$<salt>$<hash>` (base64 without padding). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await withSlot(() => derive(password, salt, PARAMS));
  const b64 = (buffer: Buffer) => buffer.toString('base64').replace(/=+$/, '');
  return `$scrypt$ln=${Math.log2(PARAMS.N)},r=${PARAMS.r},p=${PARAMS.p}$${b64(salt)}$${b64(key)}`;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** Whether `password` matches the stored hash; a malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = PHC.exec(stored);
  if (!match) return false;
  const [, ln, r, p, salt, hash] = match;
  const expected = Buffer.from(hash!, 'base64');
  const options = { N: 2 ** Number(ln), r: Number(r), p: Number(p) };
  const key = await withSlot(() => derive(password, Buffer.from(salt!, 'base64'), options));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

let decoy: Promise<string> | undefined;

/** A hash of a random password: checked when the e-mail is unknown, so both answers take as long. */
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(18).toString('base64'));
  return decoy;
}
