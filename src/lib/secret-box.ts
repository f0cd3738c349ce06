/**
 * Secrets encrypted at rest: AES-256-GCM with a random 96-bit nonce per value and associated data
 * that binds each value to where it is stored (so a sealed value copied to another row or key
 * does not open). The key comes from SECRET_KEY, or is generated once into DATA_DIR/secret.key.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const PREFIX = 'enc:v1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value did not open: another key, or the value (or where it is stored) was altered. */
export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

export interface SecretBox {
  /** `enc:v1:<base64url(nonce | tag | ciphertext)>`; `context` must be given again to open it. */
  seal(plain: string, context: string): string;
  /** The plain text of a sealed value; throws SecretBoxError when it does not authenticate. */
  open(sealed: string, context: string): string;
}

/** Whether a stored value is a sealed one (rather than a value written in clear). */
export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('The secret key must be 32 bytes');
  return {
    seal(plain, context) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return PREFIX + Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(sealed, context) {
      if (!isSealed(sealed)) throw new SecretBoxError('Not a sealed value');
      const bytes = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
      if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new SecretBoxError('Sealed value is truncated');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE_BYTES));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(bytes.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        throw new SecretBoxError('Sealed value does not open with this key');
      }
    },
  };
}

/** The key file's name under DATA_DIR. */
export const SECRET_KEY_FILE = 'secret.key';

/**
 * The key in force: `configuredHex` (SECRET_KEY, already validated), else the key in
 * `<dataDir>/secret.key`, created once (mode 0600, written to a temporary file and linked into
 * place, so that concurrent first starts agree on one key). `onGenerated` is told when a key was
 * just generated, so the caller can warn that it must be kept (losing it loses every secret).
 */
export function loadSecretKey(options: {
  configuredHex: string | undefined;
  dataDir: string;
  onGenerated?: (file: string) => void;
}): Buffer {
  if (options.configuredHex) return Buffer.from(options.configuredHex, 'hex');
  const file = path.join(options.dataDir, SECRET_KEY_FILE);
  const existing = readKeyFile(file);
  if (existing) return existing;
  try {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temporary, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(temporary, file);
      options.onGenerated?.(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(temporary);
    }
  } catch (error) {
    throw new Error(
      `SECRET_KEY is not set and no key could be written to ${file} (${(error as Error).message}); ` +
        'set SECRET_KEY to 32 random bytes (openssl rand -base64 32) or make DATA_DIR writable',
    );
  }
  const created = readKeyFile(file);
  if (!created) throw new Error(`The key file ${file} could not be read back`);
  return created;
}

function readKeyFile(file: string): Buffer | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`The key file ${file} cannot be read: ${(error as Error).message}`);
  }
  if (!/^[0-9a-f]{64}$/i.test(text)) {
    throw new Error(`The key file ${file} does not hold a 32-byte key as 64 hex characters`);
  }
  return Buffer.from(text, 'hex');
}
