/**
 * The finishing pass over the OpenAPI document @fastify/swagger generates from the route
 * schemas: tags, servers, `security: []` on the operations that need no credential, the error
 * statuses each operation can return, JSON error bodies on streaming operations, response
 * descriptions and examples. Routes keep declaring their schemas; this file only completes
 * what a generator cannot know from one route (see docs/decisions.md, "OpenAPI document").
 */
import type { TSchema } from '@sinclair/typebox';
import type { FastifySchema } from 'fastify';
import { ERROR_NAMES, errorDescription, renderError, type ErrorShape } from './errors.js';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * The fields of a multipart/form-data body that the handler reads as a stream (so Fastify
     * does not validate it): documented as the operation's request body, never compiled.
     */
    multipartBody?: TSchema;
  }
}

type Json = Record<string, unknown>;
interface Operation extends Json {
  operationId?: string;
  tags?: string[];
  parameters?: { in: string }[];
  requestBody?: { content: Record<string, Json> };
  responses?: Record<string, Json & { content?: Record<string, Json> }>;
  security?: Record<string, string[]>[];
}

/** Every tag an operation uses, with what it groups. */
export const OPENAPI_TAGS: { name: string; description: string }[] = [
  { name: 'operations', description: 'Health, readiness, Prometheus metrics and this document; no API key.' },
  { name: 'companies', description: "The caller's company, its members, administrators and invitations." },
  { name: 'users', description: 'Users of a company (platform extension).' },
  { name: 'api-keys', description: 'API keys of the public, support and notification families (platform extension).' },
  {
    name: 'chat-tokens',
    description: 'Tokens of the chat family, optionally bound to one agent (platform extension).',
  },
  { name: 'agents', description: 'Agents: model, instructions and knowledge collections (platform extension).' },
  { name: 'regions', description: 'Regions a deployment may run in (platform extension).' },
  { name: 'deployments', description: 'Deployments of agents or workflows to channels: lifecycle and logs.' },
  {
    name: 'workflows',
    description:
      'Workflows: several agents behind one chat key, each turn routed to the step that applies (platform extension).',
  },
  { name: 'documents', description: 'Knowledge-base documents: upload, list, search and similarity check.' },
  { name: 'collections', description: 'Collections that group knowledge-base documents.' },
  { name: 'chat', description: 'Conversations with an agent, whole or streamed (server-sent events) replies.' },
  { name: 'support queries', description: 'Outcomes of support queries handled by agents, dashboard and analytics.' },
  { name: 'team notifications', description: "Agent action notifications and each user's read status." },
  {
    name: 'openai',
    description:
      "Deployed agents behind OpenAI's chat-completions and Responses protocols, and embeddings (`/v1`, chat token as Bearer key; OpenAI's error shape).",
  },
  {
    name: 'elevenlabs',
    description:
      "Speech in ElevenLabs' protocol (`/elevenlabs`, API key as `xi-api-key`; ElevenLabs' error shape), for its official SDKs.",
  },
  {
    name: 'mcp',
    description:
      'The Model Context Protocol server (`/mcp`, Streamable HTTP; API key or chat token as Bearer): knowledge search, agents, support queries and the knowledge base as resources, for any MCP client.',
  },
];

const ERROR_EXAMPLE_MESSAGES: Record<number, string> = {
  400: "body must have required property 'name'",
  401: 'Invalid or missing API key',
  403: 'This action requires the developer role',
  404: 'Resource not found: 3fa85f64-5717-4562-b3fc-2c963f66afa6',
  409: 'Cannot pause a deployment that is pending',
  413: 'Body is larger than 25 MB',
  415: 'Unsupported content type: text/plain',
  429: 'Rate limit exceeded: 60 requests per minute; retry in 12 s',
  500: 'Internal server error',
  502: 'The language model provider failed: 500 Internal Server Error',
  503: 'No language model is configured for this agent',
  504: 'The language model provider did not answer in 120 s',
};

const SUCCESS_DESCRIPTIONS: Record<string, string> = {
  '200': 'Success.',
  '201': 'Created.',
  '202': 'Accepted: the work continues in the background.',
  '204': 'Done; no content.',
};

