/**
 * Config fields shared by connectors: bounded strings, secrets, the optional `base_url` that
 * replaces a vendor's API root (regional, self-hosted or proxy endpoints, test peers).
 */
import { Type, type SchemaOptions } from '@sinclair/typebox';

/** A non-empty string of at most `max` characters. */
export const Text = (max: number, options: SchemaOptions = {}) =>
  Type.String({ minLength: 1, maxLength: max, ...options });

/** A credential string: encrypted at rest, masked in responses (the definition lists it in secretKeys). */
export const SecretText = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 4096,
    description: `${description} (secret: stored encrypted, shown masked)`,
  });

/** An http(s) address. */
export const HttpUrl = (description: string) =>
  Type.String({ minLength: 8, maxLength: 2048, pattern: '^https?://[^\\s/?#]+[^\\s]*$', description });

/** The optional replacement of the vendor's API root; `root` is the production default. */
export const BaseUrl = (root: string) =>
  Type.Optional(HttpUrl(`Replaces the vendor API root ${root} (regional, self-hosted or proxy endpoints).`));

export const Email = (description: string) => Type.String({ format: 'email', maxLength: 320, description });

/** A Google service-account key (the JSON file Google issues), for the JWT-bearer grant. */
export const ServiceAccountCredentials = Type.Object(
  {
    type: Type.Optional(Type.Literal('service_account')),
    client_email: Email('The service account e-mail.'),
    private_key: Type.String({ minLength: 1, maxLength: 8192, description: 'PEM-encoded RSA private key.' }),
    private_key_id: Type.Optional(Text(200)),
    token_uri: Type.Optional(HttpUrl('OAuth 2.0 token endpoint (default https://oauth2.googleapis.com/token).')),
    project_id: Type.Optional(Text(200)),
    client_id: Type.Optional(Text(200)),
  },
  {
    additionalProperties: Type.String({ maxLength: 2048 }),
    maxProperties: 20,
    description: 'Service-account key JSON (secret: stored encrypted, shown masked)',
  },
);

/** `base_url` without its trailing slashes, else the vendor's root. */
export function apiRoot(config: { base_url?: string }, fallback: string): string {
  return (config.base_url ?? fallback).replace(/\/+$/, '');
}
