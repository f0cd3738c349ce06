/**
 * One error type for the whole service and one renderer that writes each family's body shape
 * (interface spec, Errors part). Modules throw AppError through the factories below or their
 * own <family>.errors.ts; the renderer picks the shape from the request path.
 */
import { Type, type TSchema } from '@sinclair/typebox';

export const ERROR_NAMES: Record<number, string> = {
  400: 'ValidationError',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  408: 'RequestTimeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'UnprocessableEntity',
  429: 'TooManyRequests',
  431: 'RequestHeaderFieldsTooLarge',
  500: 'InternalServerError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid: a parameter, field or the body failed validation.',
  401: 'The credential is missing, unknown or revoked.',
  403: "The credential's role or company may not do this.",
  404: 'The resource does not exist or belongs to another company.',
  409: 'The request conflicts with the current state of the resource.',
  413: 'The body is larger than the limit of this operation.',
  415: 'The body has a content type this operation does not accept.',
  429: 'A rate limit of the credential is exhausted; retry after Retry-After seconds.',
  500: 'An unexpected error on the server.',
  502: 'An upstream provider (language model, speech service or website) failed.',
  503: 'A service this operation needs is unavailable.',
  504: 'An upstream provider did not answer in time.',
};

/** What a status means, for the response descriptions of the OpenAPI document. */
export function errorDescription(status: number): string {
  return ERROR_DESCRIPTIONS[status] ?? ERROR_NAMES[status] ?? 'Error';
}

