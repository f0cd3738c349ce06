/**
 * Checks of the free-text fields of a deployment, pure. Each returns the normalized value or a
 * problem sentence; the service turns a problem into a 400 naming the field.
 */
export type FieldCheck = { ok: true; value: string } | { ok: false; problem: string };

const CHANNEL = /^[a-z0-9][a-z0-9_-]*$/;

/** A channel is a segment of `agent:<uuid>:<channel>:<region>`, so it is one lowercase word. */
export function checkChannel(raw: string): FieldCheck {
  return CHANNEL.test(raw)
    ? { ok: true, value: raw }
    : {
        ok: false,
        problem: `must be a lowercase word of letters, digits, '-' or '_' (for example web, slack, teams), got "${raw}"`,
      };
}

const LANGUAGE_TAG = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/;

/** Comma-separated BCP 47 language codes → canonical, de-duplicated ("EN, ar-sa" → "en,ar-SA"). */
export function checkLanguages(raw: string): FieldCheck {
  const codes = raw.split(',').map((code) => code.trim());
  if (codes.every((code) => code === ''))
    return { ok: false, problem: 'must list at least one language code, for example "en,ar"' };
  const canonical: string[] = [];
  for (const code of codes) {
    let tag: string | undefined;
    try {
      tag = LANGUAGE_TAG.test(code) ? Intl.getCanonicalLocales(code)[0] : undefined;
    } catch {
      tag = undefined;
    }
    if (!tag)
      return {
        ok: false,
        problem: `"${code}" is not a language code (expected codes such as en, ar, en-US, separated by commas)`,
      };
    if (!canonical.includes(tag)) canonical.push(tag);
  }
  return { ok: true, value: canonical.join(',') };
}

/** The primary language subtags of a canonical list: "en-US,ar" → ["en", "ar"]. */
export function primaryLanguages(languages: string): string[] {
  return languages
    .split(',')
    .map((code) => code.trim().split('-')[0]!.toLowerCase())
    .filter((code) => code !== '');
}

/** Deployment config is JSON text of an object; it is stored as sent. */
export function checkConfig(raw: string): FieldCheck {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    return { ok: false, problem: `must be valid JSON text: ${(error as Error).message}` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { ok: false, problem: 'must be JSON text of an object, for example "{\\"greeting\\": \\"Hello\\"}"' };
  }
  return { ok: true, value: raw };
}

/** The channels that deliver through a vendor integration (DESIGN §12) and the kind each needs. */
export const DELIVERING_CHANNELS: Readonly<Record<string, { type: string; secrets: readonly string[] }>> = {
  slack: { type: 'slack', secrets: ['bot_token', 'signing_secret'] },
  whatsapp: { type: 'whatsapp', secrets: ['access_token', 'app_secret', 'verify_token'] },
  teams: { type: 'teams', secrets: ['app_password'] },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `config.integration_id` of a deployment's stored config when it is a UUID, else null. */
export function channelIntegrationId(config: string): string | null {
  try {
    const value = (JSON.parse(config) as { integration_id?: unknown } | null)?.integration_id;
    return typeof value === 'string' && UUID.test(value) ? value.toLowerCase() : null;
  } catch {
    return null;
  }
}