const SHAPE_BY_SCHEMA: Record<string, ErrorShape> = {
  InsightsError: 'insights',
  ChatError: 'chat',
  DetailStatusError: 'detail-status',
  DetailError: 'detail',
  OpenAiError: 'openai',
  ElevenLabsError: 'elevenlabs',
  JsonRpcError: 'jsonrpc',
};

/** The fixed instant examples are written at, so that the document is the same on every build. */
const EXAMPLE_TIME = new Date('2025-01-15T09:30:00.000Z');

/** Route-level transform: documents a `multipartBody` as the request body. */
export function transformRouteSchema({ schema, url }: { schema: FastifySchema; url: string }) {
  if (!schema?.multipartBody) return { schema, url };
  const { multipartBody, ...rest } = schema;
  return { schema: { ...rest, body: multipartBody, consumes: ['multipart/form-data'] }, url };
}

export interface FinishOptions {
  serverUrl: string;
  /** Whether GET /metrics asks for METRICS_TOKEN. */
  metricsTokenRequired: boolean;
}

export function finishOpenApiDocument(document: Json, options: FinishOptions): Json {
  const components = (document.components ?? {}) as { schemas?: Record<string, Json> };
  const schemas = components.schemas ?? {};
  document.servers = [{ url: options.serverUrl, description: 'This instance (PUBLIC_BASE_URL)' }];
  const schemes = ((components as Json).securitySchemes ?? {}) as Json;
  if (!options.metricsTokenRequired) delete schemes.metricsToken;
  const used = new Set<string>();
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      for (const tag of operation.tags ?? []) used.add(tag);
      if (!operation.security) operation.security = [];
      if (operation.operationId === 'metrics' && options.metricsTokenRequired) {
        operation.security = [{ metricsToken: [] }];
      }
      finishResponses(path, method, operation, schemas);
      finishRequestBody(operation, schemas);
    }
  }
  const known = new Set(OPENAPI_TAGS.map((tag) => tag.name));
  document.tags = [
    ...OPENAPI_TAGS.filter((tag) => used.has(tag.name)),
    ...[...used].filter((name) => !known.has(name)).map((name) => ({ name, description: `The ${name} operations.` })),
  ];
  return document;
}

/** Error statuses an operation of this shape can return, from the ones its family declares. */
function canReturn(status: number, method: string, operation: Operation): boolean {
  const secured = (operation.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
  const pathParams = (operation.parameters ?? []).some((parameter) => parameter.in === 'path');
  const input = (operation.parameters ?? []).length > 0 || operation.requestBody !== undefined;
  const body = operation.requestBody !== undefined;
  const write = method !== 'get' && method !== 'head';
  switch (status) {
    case 400:
      return input;
    case 401:
    case 403:
    case 429:
      return secured;
    case 404:
      return pathParams || body;
    case 409:
      return write;
    case 413:
    case 415:
      return body;
    default:
      return true;
  }
}

function finishResponses(path: string, method: string, operation: Operation, schemas: Record<string, Json>) {
  const responses = operation.responses ?? {};
  for (const [code, response] of Object.entries(responses)) {
    const status = Number(code);
    if (status >= 400) {
      if (!canReturn(status, method, operation)) {
        delete responses[code];
        continue;
      }
      if (response.description === 'Default Response') response.description = errorDescription(status);
      // Errors are JSON even where the success response streams (they are sent before the stream opens).
      const content = response.content ?? {};
      for (const type of Object.keys(content)) {
        if (type !== 'application/json') {
          content['application/json'] ??= content[type]!;
          delete content[type];
        }
      }
      const media = content['application/json'];
      const ref = (media?.schema as Json | undefined)?.$ref;
      const shape = typeof ref === 'string' ? SHAPE_BY_SCHEMA[ref.split('/').pop() ?? ''] : undefined;
      if (media && shape && media.example === undefined) {
        const message = ERROR_EXAMPLE_MESSAGES[status] ?? ERROR_NAMES[status] ?? 'Error';
        const code = ERROR_NAMES[status] ?? 'Error';
        media.example = renderError(shape, { statusCode: status, code, message }, path, EXAMPLE_TIME);
      }
      if (media) addExample(media, schemas);
      if (status === 429) response.headers = RATE_LIMIT_HEADERS;
    } else {
      if (response.description === 'Default Response') response.description = SUCCESS_DESCRIPTIONS[code] ?? 'Success.';
      for (const media of Object.values(response.content ?? {})) addExample(media, schemas);
    }
  }
}

function finishRequestBody(operation: Operation, schemas: Record<string, Json>) {
  for (const media of Object.values(operation.requestBody?.content ?? {})) addExample(media, schemas);
}

function addExample(media: Json, schemas: Record<string, Json>) {
  if (media.example !== undefined || media.examples !== undefined || !media.schema) return;
  const example = sampleSchema(media.schema as Json, schemas, 0);
  if (example !== undefined) media.example = example;
}

const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
  RateLimit: {
    description: 'Limit, remaining and reset of the tightest window (IETF draft).',
    schema: { type: 'string' },
  },
};

