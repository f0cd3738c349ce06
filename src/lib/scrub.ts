/**
 * Scrubbing credentials out of text a third party wrote (a vendor's answer, its error body): the
 * known secret values in every form they travel in, and credentials recognisable by their shape.
 *
 * Forms of a known secret: as is, JSON-escaped, URL-encoded (path, component and form encoding,
 * upper- and lower-case hex), base64 and base64url (padded or not), and the part of its base64
 * that survives inside a longer base64 text at any of the three byte alignments — so the
 * password in `Basic base64(user:password)`, in SMTP `AUTH PLAIN base64(\0user\0password)` or in
 * any encoded blob is found whatever precedes it. A `user:password` secret also has its password
 * scrubbed alone (all forms) and its user name in its encoded forms (the bare name is an
 * identifier, not a secret).
 *
 * Shapes scrubbed whatever their value: `Basic`/`Bearer`/`Token` credentials, `user:password@` in
 * URLs, credential-named query parameters (`access_token=`, `api_key=`, `password=` …), signed
 * JWTs and PEM private keys.
 */

export const SCRUB_MASK = '••••';

/** Secrets shorter than this are not searched for (they would match ordinary words). */
const MIN_SECRET = 4;
/** The shortest base64 fragment searched for inside longer base64 text. */
const MIN_FRAGMENT = 4;

function base64Fragments(bytes: Buffer, alphabet: 'base64' | 'base64url'): string[] {
  const fragments: string[] = [];
  for (let shift = 0; shift < 3; shift += 1) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString(alphabet);
    // Characters whose six bits all come from the secret's bytes.
    const first = Math.ceil((8 * shift) / 6);
    const end = Math.floor((8 * (shift + bytes.length)) / 6);
    const fragment = encoded.slice(first, end);
    if (fragment.length >= MIN_FRAGMENT) fragments.push(fragment);
  }
  return fragments;
}

function lowerHex(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
}

/** Every encoded form of `secret` (the raw text included when `raw`). */
export function derivedForms(secret: string, raw = true): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const component = encodeURIComponent(secret);
  const form = new URLSearchParams({ x: secret }).toString().slice(2);
  const forms = [
    JSON.stringify(secret).slice(1, -1),
    component,
    lowerHex(component),
    encodeURI(secret),
    form,
    lowerHex(form),
    bytes.toString('base64'),
    bytes.toString('base64url'),
    ...base64Fragments(bytes, 'base64'),
    ...base64Fragments(bytes, 'base64url'),
  ];
  if (raw) forms.push(secret);
  return forms.filter((item) => item.length >= MIN_SECRET && (raw || item !== secret));
}

/** All the strings to search for, for a list of secret values (`user:password` split as well). */
export function secretForms(secrets: Iterable<string>): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET) continue;
    for (const form of derivedForms(secret)) forms.add(form);
    const colon = secret.indexOf(':');
    if (colon > 0) {
      const password = secret.slice(colon + 1);
      if (password.length >= MIN_SECRET) for (const form of derivedForms(password)) forms.add(form);
      const user = secret.slice(0, colon);
      if (user.length >= MIN_SECRET) for (const form of derivedForms(user, false)) forms.add(form);
    }
  }
  // Longest first, so a form is replaced whole before a shorter one inside it.
  return [...forms].sort((a, b) => b.length - a.length);
}

const AUTH_SCHEME = /\b(Basic|Bearer|Token|Digest|Bot|OAuth)(\s+|%20|\+)([A-Za-z0-9\-._~+/]{8,}=*)/gi;
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^/\s:@"'<>]*):([^@\s/"'<>]+)@/gi;
const CREDENTIAL_QUERY =
  /([?&;]|\b)((?:access_token|refresh_token|id_token|client_secret|api_?key|apikey|api-key|password|passwd|secret|assertion|signature|sig|token)=)([^&#\s"'<>]+)/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}/g;
const PEM = /-----BEGIN ([A-Z ]*)PRIVATE KEY-----(?:[\s\S]*?-----END \1PRIVATE KEY-----|[A-Za-z0-9+/=\s\\]*)/g;

/** A credential of an auth scheme looks like one: a digit or a symbol in it, or long. */
function looksLikeCredential(token: string): boolean {
  return /[0-9+/=_.~-]/.test(token) || token.length >= 24;
}

/** `text` with credential shapes masked (no known value needed). */
export function scrubShapes(text: string): string {
  return text
    .replace(PEM, `-----BEGIN $1PRIVATE KEY-----${SCRUB_MASK}`)
    .replace(JWT, SCRUB_MASK)
    .replace(AUTH_SCHEME, (whole, scheme: string, space: string, token: string) =>
      looksLikeCredential(token) ? `${scheme}${space}${SCRUB_MASK}` : whole,
    )
    .replace(URL_USERINFO, (_whole, scheme: string, user: string) => `${scheme}${user}:${SCRUB_MASK}@`)
    .replace(CREDENTIAL_QUERY, (_whole, before: string, key: string) => `${before}${key}${SCRUB_MASK}`);
}

export type Scrubber = (text: string) => string;

/**
 * A scrubber for `secrets`: each of their forms replaced by `mask(secret)` (default '••••'), then
 * the credential shapes.
 */
export function createScrubber(
  secrets: Iterable<string>,
  mask: (secret: string) => string = () => SCRUB_MASK,
): Scrubber {
  const list = [...secrets].filter((secret) => typeof secret === 'string' && secret.length >= MIN_SECRET);
  const replacements: [string, string][] = [];
  const seen = new Set<string>();
  for (const secret of list) {
    for (const form of secretForms([secret])) {
      if (seen.has(form)) continue;
      seen.add(form);
      replacements.push([form, mask(secret)]);
    }
  }
  replacements.sort((a, b) => b[0].length - a[0].length);
  return (text: string) => {
    let result = text;
    for (const [form, replacement] of replacements) {
      if (result.includes(form)) result = result.split(form).join(replacement);
    }
    return scrubShapes(result);
  };
}
