/**
 * Fuzz pass over every operation of the served OpenAPI document. For each operation a request
 * that its schema accepts is built from fixtures (a company with an agent, a deployment, a
 * conversation and a collection), then one part of it — a path parameter, a query parameter, a
 * body field, the whole body or its framing — is replaced by a generated bad value: wrong types,
 * huge sizes, NUL, odd Unicode, deep nesting, bad percent-encodings, broken multipart.
 *
 * No answer may be a 5xx, and every 4xx must be the family's error body, short enough that it
 * cannot be echoing a large input whole. Deterministic: fixed seed and a bounded number of runs.
 */
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shapeForPath, type ErrorShape } from '../src/http/errors.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chatSetup, type ChatSetup } from './helpers/chat.js';

type Method = NonNullable<InjectOptions['method']>;

const SEED = 20_260_131;
/** Requests of the random pass, on top of one per place and class of bad value (≈ 2,500). */
const RANDOM_RUNS = 300;
/** A fuzz part's time limit: generous, as the number of operations grows and machines are loaded. */
const FUZZ_TIMEOUT_MS = 300_000;
/** An error body longer than this is taken as echoing the input. */
const MAX_ERROR_BODY = 2048;

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  default?: unknown;
  examples?: unknown[];
  $ref?: string;
}

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: JsonSchema;
}

interface Operation {
  method: Method;
  path: string;
  operationId: string;
  parameters: Parameter[];
  body?: JsonSchema;
  multipart: boolean;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { operationId?: string; parameters?: Parameter[]; requestBody?: unknown }>>;
  components: { schemas: Record<string, JsonSchema> };
}

// ---------------------------------------------------------------------------------------------
// Bad values

/** Percent-encodes every byte but the unreserved ones (lone surrogates become U+FFFD). */
function encodeBytes(value: string): string {
  return [...Buffer.from(value, 'utf8')]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}

const NASTY_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFFy',
  '\uFFFE\uFFFF',
  '\u202Eevil\u202C',
  'e\u0301\u0301\u0301\u0301',
  '😀'.repeat(40),
  '\u200B\u200D\uFEFF',
  ' ',
  '',
  '%00',
  "'; select pg_sleep(0); --",
  '../../etc/passwd',
  'x'.repeat(70_000),
];

/** Classes of JSON text fragments to put where a value belongs: each is sampled for every field. */
const BAD_JSON: fc.Arbitrary<string>[] = [
  fc.constantFrom(...NASTY_STRINGS).map((value) => JSON.stringify(value)),
  fc.constantFrom('"\\u0000"', '"a\\u0000"', '"\\ud800"', '"\\udfff\\ud800"', '{"\\u0000":1}'),
  fc.string({ unit: 'binary', maxLength: 30 }).map((value) => JSON.stringify(value)),
  fc.constantFrom('1e308', '-1e308', '99999999999999999999', '9007199254740993', '-1', '0.5', '-0', '2147483648'),
  fc.constantFrom('null', 'true', 'false', '{}', '[]', '[null]', '{"a":{"b":{"c":"\\u0000"}}}', '[1,"a",{}]'),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.integer({ min: 1, max: 4 }).map((n) => `${'['.repeat(n * 2500)}${']'.repeat(n * 2500)}`),
  fc.integer({ min: 1, max: 4 }).map((n) => `${'{"a":'.repeat(n * 1000)}1${'}'.repeat(n * 1000)}`),
];

/** Classes of raw (already encoded) query or path values. */
const BAD_RAW: fc.Arbitrary<string>[] = [
  fc.constantFrom('%00', 'a%00b', '%', '%zz', 'a%2', '%C0%AF', '%ED%A0%80', '%FF%FE', '%F0%9F%98%80', '%5B%5D'),
  fc.constantFrom('Infinity', '-Infinity', 'NaN', '1e308', '-1e308', '99999999999999999999', '-1', '1.5', '0x10', ''),
  fc.integer({ min: 101, max: 3000 }).map((n) => 'a'.repeat(n)),
  fc.string({ unit: 'binary', maxLength: 20 }).map(encodeBytes),
  fc.constantFrom(...NASTY_STRINGS).map(encodeBytes),
];

