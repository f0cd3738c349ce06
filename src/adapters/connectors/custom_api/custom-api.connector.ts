/** Any REST API (custom_api): config only for now; declared operations are not called yet. */
import { Type } from '@sinclair/typebox';
import { HttpUrl, SecretText, Text, unavailableConnector } from '../fields.js';

const Operation = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'Tool name, lowercase with underscores.' }),
    description: Text(1000),
    method: Type.Unsafe<string>({ type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] }),
    path: Type.String({
      pattern: '^/',
      maxLength: 1000,
      description: 'Path template under base_url, e.g. /orders/{id}.',
    }),
    parameters: Type.Optional(
      Type.Object({}, { additionalProperties: true, maxProperties: 50, description: 'JSON schema of the input.' }),
    ),
  },
  { additionalProperties: false },
);

export const customApiConnector = unavailableConnector({
  type: 'custom_api',
  name: 'Custom API',
  description: 'Any REST API: one tool per declared operation.',
  listed: true,
  secretKeys: ['auth_token'],
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
      headers: Type.Optional(
        Type.Record(Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$" }), Type.String({ maxLength: 2048 }), {
          maxProperties: 20,
          description: 'Extra request headers (name → value).',
        }),
      ),
      operations: Type.Optional(Type.Array(Operation, { maxItems: 50 })),
    },
    { additionalProperties: false },
  ),
  refine: (config) => {
    const kind = config.auth_type ?? 'none';
    if (kind !== 'none' && config.auth_token === undefined) {
      return { key: 'auth_token', problem: `is required when auth_type is ${String(kind)}` };
    }
    return undefined;
  },
});
