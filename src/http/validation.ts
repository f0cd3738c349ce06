/**
 * Two Ajv instances: query strings, params and headers are coerced from text (they are text on
 * the wire), bodies are not (a number where a string belongs is an error, not a silent cast).
 */
import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const ISO_DATE_TIME =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?:[Tt ]([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:[Zz]|[+-]([01]\d|2[0-3]):?[0-5]\d)?)?$/;

/** An ISO 8601 date or date-time that names a real day (no 2024-06-31 rolling over to July). */
export function isIsoDateTime(value: string): boolean {
  if (!ISO_DATE_TIME.test(value)) return false;
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return false;
  return !Number.isNaN(Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value));
}

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    useDefaults: true,
    removeAdditional: true,
    allowUnionTypes: true,
    strict: false,
    ...options,
  });
  addFormats(ajv, ['uuid', 'date-time', 'date', 'email', 'uri', 'url']);
  ajv.addFormat('iso-date-time', { type: 'string', validate: isIsoDateTime });
  ajv.addKeyword({ keyword: 'x-example' });
  return ajv;
}

/**
 * A copy of a body schema in which every object schema that does not say otherwise refuses
 * unknown properties (`additionalProperties: false`). Body schemas declare it themselves, so the
 * OpenAPI document shows it; this is the net for one that forgets: an unknown key in a body is a
 * 400 naming it, never a value carried on towards the database.
 */
export function closeBodySchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closeBodySchema);
  if (!schema || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    copy[key] = key === 'properties' || key === 'patternProperties' ? mapValues(value, closeBodySchema) : value;
  }
  for (const key of ['items', 'anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else', 'additionalProperties']) {
    if (key in copy && typeof copy[key] === 'object') copy[key] = closeBodySchema(copy[key]);
  }
  const isObject = copy.type === 'object' || (copy.type === undefined && 'properties' in copy);
  if (isObject && !('additionalProperties' in copy) && !('patternProperties' in copy)) {
    copy.additionalProperties = false;
  }
  return copy;
}

function mapValues(value: unknown, map: (item: unknown) => unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, map(item)]));
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const coercing = makeAjv({ coerceTypes: 'array' });
  // Bodies: an unknown property is an error, not silently dropped (see closeBodySchema).
  const strict = makeAjv({ coerceTypes: false, removeAdditional: false });
  return ({ schema, httpPart }) =>
    httpPart === 'body' ? strict.compile(closeBodySchema(schema) as object) : coercing.compile(schema as object);
}

const PART_WORDS: Record<string, string> = {
  body: 'field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

const FORMAT_WORDS: Record<string, string> = {
  uuid: 'a UUID',
  'date-time': 'an ISO 8601 date-time',
  'iso-date-time': 'an ISO 8601 date or date-time',
  date: 'an ISO 8601 date',
  email: 'an e-mail address',
  uri: 'a URL',
  url: 'a URL',
};

/** One sentence naming the parameter and what is wrong with it. */
export function describeValidationError(part: string | undefined, errors: ErrorObject[]): string {
  const error = errors[0];
  const where = PART_WORDS[part ?? 'body'] ?? 'field';
  if (!error) return `Invalid ${where}`;
  let name = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  let problem: string;
  switch (error.keyword) {
    case 'required':
      name = [name, (error.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
      problem = 'is required';
      break;
    case 'enum':
      problem = `must be one of: ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
      break;
    case 'format': {
      const format = (error.params as { format: string }).format;
      problem = `must be ${FORMAT_WORDS[format] ?? `in ${format} format`}`;
      break;
    }
    case 'type':
      problem = `must be ${(error.params as { type: string }).type}`;
      break;
    case 'additionalProperties': {
      const unknown = [name, (error.params as { additionalProperty: string }).additionalProperty].filter(Boolean);
      return `Invalid ${part === 'body' ? 'request body' : where}: unknown ${where} '${unknown.join('.')}'`;
    }
    default:
      problem = error.message ?? 'is invalid';
  }
  if (!name) return part === 'body' ? `Invalid request body: ${problem}` : `Invalid ${where}: ${problem}`;
  return `Invalid ${where} '${name}': ${problem}`;
}