// ---------------------------------------------------------------------------------------------
// Valid requests built from the schemas and the fixtures

let t: TestApp;
let setup: ChatSetup;
let doc: OpenApiDocument;
/** Identifiers of the fixtures, by the parameter or field names that carry them. */
const fixtures: Record<string, string> = {};

/** UUIDs (and unique e-mails) from a counter, so that every run sends the same requests. */
let counter = 0;
const nextUuid = () => `00000000-0000-4000-8000-${(++counter).toString(16).padStart(12, '0')}`;

function resolve(schema: JsonSchema): JsonSchema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.split('/').pop() ?? '';
  return doc.components.schemas[name] ?? {};
}

/** A value that `schema` accepts; `name` picks a fixture's identifier where one fits. */
function validValue(schema: JsonSchema, name = ''): unknown {
  const s = resolve(schema);
  const variants = s.anyOf ?? s.oneOf;
  if (variants) return validValue(variants.find((v) => v.type !== 'null') ?? variants[0]!, name);
  if (s.examples?.length) return s.examples[0];
  if (s.default !== undefined) return s.default;
  if (s.enum?.length) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type.find((v) => v !== 'null') : s.type;
  switch (type) {
    case 'string':
      if (fixtures[name]) return fixtures[name];
      switch (s.format) {
        case 'uuid':
          return nextUuid();
        case 'email':
          return `fuzz-${++counter}@example.test`;
        case 'date-time':
        case 'iso-date-time':
          return '2026-01-31T10:00:00Z';
        case 'date':
          return '2026-01-31';
        case 'uri':
        case 'url':
          return 'https://example.com/page';
        default:
          return 'fuzz'.padEnd(s.minLength ?? 1, 'z');
      }
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => validValue(s.items ?? {}, name));
    case 'object': {
      const required = new Set(s.required ?? []);
      const entries = Object.entries(s.properties ?? {}).filter(([key]) => required.has(key));
      return Object.fromEntries(entries.map(([key, value]) => [key, validValue(value, key)]));
    }
    default:
      return 'fuzz';
  }
}

/** Every property path of a body schema down to the second level (`a`, `a.b`). */
function fieldPaths(schema: JsonSchema | undefined, prefix: string[] = [], depth = 0): string[][] {
  const s = schema ? resolve(schema) : undefined;
  if (!s?.properties) return [];
  return Object.entries(s.properties).flatMap(([key, value]) => [
    [...prefix, key],
    ...(depth < 1 ? fieldPaths(value, [...prefix, key], depth + 1) : []),
  ]);
}

function operations(): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const content = (op.requestBody as { content?: Record<string, { schema: JsonSchema }> } | undefined)?.content;
      return {
        method: method.toUpperCase() as Method,
        path,
        operationId: op.operationId ?? `${method} ${path}`,
        parameters: op.parameters ?? [],
        body: content?.['application/json']?.schema ?? content?.['multipart/form-data']?.schema,
        // The upload's form is read by its handler, so the document shows no body for it.
        multipart: Boolean(content?.['multipart/form-data']) || op.operationId === 'uploadDocumentFile',
      };
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Mutations

type Mutation =
  | { kind: 'path'; name: string; raw: string }
  | { kind: 'query'; name: string; raw: string; repeat: boolean }
  | { kind: 'field'; field: string[]; json: string }
  | { kind: 'body'; contentType: string; payload: string }
  | { kind: 'multipart'; variant: MultipartVariant; name: string; value: string };

type MultipartVariant = 'field' | 'no-boundary' | 'truncated' | 'two-files' | 'bad-header' | 'no-name';

