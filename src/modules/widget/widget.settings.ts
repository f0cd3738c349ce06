/**
 * The widget settings of a `web` deployment (`config.widget`, DESIGN §12), pure: checked field by
 * field (each problem a sentence naming `config.widget.<field>`), defaults applied, the direction
 * derived from the language, and the origin rule (exact origins; `*` only when the instance
 * allows it).
 */

export const POSITIONS = ['bottom-right', 'bottom-left'] as const;
export const THEMES = ['auto', 'light', 'dark'] as const;

export interface WidgetSettings {
  allowed_origins: string[];
  title: string;
  greeting: string;
  color: string;
  position: (typeof POSITIONS)[number];
  placeholder: string;
  language: string;
  theme: (typeof THEMES)[number];
  /** Sealed (`enc:v1:…`) when stored; null when the deployment has none. */
  identity_secret: string | null;
}

export const DEFAULT_SETTINGS: WidgetSettings = {
  allowed_origins: [],
  title: 'Chat with us',
  greeting: '',
  color: '#2563eb',
  position: 'bottom-right',
  placeholder: 'Type your message…',
  language: 'en',
  theme: 'auto',
  identity_secret: null,
};

/** What an API response shows in place of a set identity secret (and what may be sent back to keep it). */
export const MASK = '********';

const MAX_ORIGINS = 100;
const LIMITS = { title: 80, greeting: 1000, placeholder: 120 } as const;
const SECRET_MIN = 16;
const SECRET_MAX = 256;
const COLOR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const LANGUAGE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/;
/** Primary language subtags written right to left. */
const RTL = new Set(['ar', 'arc', 'ckb', 'dv', 'fa', 'he', 'iw', 'ks', 'ku', 'ps', 'sd', 'ug', 'ur', 'yi']);
const FIELDS = new Set(Object.keys(DEFAULT_SETTINGS));

export class SettingsProblem extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(problem);
  }
}

const fail = (field: string, problem: string): never => {
  throw new SettingsProblem(`config.widget.${field}`, problem);
};

/** `ltr` or `rtl` for a language tag (Arabic, Hebrew, Persian, Urdu … are right to left). */
export function directionOf(language: string): 'ltr' | 'rtl' {
  const tag = language.toLowerCase();
  if (/-arab(?:-|$)/.test(tag)) return 'rtl';
  return RTL.has(tag.split('-')[0]!) ? 'rtl' : 'ltr';
}

/** An exact origin (`https://shop.example.com`, `http://localhost:3000`), normalised; else a problem. */
export function checkOrigin(raw: string, allowAny: boolean): string {
  if (raw === '*') {
    if (allowAny) return '*';
    return fail(
      'allowed_origins',
      '"*" would let any website use this widget; list exact origins (or set WIDGET_ALLOW_ANY_ORIGIN on the instance)',
    );
  }
  const quoted = JSON.stringify(raw.slice(0, 100));
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('allowed_origins', `${quoted} is not an origin such as https://shop.example.com`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return fail('allowed_origins', `${quoted} must use http or https`);
  if (raw.includes('*')) return fail('allowed_origins', `${quoted}: wildcards are not accepted; list each origin`);
  const bare = raw.replace(/\/$/, '').toLowerCase();
  if (url.username || url.password || url.pathname !== '/' || bare !== url.origin)
    return fail(
      'allowed_origins',
      `${quoted} is not an origin: scheme, host and port only (for example ${url.origin})`,
    );
  return url.origin;
}

function text(input: Record<string, unknown>, field: keyof typeof LIMITS, required: boolean): string | undefined {
  const value = input[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return fail(field, 'must be a string');
  const trimmed = value.trim();
  if (required && trimmed === '') return fail(field, 'must not be blank');
  if (trimmed.length > LIMITS[field]) return fail(field, `must be at most ${LIMITS[field]} characters`);
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(trimmed))
    return fail(field, 'must not contain control characters');
  return trimmed;
}

function origins(value: unknown, allowAny: boolean): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return fail('allowed_origins', 'must be an array of origins');
  if (value.length > MAX_ORIGINS) return fail('allowed_origins', `must list at most ${MAX_ORIGINS} origins`);
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string') return fail('allowed_origins', 'must hold strings');
    const origin = checkOrigin(item.trim(), allowAny);
    if (!out.includes(origin)) out.push(origin);
  }
  return out;
}

