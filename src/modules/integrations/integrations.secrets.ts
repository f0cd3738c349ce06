/**
 * Secrets of an integration's config: sealed with the secret box before they are stored (each
 * bound to its company, integration and key), opened only to call the vendor, and masked in
 * every response as '••••' plus their last four characters (short secrets show '••••' alone).
 * Also the key check that makes a start with the wrong key fail at once.
 */
import { isSealed, SecretBoxError, type SecretBox } from '../../lib/secret-box.js';
import { createScrubber, type Scrubber } from '../../lib/scrub.js';

export const MASK = '••••';
/** Secrets shorter than this show no characters at all (the last four of a short password say too much). */
const MIN_LENGTH_FOR_HINT = 16;
const KEY_CHECK_TEXT = 'switchboard integration secrets key check';
const KEY_CHECK_CONTEXT = 'secret_key_check';

/** Where a secret is stored: its AES-GCM associated data. */
export function secretContext(companyId: string, integrationId: string, key: string): string {
  return `integration:${companyId}:${integrationId}:${key}`;
}

/** The masked form of a secret value: a string, or an object (a service-account key, hinted by its key id). */
export function maskSecret(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value
      : value && typeof value === 'object' && typeof (value as Record<string, unknown>).private_key_id === 'string'
        ? ((value as Record<string, unknown>).private_key_id as string)
        : '';
  return text.length >= MIN_LENGTH_FOR_HINT ? `${MASK}${text.slice(-4)}` : MASK;
}

/**
 * The secret values of a config: each secret key's string, and the credential parts of an object
 * (a service-account key's `private_key` and `private_key_id`, any `*secret*`, `*token*`,
 * `*password*` member other than an address).
 */
export function secretValues(clear: Record<string, unknown>, secretKeys: readonly string[]): string[] {
  const values: string[] = [];
  for (const key of secretKeys) {
    const value = clear[key];
    if (typeof value === 'string') values.push(value);
    else if (value && typeof value === 'object') {
      for (const [member, item] of Object.entries(value as Record<string, unknown>)) {
        if (typeof item === 'string' && /key|secret|token|password/i.test(member) && !/_(uri|url)$/i.test(member))
          values.push(item);
      }
    }
  }
  return values;
}

/**
 * The scrubber of one config: every secret value in every encoded form (base64 of `user:pass`,
 * URL and JSON encodings, a part of a longer base64 text …) replaced by its mask, and anything
 * shaped like a credential (`Bearer …`, `Basic …`, `user:pass@`, `?access_token=`, a JWT, a PEM
 * private key) masked too (src/lib/scrub.ts).
 */
export function secretScrubber(clear: Record<string, unknown>, secretKeys: readonly string[]): Scrubber {
  return createScrubber(secretValues(clear, secretKeys), maskSecret);
}

/** `text` with every secret of the config, in any encoding, replaced by its mask. */
export function scrubSecrets(text: string, clear: Record<string, unknown>, secretKeys: readonly string[]): string {
  return secretScrubber(clear, secretKeys)(text);
}

/** Whether a value sent by a client is a masked one (never stored as a secret). */
export function looksMasked(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith(MASK);
}

export function createIntegrationSecrets(box: SecretBox) {
  return {
    /** The config to store: every secret key present sealed (objects as their JSON text). */
    seal(config: Record<string, unknown>, secretKeys: readonly string[], where: (key: string) => string) {
      const stored: Record<string, unknown> = { ...config };
      for (const key of secretKeys) {
        const value = stored[key];
        if (value === undefined || value === null) continue;
        stored[key] = box.seal(typeof value === 'string' ? value : `json:${JSON.stringify(value)}`, where(key));
      }
      return stored;
    },

    /**
     * The config with its secrets in clear. A value that does not open (tampered with, or moved
     * from another row) is left out, so it reads as missing rather than as garbage.
     */
    open(stored: Record<string, unknown>, secretKeys: readonly string[], where: (key: string) => string) {
      const clear: Record<string, unknown> = { ...stored };
      for (const key of secretKeys) {
        const value = clear[key];
        if (!isSealed(value)) continue;
        try {
          const text = box.open(value, where(key));
          clear[key] = text.startsWith('json:') ? (JSON.parse(text.slice(5)) as unknown) : text;
        } catch (error) {
          if (!(error instanceof SecretBoxError)) throw error;
          delete clear[key];
        }
      }
      return clear;
    },

    /** The config as responses show it: secrets masked, everything else as stored. */
    mask(clear: Record<string, unknown>, secretKeys: readonly string[]) {
      const shown: Record<string, unknown> = { ...clear };
      for (const key of secretKeys)
        if (shown[key] !== undefined && shown[key] !== null) shown[key] = maskSecret(shown[key]);
      return shown;
    },

    /** The check value to store the first time the key is used. */
    sealKeyCheck: () => box.seal(KEY_CHECK_TEXT, KEY_CHECK_CONTEXT),

    /** Whether the stored check value opens with this key to the known text. */
    keyCheckOpens(sealed: string): boolean {
      try {
        return box.open(sealed, KEY_CHECK_CONTEXT) === KEY_CHECK_TEXT;
      } catch {
        return false;
      }
    },
  };
}

export type IntegrationSecrets = ReturnType<typeof createIntegrationSecrets>;

/**
 * The config an update leaves: the stored one with the keys sent on top. A key sent as null is
 * removed; a secret sent back masked (the value responses show) keeps its stored value.
 * Returns the problem when a masked value is sent that is not the stored secret's mask.
 */
export function mergeConfig(
  current: Record<string, unknown>,
  sent: Record<string, unknown>,
  secretKeys: readonly string[],
): { config: Record<string, unknown> } | { key: string; problem: string } {
  const config: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(sent)) {
    if (value === null) {
      delete config[key];
    } else if (secretKeys.includes(key) && looksMasked(value)) {
      if (current[key] === undefined || maskSecret(current[key]) !== value) {
        return {
          key,
          problem: 'is a masked value that does not match the stored secret; send the secret itself or omit it',
        };
      }
    } else {
      config[key] = value;
    }
  }
  return { config };
}