const BAD_BODIES: [string, string][] = [
  ['application/json', '{'],
  ['application/json', '{"a":'],
  ['application/json', ''],
  ['application/json', 'null'],
  ['application/json', '"\\u0000"'],
  ['application/json', '[]'],
  ['application/json', '{"__proto__":{"polluted":true}}'],
  ['application/json', '{"constructor":{"prototype":{"polluted":true}}}'],
  ['application/json', `${'['.repeat(20_000)}${']'.repeat(20_000)}`],
  ['application/json', `{"a":"${'x'.repeat(1_100_000)}"}`],
  ['application/json; charset=utf-16', '{}'],
  ['text/plain', 'hello'],
  ['application/x-www-form-urlencoded', 'a=b&c=%00'],
  ['application/xml', '<a/>'],
  ['multipart/form-data', '--x\r\n'],
  ['application/json\u0000', '{}'],
];

const MULTIPART_VARIANTS: MultipartVariant[] = [
  'field',
  'no-boundary',
  'truncated',
  'two-files',
  'bad-header',
  'no-name',
];

/**
 * The mutations of an operation, one arbitrary per place and class of bad value: each path
 * parameter, query parameter (and an unknown one) and body field with every class, every bad
 * body, every multipart framing.
 */
function mutations(op: Operation): fc.Arbitrary<Mutation>[] {
  const out: fc.Arbitrary<Mutation>[] = [];
  for (const p of op.parameters.filter((param) => param.in === 'path')) {
    for (const raw of BAD_RAW) out.push(raw.map((value) => ({ kind: 'path', name: p.name, raw: value })));
  }
  const queryParams = op.parameters.filter((param) => param.in === 'query').map((param) => param.name);
  for (const name of queryParams.length ? queryParams : ['unknown_param']) {
    for (const raw of BAD_RAW) {
      out.push(fc.tuple(raw, fc.boolean()).map(([value, repeat]) => ({ kind: 'query', name, raw: value, repeat })));
    }
  }
  if (!['POST', 'PUT', 'PATCH'].includes(op.method)) return out;
  const fields = fieldPaths(op.body);
  for (const field of fields) {
    for (const json of BAD_JSON) out.push(json.map((value) => ({ kind: 'field', field, json: value })));
  }
  for (const [contentType, payload] of BAD_BODIES) out.push(fc.constant({ kind: 'body', contentType, payload }));
  const names = [...new Set([...fields.map((field) => field[0]!), 'file', 'audio', 'extra'])];
  for (const variant of MULTIPART_VARIANTS) {
    out.push(
      fc
        .record({
          name: fc.constantFrom(...names),
          value: fc.oneof(fc.constantFrom(...NASTY_STRINGS), fc.string({ unit: 'binary', maxLength: 20 })),
        })
        .map(({ name, value }) => ({ kind: 'multipart', variant, name, value })),
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Probe {
  method: Method;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

function credentials(path: string): Record<string, string> {
  if (path.startsWith('/api/v1/chat')) return { ...setup.token };
  // The MCP endpoint: an API key as its Bearer, and the answer types its transport requires.
  if (path === '/mcp')
    return { authorization: `Bearer ${setup.tenant.apiKey}`, accept: 'application/json, text/event-stream' };
  if (path.startsWith('/api/') || path.startsWith('/customer-support') || path.startsWith('/team-notifications'))
    return { ...setup.tenant.headers };
  return {};
}

/** A multipart form of `fields` (and a small file when the operation takes one), then `variant`. */
function multipart(op: Operation, fields: Record<string, unknown>, m: Extract<Mutation, { kind: 'multipart' }>) {
  const boundary = 'fuzzboundary7MA4YWxkTrZu0gW';
  const parts: string[] = [];
  const text = (name: string, value: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const file = (name: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="a.pdf"\r\n` +
    `Content-Type: application/pdf\r\n\r\n%PDF-1.4 fuzz\r\n`;
  for (const [name, value] of Object.entries(fields)) {
    if (m.variant === 'field' && name === m.name) continue;
    parts.push(text(name, typeof value === 'string' ? value : JSON.stringify(value)));
  }
  if (op.operationId === 'uploadDocumentFile') parts.push(text('document_title', 'Fuzz'), file('file'));
  switch (m.variant) {
    case 'field':
      parts.push(text(m.name, m.value));
      break;
    case 'two-files':
      parts.push(file(m.name), file(`${m.name}2`), file('file'));
      break;
    case 'bad-header':
      parts.push(`--${boundary}\r\nContent-Disposition: form-data; name="${m.name}\r\n\r\nx\r\n`);
      break;
    case 'no-name':
      parts.push(`--${boundary}\r\nContent-Disposition: form-data\r\n\r\n${m.value}\r\n`);
      break;
    default:
      break;
  }
  let payload = `${parts.join('')}--${boundary}--\r\n`;
  if (m.variant === 'truncated') payload = payload.slice(0, Math.max(10, Math.floor(payload.length / 2)));
  const contentType = m.variant === 'no-boundary' ? 'multipart/form-data' : `multipart/form-data; boundary=${boundary}`;
  return { contentType, payload: Buffer.from(payload, 'utf8') };
}

const PLACEHOLDER = '"__fuzz_placeholder__"';

function setField(body: unknown, field: string[]): unknown {
  const root = (body && typeof body === 'object' ? structuredClone(body) : {}) as Record<string, unknown>;
  let node = root;
  for (const key of field.slice(0, -1)) {
    if (!node[key] || typeof node[key] !== 'object' || Array.isArray(node[key])) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[field.at(-1)!] = PLACEHOLDER.slice(1, -1);
  return root;
}

function buildProbe(op: Operation, m: Mutation): Probe {
  const destructive = op.method === 'DELETE';
  const pathValues = Object.fromEntries(
    op.parameters
      .filter((p) => p.in === 'path')
      .map((p) => [p.name, encodeBytes(String(destructive ? nextUuid() : validValue(p.schema, p.name)))]),
  );
  if (m.kind === 'path') pathValues[m.name] = m.raw;
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => pathValues[name] ?? 'x');

  const query: string[] = op.parameters
    .filter((p) => p.in === 'query' && p.required)
    .map((p) => `${p.name}=${encodeBytes(String(validValue(p.schema, p.name)))}`);
  if (m.kind === 'query') {
    query.push(`${m.name}=${m.raw}`);
    if (m.repeat) query.push(`${m.name}=1`);
  }
  const url = query.length ? `${path}?${query.join('&')}` : path;
  const headers = credentials(path);
  if (!['POST', 'PUT', 'PATCH'].includes(op.method)) return { method: op.method, url, headers };

  const body = op.body ? validValue(op.body) : {};
  switch (m.kind) {
    case 'field':
      return {
        method: op.method,
        url,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify(setField(body, m.field)).replace(PLACEHOLDER, m.json),
      };
    case 'body':
      return { method: op.method, url, headers: { ...headers, 'content-type': m.contentType }, payload: m.payload };
    case 'multipart': {
      const form = multipart(op, (body ?? {}) as Record<string, unknown>, m);
      return {
        method: op.method,
        url,
        headers: { ...headers, 'content-type': form.contentType },
        payload: form.payload,
      };
    }
    default:
      if (op.multipart) {
        const form = multipart(op, (body ?? {}) as Record<string, unknown>, {
          kind: 'multipart',
          variant: 'field',
          name: '__none__',
          value: '',
        });
        return {
          method: op.method,
          url,
          headers: { ...headers, 'content-type': form.contentType },
          payload: form.payload,
        };
      }
      return {
        method: op.method,
        url,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      };
  }
}

// ---------------------------------------------------------------------------------------------
// The answer

const SHAPE_KEYS: Record<ErrorShape, Record<string, 'string' | 'number' | 'object'>> = {
  insights: { error: 'string', message: 'string', statusCode: 'number', timestamp: 'string', path: 'string' },
  chat: { error: 'string', message: 'string', statusCode: 'number' },
  'detail-status': { detail: 'string', status_code: 'number' },
  detail: { detail: 'string' },
  // OpenAI's `{error: {message, type, param, code}}` (the /v1 endpoint): checked further below.
  openai: { error: 'object' },
  // ElevenLabs' `{detail: {status, message}}` (the /elevenlabs endpoint): checked further below.
  elevenlabs: { detail: 'object' },
  // MCP's JSON-RPC error `{jsonrpc, error: {code, message}, id: null}` (the /mcp endpoint): checked further below.
  jsonrpc: { jsonrpc: 'string', error: 'object', id: 'object' },
};

function describeProbe(probe: Probe): string {
  const payload = probe.payload === undefined ? '' : String(probe.payload);
  const short = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}… (${text.length} chars)` : text);
  return `${probe.method} ${short(probe.url)} [${probe.headers['content-type'] ?? ''}] ${short(payload)}`;
}

/** Throws unless the answer is below 500 and, when a 4xx, the family's error body. */
function checkAnswer(probe: Probe, res: ProbeAnswer): void {
  const what = `${describeProbe(probe)} → ${res.statusCode} ${res.body.slice(0, 500)}`;
  if (res.statusCode >= 500) throw new Error(`5xx: ${what}`);
  if (res.statusCode < 400) return;
  const shape = shapeForPath(probe.url);
  let body: unknown;
  try {
    body = res.json();
  } catch {
    throw new Error(`error body is not JSON: ${what}`);
  }
  const expected = SHAPE_KEYS[shape];
  const keys = Object.keys(body as object).sort();
  if (keys.join() !== Object.keys(expected).sort().join()) throw new Error(`not the ${shape} shape: ${what}`);
  for (const [key, type] of Object.entries(expected)) {
    if (typeof (body as Record<string, unknown>)[key] !== type) throw new Error(`${key} is not a ${type}: ${what}`);
  }
  if (shape === 'openai') {
    const inner = (body as { error: Record<string, unknown> }).error;
    const fields = Object.keys(inner).sort().join();
    if (fields !== 'code,message,param,type' || typeof inner.message !== 'string' || typeof inner.type !== 'string')
      throw new Error(`not the openai shape: ${what}`);
  }
  if (shape === 'elevenlabs') {
    const inner = (body as { detail: Record<string, unknown> }).detail;
    if (Object.keys(inner).sort().join() !== 'message,status' || typeof inner.status !== 'string')
      throw new Error(`not the elevenlabs shape: ${what}`);
  }
  if (shape === 'jsonrpc') {
    const inner = (body as { error: Record<string, unknown> }).error;
    if (Object.keys(inner).sort().join() !== 'code,message' || typeof inner.code !== 'number')
      throw new Error(`not the jsonrpc shape: ${what}`);
  }
  const status = (body as Record<string, unknown>).statusCode ?? (body as Record<string, unknown>).status_code;
  if (status !== undefined && status !== res.statusCode) throw new Error(`status in body differs: ${what}`);
  if (res.body.length > MAX_ERROR_BODY) throw new Error(`error body of ${res.body.length} characters: ${what}`);
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  t = await createTestApp({
    RATE_LIMIT_ENABLED: 'false',
    EMBEDDINGS_PROVIDER: 'none',
    STT_PROVIDER: 'none',
  });
  setup = await chatSetup(t.app, t.container);
  const headers = setup.tenant.headers;
  const conversation = await t.app.inject({
    method: 'POST',
    url: '/api/v1/chat/conversations',
    headers: setup.token,
    payload: { agent_id: setup.agentId },
  });
  const collection = await t.app.inject({
    method: 'POST',
    url: '/api/public/collections',
    headers,
    payload: { name: 'Fuzz' },
  });
  Object.assign(fixtures, {
    companyId: setup.tenant.companyId,
    company_id: setup.tenant.companyId,
    agentId: setup.agentId,
    agent_id: setup.agentId,
    deployable_id: setup.agentId,
    deploymentId: setup.deploymentId,
    agent_key: setup.agentKey,
    user_id: setup.tenant.userId,
    conversationId: conversation.json<{ id: string }>().id,
    conversation_id: conversation.json<{ id: string }>().id,
    collectionId: collection.json<{ id: string }>().id,
    collection_id: collection.json<{ id: string }>().id,
  });
  doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
});
afterAll(async () => {
  await t?.close();
});

interface ProbeAnswer {
  statusCode: number;
  body: string;
  json(): unknown;
}

/**
 * The answer to a probe, read as a stream: a request the route accepts may open a live event
 * stream (conversation and inbox events) that never ends, and is then taken as answered (its head
 * said 200 text/event-stream) and closed; any other answer is read whole.
 */
async function answer(request: InjectOptions): Promise<ProbeAnswer | null> {
  const res = await t.app.inject({ ...request, payloadAsStream: true });
  const stream = res.stream();
  if (res.statusCode < 300 && String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
    stream.destroy();
    return null;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  const body = Buffer.concat(chunks).toString('utf8');
  return { statusCode: res.statusCode, body, json: () => JSON.parse(body) as unknown };
}

async function probe(op: Operation, mutation: Mutation): Promise<string | null> {
  const request = buildProbe(op, mutation);
  const res = await answer(request);
  if (!res) return null;
  try {
    checkAnswer(request, res);
    return null;
  } catch (error) {
    return `${op.operationId}: ${(error as Error).message}`;
  }
}

describe('fuzz: every operation of /openapi.json', () => {
  it('every numeric input has a minimum and a maximum', () => {
    const unbounded: string[] = [];
    const walk = (schema: JsonSchema | undefined, where: string) => {
      const s = schema ? resolve(schema) : undefined;
      if (!s) return;
      const types = ([] as string[]).concat(s.type ?? []);
      if (
        (types.includes('integer') || types.includes('number')) &&
        (s.minimum === undefined || s.maximum === undefined)
      )
        unbounded.push(where);
      for (const [key, value] of Object.entries(s.properties ?? {})) walk(value, `${where}.${key}`);
      if (s.items) walk(s.items, `${where}[]`);
      for (const variant of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) walk(variant, where);
    };
    for (const op of operations()) {
      for (const p of op.parameters) walk(p.schema, `${op.operationId} ${p.in} ${p.name}`);
      walk(op.body, `${op.operationId} body`);
    }
    expect(unbounded).toEqual([]);
  });

  // Eight tests over every eighth operation each: the same samples (one seed sequence over all
  // operations), in parts small enough to report progress; each has a time limit far above what it
  // needs on a quiet machine, so a loaded one (or more operations) never fails it by time alone.
  const PARTS = 8;
  it.each([...Array(PARTS).keys()])(
    `answers each class of bad value in each place with no 5xx and 4xx bodies in the family shape (operations %i mod ${PARTS})`,
    { timeout: FUZZ_TIMEOUT_MS },
    async (part) => {
      const ops = operations();
      expect(ops.length).toBeGreaterThan(50);
      const failures: string[] = [];
      let seed = SEED;
      for (const [index, op] of ops.entries()) {
        for (const arbitrary of mutations(op)) {
          const [mutation] = fc.sample(arbitrary, { seed: seed++, numRuns: 1 });
          if (index % PARTS !== part) continue;
          const failure = await probe(op, mutation!);
          if (failure) failures.push(failure);
        }
      }
      expect(failures).toEqual([]);
    },
  );

  it(
    'answers random bad requests across operations with no 5xx and 4xx bodies in the family shape',
    { timeout: FUZZ_TIMEOUT_MS },
    async () => {
      const ops = operations();
      const arbitrary = fc.constantFrom(...ops).chain((op) => fc.tuple(fc.constant(op), fc.oneof(...mutations(op))));
      await fc.assert(
        fc.asyncProperty(arbitrary, async ([op, mutation]) => {
          const failure = await probe(op, mutation);
          if (failure) throw new Error(failure);
        }),
        { seed: SEED, numRuns: RANDOM_RUNS },
      );
    },
  );
});