function choice<T extends readonly string[]>(input: Record<string, unknown>, field: string, values: T) {
  const value = input[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !values.includes(value)) return fail(field, `must be one of ${values.join(', ')}`);
  return value as T[number];
}

export interface SecretChange {
  /** keep: as stored; remove: none; set: this new plain secret (to seal). */
  kind: 'keep' | 'remove' | 'set';
  plain?: string;
}

function secretChange(value: unknown): SecretChange {
  if (value === undefined || value === MASK) return { kind: 'keep' };
  if (value === null) return { kind: 'remove' };
  if (typeof value !== 'string') return fail('identity_secret', 'must be a string (or null to remove it)');
  if (value.length < SECRET_MIN || value.length > SECRET_MAX)
    return fail(
      'identity_secret',
      `must be ${SECRET_MIN} to ${SECRET_MAX} characters (a random secret of your server)`,
    );
  return { kind: 'set', plain: value };
}

/**
 * The settings sent as `config.widget`, checked: defaults for what is absent, and what to do with
 * the identity secret. Unknown fields and wrong values throw a SettingsProblem.
 */
export function parseSettings(
  raw: unknown,
  allowAny: boolean,
): { settings: Omit<WidgetSettings, 'identity_secret'>; secret: SecretChange } {
  if (raw === undefined) raw = {};
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new SettingsProblem('config.widget', 'must be an object');
  const input = raw as Record<string, unknown>;
  const unknown = Object.keys(input).filter((key) => !FIELDS.has(key));
  if (unknown.length)
    throw new SettingsProblem(
      'config.widget',
      `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => `'${key.slice(0, 40)}'`).join(', ')} (known: ${[...FIELDS].join(', ')})`,
    );
  const color = input.color;
  if (color !== undefined && (typeof color !== 'string' || !COLOR.test(color)))
    fail('color', 'must be a hex colour such as #2563eb or #25e');
  const language = input.language;
  let canonical: string | undefined;
  if (language !== undefined) {
    try {
      canonical =
        typeof language === 'string' && LANGUAGE.test(language) ? Intl.getCanonicalLocales(language)[0] : undefined;
    } catch {
      canonical = undefined;
    }
    if (!canonical) fail('language', 'must be a language code such as en, ar or pt-BR');
  }
  const { identity_secret: _secret, ...defaults } = DEFAULT_SETTINGS;
  const settings = {
    ...defaults,
    ...strip({
      allowed_origins: origins(input.allowed_origins, allowAny),
      title: text(input, 'title', true),
      greeting: text(input, 'greeting', false),
      placeholder: text(input, 'placeholder', false),
      color: typeof color === 'string' ? color.toLowerCase() : undefined,
      position: choice(input, 'position', POSITIONS),
      theme: choice(input, 'theme', THEMES),
      language: canonical,
    }),
  };
  return { settings, secret: secretChange(input.identity_secret) };
}

function strip<T extends Record<string, unknown>>(value: T): Partial<{ [K in keyof T]: Exclude<T[K], undefined> }> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as never;
}

/** Stored settings (already checked) with defaults for anything a stored config lacks. */
export function storedSettings(config: Record<string, unknown>): WidgetSettings {
  const widget = config.widget;
  const stored = widget && typeof widget === 'object' && !Array.isArray(widget) ? widget : {};
  return { ...DEFAULT_SETTINGS, ...(stored as Partial<WidgetSettings>) };
}

/** Whether a browser origin may use a widget with these settings (none listed: none may). */
export function originAllowed(settings: Pick<WidgetSettings, 'allowed_origins'>, origin: string): boolean {
  return settings.allowed_origins.includes('*') || settings.allowed_origins.includes(origin.toLowerCase());
}