const SAMPLE_STRINGS: Record<string, string> = {
  uuid: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  'date-time': EXAMPLE_TIME.toISOString(),
  'iso-date-time': EXAMPLE_TIME.toISOString(),
  time: '09:30:00Z',
  date: '2025-01-15',
  email: 'ada@example.com',
  uri: 'https://docs.example.com/help/returns',
  url: 'https://docs.example.com/help/returns',
  binary: '<binary>',
};

const SAMPLE_BY_NAME: [RegExp, string][] = [
  [/email/, 'ada@example.com'],
  [/(^|_)url$|website/, 'https://docs.example.com/help/returns'],
  [/(^|_)(title|name)$/, 'Returns policy'],
  [/phone/, '+44 20 7946 0000'],
  [/(^|_)(content|message|text|description|query|question)$/, 'How do I return an order?'],
  [/language/, 'en'],
];

/**
 * An example value of a schema: its own `examples`, `default`, `const` or first `enum` value,
 * else one built from its type, format and bounds (and, for strings, the property's name).
 */
export function sampleSchema(schema: Json, schemas: Record<string, Json>, depth: number, name = ''): unknown {
  if (depth > 8) return undefined;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (typeof schema.$ref === 'string') {
    const target = schemas[schema.$ref.split('/').pop() ?? ''];
    return target ? sampleSchema(target, schemas, depth + 1, name) : undefined;
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key] as Json[] | undefined;
    if (Array.isArray(options)) {
      const option = options.find((candidate) => candidate.type !== 'null') ?? options[0];
      return option ? sampleSchema(option, schemas, depth + 1, name) : undefined;
    }
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...(schema.allOf as Json[]).map((part) => sampleSchema(part, schemas, depth + 1, name)));
  }
  const type = Array.isArray(schema.type) ? schema.type.find((candidate) => candidate !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return sampleObject(schema, schemas, depth);
    case 'array': {
      const item = schema.items ? sampleSchema(schema.items as Json, schemas, depth + 1, name) : undefined;
      if (item === undefined) return [];
      const count = Math.max(1, Number(schema.minItems ?? 1));
      return schema.uniqueItems && count > 1 ? undefined : Array.from({ length: count }, () => item);
    }
    case 'string':
      return sampleString(schema, name);
    case 'integer':
    case 'number':
      return sampleNumber(schema, type);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return schema.properties ? sampleObject(schema, schemas, depth) : undefined;
  }
}

function sampleObject(schema: Json, schemas: Record<string, Json>, depth: number): Json {
  const result: Json = {};
  for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
    const value = sampleSchema(property, schemas, depth + 1, key);
    if (value !== undefined) result[key] = value;
  }
  return result;
}

function sampleString(schema: Json, name: string): string | undefined {
  const format = typeof schema.format === 'string' ? schema.format : '';
  let value = SAMPLE_STRINGS[format] ?? SAMPLE_BY_NAME.find(([pattern]) => pattern.test(name))?.[1] ?? 'string';
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) return undefined;
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? Infinity);
  if (value.length < min) value = value.padEnd(min, 'x');
  if (value.length > max) value = value.slice(0, max);
  return value;
}

function sampleNumber(schema: Json, type: 'integer' | 'number'): number {
  const minimum = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const exclusive = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined;
  const maximum = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  let value = minimum ?? (exclusive !== undefined ? exclusive + 1 : 1);
  if (maximum !== undefined && value > maximum) value = maximum;
  if (value === 0 && (maximum === undefined || maximum >= 1)) value = 1;
  return type === 'integer' ? Math.ceil(value) : value;
}
