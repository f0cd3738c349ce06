/**
 * How a custom_api operation becomes a request, and the config rules its schema cannot say:
 * path templates whose placeholders are declared parameters, parameter schemas that are bounded
 * object schemas Ajv compiles, extra headers that cannot override the transport or the
 * credentials. A call fills the template with URL-encoded values (never a dot segment), and the
 * URL must stay under base_url's origin and path (DESIGN §10: tool input never builds a URL
 * outside the integration's own root).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { ConnectorError } from '../../../ports/connectors.js';

export const VENDOR = 'Custom API';

export interface CustomOperation {
  name: string;
  description: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  parameters?: Record<string, unknown>;
}

export interface CustomApiConfig {
  base_url: string;
  auth_type?: 'bearer' | 'basic' | 'api_key' | 'none';
  auth_token?: string;
  api_key_header?: string;
  /** Extra headers whose values are secrets (sealed, masked). */
  headers?: Record<string, string>;
  /** Extra headers whose values are not secret. */
  plain_headers?: Record<string, string>;
  operations?: CustomOperation[];
}

export const DEFAULT_API_KEY_HEADER = 'X-API-Key';
const PLACEHOLDER = /\{([^{}]*)\}/g;
const PLACEHOLDER_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_SCHEMA_CHARS = 16 * 1024;
const MAX_SCHEMA_DEPTH = 8;

/** Headers an integration may not set: the transport's own, and those that carry credentials. */
export const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'authorization',
  'cookie',
]);

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false });
const compiled = new Map<string, ValidateFunction>();

/** The compiled validator of a parameters schema (cached by its text). */
export function validatorOf(schema: Record<string, unknown> | undefined): ValidateFunction {
  const effective = schema ?? { type: 'object', properties: {}, additionalProperties: false };
  const key = JSON.stringify(effective);
  let found = compiled.get(key);
  if (!found) {
    found = ajv.compile(effective);
    if (compiled.size >= 500) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, found);
  }
  return found;
}

export function placeholders(path: string): string[] {
  return [...path.matchAll(PLACEHOLDER)].map((match) => match[1]!);
}

function depth(value: unknown): number {
  if (!value || typeof value !== 'object') return 0;
  const children = Object.values(value as Record<string, unknown>).map(depth);
  return 1 + (children.length ? Math.max(...children) : 0);
}

/** The first problem of a config the schema accepted, as `{key, problem}`. */
export function refineCustomApi(config: Record<string, unknown>): { key: string; problem: string } | undefined {
  const kind = (config.auth_type as string | undefined) ?? 'none';
  if (kind !== 'none' && config.auth_token === undefined) {
    return { key: 'auth_token', problem: `is required when auth_type is ${kind}` };
  }
  if (kind === 'basic' && !String(config.auth_token).includes(':')) {
    return { key: 'auth_token', problem: 'must be user:password when auth_type is basic' };
  }
  if (config.api_key_header !== undefined && kind !== 'api_key') {
    return { key: 'api_key_header', problem: 'is only used when auth_type is api_key' };
  }
  const apiKeyHeader = String(config.api_key_header ?? DEFAULT_API_KEY_HEADER).toLowerCase();
  if (FORBIDDEN_HEADERS.has(apiKeyHeader)) {
    return { key: 'api_key_header', problem: `cannot be ${apiKeyHeader} (a transport or credential header)` };
  }
  const secretNames = new Set<string>();
  for (const map of ['headers', 'plain_headers'] as const) {
    for (const name of Object.keys((config[map] as Record<string, string> | undefined) ?? {})) {
      const lower = name.toLowerCase();
      if (FORBIDDEN_HEADERS.has(lower) || (kind === 'api_key' && lower === apiKeyHeader)) {
        return {
          key: `${map}.${name}`,
          problem: 'cannot be set here (transport and credential headers are set by the connector)',
        };
      }
      if (map === 'headers') secretNames.add(lower);
      else if (secretNames.has(lower)) {
        return { key: `${map}.${name}`, problem: 'is also in headers; a header is either secret or plain' };
      }
    }
  }
  const operations = (config.operations as CustomOperation[] | undefined) ?? [];
  const seen = new Set<string>();
  for (const [index, operation] of operations.entries()) {
    const at = `operations.${index}`;
    if (seen.has(operation.name)) return { key: `${at}.name`, problem: `duplicates the operation ${operation.name}` };
    seen.add(operation.name);
    const path = operation.path;
    const segments = path.split('/').map((segment) => segment.replace(/%2e/gi, '.'));
    if (segments.some((segment) => segment === '.' || segment === '..')) {
      return { key: `${at}.path`, problem: 'must not contain . or .. segments' };
    }
    const schema = operation.parameters;
    if (schema !== undefined) {
      if (schema.type !== 'object') return { key: `${at}.parameters`, problem: 'must be a JSON schema of type object' };
      if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS || depth(schema) > MAX_SCHEMA_DEPTH) {
        return {
          key: `${at}.parameters`,
          problem: `must be at most ${MAX_SCHEMA_CHARS} characters and ${MAX_SCHEMA_DEPTH} levels deep`,
        };
      }
      try {
        validatorOf(schema);
      } catch (error) {
        return {
          key: `${at}.parameters`,
          problem: `is not a valid JSON schema (${(error as Error).message.slice(0, 200)})`,
        };
      }
    }
    const properties = (schema?.properties ?? {}) as Record<string, unknown>;
    const required = Array.isArray(schema?.required) ? (schema.required as unknown[]) : [];
    for (const name of placeholders(path)) {
      if (!PLACEHOLDER_NAME.test(name)) {
        return { key: `${at}.path`, problem: `has an invalid placeholder {${name}}` };
      }
      if (!(name in properties) || !required.includes(name)) {
        return {
          key: `${at}.path`,
          problem: `uses {${name}}, which must be a required property of the operation's parameters`,
        };
      }
    }
  }
  return undefined;
}

