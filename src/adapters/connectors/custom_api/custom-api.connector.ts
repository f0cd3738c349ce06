/**
 * Any REST API (custom_api): `base_url`, an auth scheme (`bearer`, `basic` from `user:password`,
 * `api_key` in the `api_key_header` header, `none`), extra headers (`headers`, whose values are
 * secrets, and `plain_headers`, whose values are not), and 1–20 declared
 * operations, each one tool: its input validated against the operation's JSON schema, path
 * placeholders URL-encoded into the template, the other parameters as the query string (GET,
 * DELETE) or the JSON body (POST, PUT, PATCH). The answer (JSON or text) is handed to the model
 * truncated. `test()` calls `GET base_url`: any answer below 500 other than 401, 403 and 429
 * means reachable with accepted credentials.
 */
import { Type } from '@sinclair/typebox';
import { ConnectorError, type ConnectorContext, type ConnectorDefinition } from '../../../ports/connectors.js';
import { HttpUrl, SecretText, Text } from '../fields.js';
import type { ConnectorHttp } from '../http.js';
import {
  DEFAULT_API_KEY_HEADER,
  VENDOR,
  buildRequest,
  refineCustomApi,
  requestHeaders,
  validatorOf,
  type CustomApiConfig,
  type CustomOperation,
} from './custom-api.request.js';

export type { CustomApiConfig } from './custom-api.request.js';

/** What the model gets of an answer at most (characters of its JSON text). */
export const MAX_MODEL_CHARS = 8000;
const HEADER_NAME = "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$";

const HeaderMap = (description: string) =>
  Type.Record(Type.String({ pattern: HEADER_NAME }), Type.String({ maxLength: 2048, pattern: '^[^\\r\\n]*$' }), {
    maxProperties: 20,
    description,
  });

const Operation = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'Tool name, lowercase with underscores.' }),
    description: Text(1000),
    method: Type.Unsafe<string>({ type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }),
    path: Type.String({
      pattern: '^/[^\\s?#]*$',
      maxLength: 1000,
      description: 'Path template under base_url, e.g. /orders/{id}.',
    }),
    parameters: Type.Optional(
      Type.Object({}, { additionalProperties: true, maxProperties: 50, description: 'JSON schema of the input.' }),
    ),
  },
  { additionalProperties: false },
);

/** The data handed to the model: the answer as is, or its text cut at MAX_MODEL_CHARS. */
export function forModel(status: number, body: unknown): Record<string, unknown> {
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? null);
  if (text.length <= MAX_MODEL_CHARS) return { status, body: body ?? null };
  return { status, truncated: true, body: `${text.slice(0, MAX_MODEL_CHARS)}…` };
}

export function customApiConnector(http: ConnectorHttp): ConnectorDefinition<CustomApiConfig> {
  function send(
    context: ConnectorContext<CustomApiConfig>,
    method: CustomOperation['method'],
    url: string,
    json?: Record<string, unknown>,
  ) {
    return http.request({
      vendor: VENDOR,
      method,
      url,
      headers: requestHeaders(context.config),
      json,
      accept: 'text',
      signal: context.signal,
    });
  }

  function toolOf(operation: CustomOperation) {
    return {
      name: operation.name,
      description: operation.description,
      input: Type.Unsafe<Record<string, unknown>>(
        operation.parameters ?? { type: 'object', properties: {}, additionalProperties: false },
      ),
      notification: 'api_call' as const,
      async run(input: Record<string, unknown>, context: ConnectorContext<CustomApiConfig>) {
        const validate = validatorOf(operation.parameters);
        if (!validate(input)) {
          const error = validate.errors?.[0];
          const where = error?.instancePath ? ` at ${error.instancePath}` : '';
          throw new ConnectorError(
            VENDOR,
            `invalid input for ${operation.name}${where}: ${error?.message ?? 'refused'}`,
            {
              retryable: false,
              code: 'invalid_input',
            },
          );
        }
        const request = buildRequest(context.config, operation, input);
        const answer = await send(context, operation.method, request.url, request.json);
        return {
          summary: `${operation.method} ${operation.name}: HTTP ${answer.status}`,
          data: forModel(answer.status, answer.body),
        };
      },
    };
  }

  return {
    type: 'custom_api',
    name: 'Custom API',
    description: 'Any REST API: one tool per declared operation.',
    listed: true,
    secretKeys: ['auth_token', 'headers.*'],
    config: Type.Object(
      {
        base_url: HttpUrl('The API root every operation path is appended to.'),
        auth_type: Type.Optional(
          Type.Unsafe<string>({
            type: 'string',
            enum: ['bearer', 'basic', 'api_key', 'none'],
            description: 'Default none.',
          }),
        ),
        auth_token: Type.Optional(SecretText('Token, user:password for basic, or API key')),
        api_key_header: Type.Optional(
          Type.String({
            pattern: HEADER_NAME,
            description: `The header carrying the key when auth_type is api_key (default ${DEFAULT_API_KEY_HEADER}).`,
          }),
        ),
        headers: Type.Optional(
          HeaderMap(
            'Extra request headers (name → value). Their values are secrets (stored encrypted, shown masked): use plain_headers for values that are not.',
          ),
        ),
        plain_headers: Type.Optional(
          HeaderMap('Extra request headers whose values are not secret (stored and shown as they are).'),
        ),
        operations: Type.Optional(Type.Array(Operation, { minItems: 1, maxItems: 20 })),
      },
      { additionalProperties: false },
    ),
    refine: refineCustomApi,
    async test(context) {
      const url = context.config.base_url;
      try {
        const answer = await send(context, 'GET', url);
        return { detail: `Connected to ${new URL(url).host} (HTTP ${answer.status})` };
      } catch (error) {
        const status = error instanceof ConnectorError ? error.status : undefined;
        if (
          status !== undefined &&
          status >= 400 &&
          status < 500 &&
          status !== 401 &&
          status !== 403 &&
          status !== 429 &&
          status !== 408
        ) {
          return { detail: `Reached ${new URL(url).host} (HTTP ${status} at the root; credentials not refused)` };
        }
        throw error;
      }
    },
    tools: (config) => (config.operations ?? []).map(toolOf),
  };
}
