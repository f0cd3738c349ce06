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

/**
 * A secret key `name.*` makes every value of the map `name` a secret (custom_api `headers.*`):
 * each value sealed on its own (associated data `…:name.<entry>`), masked on its own, kept when
 * sent back masked.
 */
export function secretMapOf(key: string): string | undefined {
  return key.endsWith('.*') ? key.slice(0, -2) : undefined;
}

function mapEntries(value: unknown): [string, unknown][] {
  return value && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value) : [];
}

/** The path of the first value of `config` under a secret key that is a mask (`key` or `map.entry`). */
export function findMasked(config: Record<string, unknown>, secretKeys: readonly string[]): string | undefined {
  for (const key of secretKeys) {
    const map = secretMapOf(key);
    if (!map) {
      if (looksMasked(config[key])) return key;
      continue;
    }
    for (const [name, value] of mapEntries(config[map])) if (looksMasked(value)) return `${map}.${name}`;
  }
  return undefined;
}

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
    const map = secretMapOf(key);
    if (map) {
      for (const [, value] of mapEntries(clear[map])) if (typeof value === 'string') values.push(value);
      continue;
    }
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
        const map = secretMapOf(key);
        if (map) {
          if (stored[map] === undefined || stored[map] === null) continue;
          stored[map] = Object.fromEntries(
            mapEntries(stored[map]).map(([name, value]) => [
              name,
              typeof value === 'string' && !isSealed(value) ? box.seal(value, where(`${map}.${name}`)) : value,
            ]),
          );
          continue;
        }
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
      const opened = (value: string, at: string): { text: string } | undefined => {
        try {
          return { text: box.open(value, where(at)) };
        } catch (error) {
          if (!(error instanceof SecretBoxError)) throw error;
          return undefined;
        }
      };
      for (const key of secretKeys) {
        const map = secretMapOf(key);
        if (map) {
          if (clear[map] === undefined || clear[map] === null) continue;
          const entries: [string, unknown][] = [];
          for (const [name, value] of mapEntries(clear[map])) {
            // A value stored before the map's values were secrets is clear text: it still works.
            if (!isSealed(value)) entries.push([name, value]);
            else {
              const text = opened(value, `${map}.${name}`);
              if (text) entries.push([name, text.text]);
            }
          }
          clear[map] = Object.fromEntries(entries);
          continue;
        }
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
      for (const key of secretKeys) {
        const map = secretMapOf(key);
        if (map) {
          if (shown[map] && typeof shown[map] === 'object')
            shown[map] = Object.fromEntries(mapEntries(shown[map]).map(([name, value]) => [name, maskSecret(value)]));
        } else if (shown[key] !== undefined && shown[key] !== null) shown[key] = maskSecret(shown[key]);
      }
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
  const maps = secretKeys.map(secretMapOf).filter((map): map is string => map !== undefined);
  for (const [key, value] of Object.entries(sent)) {
    if (value === null) {
      delete config[key];
    } else if (maps.includes(key) && value && typeof value === 'object' && !Array.isArray(value)) {
      // The map sent replaces the stored one; an entry sent back masked keeps its stored value.
      const stored = Object.fromEntries(mapEntries(current[key]));
      const merged: Record<string, unknown> = {};
      for (const [name, entry] of Object.entries(value as Record<string, unknown>)) {
        if (!looksMasked(entry)) merged[name] = entry;
        else if (stored[name] !== undefined && maskSecret(stored[name]) === entry) merged[name] = stored[name];
        else
          return {
            key: `${key}.${name}`,
            problem: 'is a masked value that does not match the stored secret; send the secret itself or omit it',
          };
      }
      config[key] = merged;
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