function refuse(message: string): ConnectorError {
  return new ConnectorError(VENDOR, message, { retryable: false, code: 'invalid_input' });
}

/** The URL and JSON body of one call of `operation` with validated `input`. */
export function buildRequest(
  config: Pick<CustomApiConfig, 'base_url'>,
  operation: CustomOperation,
  input: Record<string, unknown>,
): { url: string; json?: Record<string, unknown> } {
  const rest: Record<string, unknown> = { ...input };
  const path = operation.path.replace(PLACEHOLDER, (_whole, name: string) => {
    const value = input[name];
    delete rest[name];
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw refuse(`the path parameter ${name} must be a string, a number or a boolean`);
    }
    const text = String(value);
    if (text === '' || text === '.' || text === '..')
      throw refuse(`the path parameter ${name} cannot be empty, . or ..`);
    return encodeURIComponent(text);
  });
  const base = new URL(config.base_url);
  const prefix = base.pathname.replace(/\/+$/, '');
  const url = new URL(`${base.origin}${prefix}${path}`);
  if (url.origin !== base.origin || (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`))) {
    throw refuse('the operation would leave the API root (base_url)');
  }
  if (url.search || url.hash) throw refuse('the path cannot carry a query or a fragment');
  const entries = Object.entries(rest).filter(([, value]) => value !== undefined);
  if (operation.method === 'GET' || operation.method === 'DELETE') {
    const query = new URLSearchParams();
    for (const [key, value] of entries) {
      for (const item of Array.isArray(value) ? value : [value]) {
        query.append(key, item !== null && typeof item === 'object' ? JSON.stringify(item) : String(item));
      }
    }
    const search = query.toString();
    return { url: search ? `${url.href}?${search}` : url.href };
  }
  return { url: url.href, json: Object.fromEntries(entries) };
}

/** The request headers: the configured extras (plain and secret, lower-cased), then the credentials. */
export function requestHeaders(config: CustomApiConfig): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...config.plain_headers, ...config.headers })) {
    if (!FORBIDDEN_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  const token = config.auth_token ?? '';
  switch (config.auth_type ?? 'none') {
    case 'bearer':
      headers.authorization = `Bearer ${token}`;
      break;
    case 'basic':
      headers.authorization = `Basic ${Buffer.from(token, 'utf8').toString('base64')}`;
      break;
    case 'api_key':
      headers[(config.api_key_header ?? DEFAULT_API_KEY_HEADER).toLowerCase()] = token;
      break;
  }
  return headers;
}