export class AppError extends Error {
  override readonly name = 'AppError';
  constructor(
    readonly statusCode: number,
    message: string,
    /** The `error` word of the insights and chat shapes; defaults from the status. */
    readonly code: string = ERROR_NAMES[statusCode] ?? 'Error',
    /** Sent as Retry-After (a 429 or 503 that knows when to come back). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export const AppErrors = {
  badRequest: (message: string) => new AppError(400, message, 'BadRequest'),
  validation: (message: string) => new AppError(400, message, 'ValidationError'),
  unauthorized: (message: string) => new AppError(401, message),
  forbidden: (message: string) => new AppError(403, message),
  /** `kind` is the resource word: notFound('Deployment') → "Deployment not found". */
  notFound: (kind: string, id?: string) => new AppError(404, id ? `${kind} not found: ${id}` : `${kind} not found`),
  conflict: (message: string) => new AppError(409, message),
  payloadTooLarge: (message: string) => new AppError(413, message),
  unsupportedMediaType: (message: string) => new AppError(415, message),
  tooManyRequests: (message: string, retryAfterSeconds?: number) =>
    new AppError(429, message, 'TooManyRequests', retryAfterSeconds),
  unavailable: (message: string, retryAfterSeconds?: number) =>
    new AppError(503, message, 'ServiceUnavailable', retryAfterSeconds),
};

/**
 * The four body shapes of the interface spec, OpenAI's for the OpenAI-compatible `/v1`, and
 * ElevenLabs' for the ElevenLabs-compatible `/elevenlabs`.
 */
export type ErrorShape = 'insights' | 'chat' | 'detail-status' | 'detail' | 'openai' | 'elevenlabs' | 'jsonrpc';

const SHAPE_BY_PREFIX: [string, ErrorShape][] = [
  ['/customer-support', 'insights'],
  ['/team-notifications', 'insights'],
  ['/api/v1/chat', 'chat'],
  // The OpenAI-compatible endpoint: `{error: {message, type, param, code}}`, as OpenAI's clients expect.
  ['/v1', 'openai'],
  // The ElevenLabs-compatible speech: `{detail: {status, message}}`, as ElevenLabs' SDKs read it.
  ['/elevenlabs', 'elevenlabs'],
  // The MCP endpoint: a JSON-RPC error with a null id, as the MCP SDK's transport writes its own.
  ['/mcp', 'jsonrpc'],
  ['/api/public/documents', 'detail'],
  ['/api/public/collections', 'detail'],
  ['/api/public/voice-agents', 'detail'],
  ['/api/public/integrations', 'detail'],
  // deployments, companies and the extension endpoints (users, api-keys, chat-tokens, agents, regions)
  ['/api/public', 'detail-status'],
];

/** Family prefixes: an unknown route under one of them is a 404 in that family's shape. */
export const FAMILY_PREFIXES = SHAPE_BY_PREFIX.map(([prefix]) => prefix);

function matchesPrefix(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`);
}

export function shapeForPath(path: string): ErrorShape {
  for (const [prefix, shape] of SHAPE_BY_PREFIX) if (matchesPrefix(path, prefix)) return shape;
  return 'detail-status';
}

export function isFamilyPath(path: string): boolean {
  return FAMILY_PREFIXES.some((prefix) => matchesPrefix(path, prefix));
}

/** The longest name or value an error message quotes back. */
const MAX_QUOTED = 80;

/** `text`, cut to `max` characters with an ellipsis: an error message never echoes an input whole. */
export function truncateQuoted(text: string, max = MAX_QUOTED): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function renderError(
  shape: ErrorShape,
  raw: { statusCode: number; code: string; message: string },
  rawPath: string,
  now: Date = new Date(),
): Record<string, unknown> {
  // A last bound for messages that quote what was sent (Fastify's own, a long path in a 404).
  const error = { statusCode: raw.statusCode, code: raw.code, message: truncateQuoted(raw.message, 1000) };
  const path = truncateQuoted(rawPath.split('?')[0] ?? '', 300);
  switch (shape) {
    case 'insights':
      return {
        error: error.code,
        message: error.message,
        statusCode: error.statusCode,
        timestamp: now.toISOString(),
        path,
      };
    case 'chat':
      return { error: error.code, message: error.message, statusCode: error.statusCode };
    case 'detail-status':
      return { detail: error.message, status_code: error.statusCode };
    case 'detail':
      return { detail: error.message };
    case 'openai':
      return { error: openAiError(error) };
    case 'elevenlabs':
      return { detail: { status: elevenLabsStatus(error), message: error.message } };
    case 'jsonrpc':
      // -32001 is the MCP transport's "session not found"; -32000 its other HTTP-level refusals.
      return {
        jsonrpc: '2.0',
        error: { code: error.statusCode === 404 ? -32001 : -32000, message: error.message },
        id: null,
      };
  }
}

const ELEVENLABS_STATUSES: Record<number, string> = {
  400: 'invalid_request',
  401: 'invalid_api_key',
  403: 'forbidden',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
  503: 'service_unavailable',
};

/** ElevenLabs' `detail.status` word: the AppError's code when snake_case, else one for the status. */
function elevenLabsStatus(error: { statusCode: number; code: string }): string {
  if (/^[a-z][a-z0-9_]*$/.test(error.code)) return error.code;
  return ELEVENLABS_STATUSES[error.statusCode] ?? (error.statusCode >= 500 ? 'internal_error' : 'invalid_request');
}

/** OpenAI's `type` of an error by status (clients branch on status, then on `code`). */
function openAiType(status: number): string {
  if (status === 429) return 'requests';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

const OPENAI_CODES: Record<number, string> = { 401: 'invalid_api_key', 429: 'rate_limit_exceeded' };

/**
 * `{message, type, param, code}`: `code` is the AppError's when it is an OpenAI code (snake_case,
 * `model_not_found`), else OpenAI's for the status or null; `param` is the field a 400 names.
 */
function openAiError(error: { statusCode: number; code: string; message: string }) {
  const param =
    error.statusCode === 400 ? (/(?:field|parameter|header) '([^']+)'/.exec(error.message)?.[1] ?? null) : null;
  const code = /^[a-z][a-z0-9_]*$/.test(error.code) ? error.code : (OPENAI_CODES[error.statusCode] ?? null);
  return { message: error.message, type: openAiType(error.statusCode), param, code };
}

/** Response schemas of the error bodies, for route schemas and the OpenAPI document. */
export const ErrorBodies: Record<ErrorShape, TSchema> = {
  insights: Type.Object(
    {
      error: Type.String({ examples: ['ValidationError'] }),
      message: Type.String(),
      statusCode: Type.Integer(),
      timestamp: Type.String({ format: 'date-time' }),
      path: Type.String(),
    },
    { $id: 'InsightsError', title: 'Support/notifications error' },
  ),
  chat: Type.Object(
    { error: Type.String(), message: Type.String(), statusCode: Type.Integer() },
    { $id: 'ChatError', title: 'Chat error' },
  ),
  'detail-status': Type.Object(
    { detail: Type.String(), status_code: Type.Integer() },
    { $id: 'DetailStatusError', title: 'Deployments/companies error' },
  ),
  detail: Type.Object(
    { detail: Type.String() },
    { $id: 'DetailError', title: 'Documents/collections/voice/integrations error' },
  ),
  openai: Type.Object(
    {
      error: Type.Object({
        message: Type.String(),
        type: Type.String({ examples: ['invalid_request_error'] }),
        param: Type.Union([Type.String(), Type.Null()]),
        code: Type.Union([Type.String(), Type.Null()], { examples: ['model_not_found'] }),
      }),
    },
    { $id: 'OpenAiError', title: 'OpenAI-compatible error' },
  ),
  elevenlabs: Type.Object(
    {
      detail: Type.Object({
        status: Type.String({ examples: ['voice_not_found'] }),
        message: Type.String(),
      }),
    },
    { $id: 'ElevenLabsError', title: 'ElevenLabs-compatible error' },
  ),
  jsonrpc: Type.Object(
    {
      jsonrpc: Type.Literal('2.0'),
      error: Type.Object({
        code: Type.Integer({ examples: [-32000] }),
        message: Type.String(),
      }),
      id: Type.Null(),
    },
    { $id: 'JsonRpcError', title: 'MCP (JSON-RPC) error' },
  ),
};

const STANDARD_ERROR_STATUSES = [400, 401, 403, 404, 409, 413, 415, 429, 500] as const;

/**
 * `{ 400: ref, 401: ref, … }` for a route's response schema: the statuses its family can return,
 * each described (the description becomes the OpenAPI response's). The OpenAPI document keeps
 * those an operation of that route's shape can return (src/http/openapi.ts).
 */
export function errorResponses(
  shape: ErrorShape,
  statuses: readonly number[] = STANDARD_ERROR_STATUSES,
): Record<number, TSchema> {
  return Object.fromEntries(
    statuses.map((status) => [status, Type.Ref(ErrorBodies[shape], { description: errorDescription(status) })]),
  );
}
