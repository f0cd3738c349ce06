/**
 * Two Ajv instances: query strings, params and headers are coerced from text (they are text on
 * the wire), bodies are not (a number where a string belongs is an error, not a silent cast).
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { AppErrors, truncateQuoted } from './errors.js';

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
    // Infinity and NaN are not numbers of any schema (a query's `skip=Infinity` is a 400).
    strictNumbers: true,
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

/**
 * Each route's validators are compiled on the route's first request, not at start: a process
 * holds the generated code of the routes it serves only (several hundred routes' validators
 * compiled at start cost tens of MiB of idle memory); the first request of a route pays its
 * compilation once.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const coercing = makeAjv({ coerceTypes: 'array' });
  // Bodies: an unknown property is an error, not silently dropped (see closeBodySchema).
  const strict = makeAjv({ coerceTypes: false, removeAdditional: false });
  return ({ schema, httpPart }) =>
    onFirstUse(() =>
      httpPart === 'body'
        ? strict.compile(closeBodySchema(schema) as object)
        : finiteNumbersOnly(coercing.compile(schema as object)),
    );
}

/** A validator that compiles itself on its first call (its `errors` are those of the last call). */
function onFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let validate: ValidateFunction | undefined;
  const wrapped = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    validate ??= compile();
    const valid = validate(data, context) as boolean;
    wrapped.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return wrapped;
}

/**
 * Ajv coerces the text `Infinity` to a number and then checks `minimum`/`maximum` on finite
 * numbers only, so `?skip=Infinity` would pass; a coerced query, path or header value that is not
 * finite is refused here ("must be a finite number").
 */
function finiteNumbersOnly(validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    const valid = validate(data, context) as boolean;
    wrapped.errors = validate.errors;
    if (!valid || !data || typeof data !== 'object') return valid;
    for (const [key, value] of Object.entries(data)) {
      const values: unknown[] = Array.isArray(value) ? value : [value];
      if (values.some((item) => typeof item === 'number' && !Number.isFinite(item))) {
        wrapped.errors = [
          { keyword: 'type', instancePath: `/${key}`, schemaPath: '', params: { type: 'a finite number' } },
        ];
        return false;
      }
    }
    return true;
  }) as ValidateFunction;
  return Object.assign(wrapped, { schema: validate.schema, schemaEnv: validate.schemaEnv });
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
    case 'maximum':
    case 'minimum': {
      const { comparison, limit } = error.params as { comparison: string; limit: number };
      problem = `must be ${comparison === '<=' ? 'at most' : comparison === '>=' ? 'at least' : comparison} ${limit}`;
      break;
    }
    case 'additionalProperties': {
      const unknown = [name, (error.params as { additionalProperty: string }).additionalProperty].filter(Boolean);
      return `Invalid ${part === 'body' ? 'request body' : where}: unknown ${where} '${truncateQuoted(unknown.join('.'))}'`;
    }
    default:
      problem = error.message ?? 'is invalid';
  }
  if (!name) return part === 'body' ? `Invalid request body: ${problem}` : `Invalid ${where}: ${problem}`;
  return `Invalid ${where} '${truncateQuoted(name)}': ${problem}`;
}

/** Nesting deeper than this in a body, query or form is refused (no schema of ours nests past 5). */
export const MAX_INPUT_DEPTH = 32;

/** A value still to look at, and where it is: its parent's place and its key there. */
interface Place {
  value: unknown;
  key: string;
  parent: Place | null;
  depth: number;
}

/** The dotted path of a place (spelled only when a problem is found there). */
function pathOf(place: Place): string {
  const keys: string[] = [];
  for (let at: Place | null = place; at?.parent; at = at.parent) keys.push(at.key);
  return keys.reverse().join('.');
}

/**
 * The first string (or object key) in `value` that PostgreSQL could not store — a NUL character
 * or an unpaired UTF-16 surrogate — or the first place nested deeper than MAX_INPUT_DEPTH, with
 * its dotted path. Iterative, so any depth of input is safe to walk; Buffers (uploaded files) are
 * not looked into. Runs on every request: one small record per value met, no path copied.
 */
export function findUnsafeInput(value: unknown): { path: string; problem: string } | null {
  const stack: Place[] = [{ value, key: '', parent: null, depth: 0 }];
  while (stack.length > 0) {
    const place = stack.pop()!;
    const found = place.value;
    if (typeof found === 'string') {
      const problem = textProblem(found);
      if (problem) return { path: pathOf(place), problem };
      continue;
    }
    if (!found || typeof found !== 'object' || Buffer.isBuffer(found)) continue;
    if (place.depth >= MAX_INPUT_DEPTH) {
      return { path: pathOf(place), problem: `must not be nested more than ${MAX_INPUT_DEPTH} levels deep` };
    }
    for (const key of Object.keys(found)) {
      const keyProblem = textProblem(key);
      if (keyProblem) return { path: pathOf(place), problem: `a property name ${keyProblem}` };
      stack.push({ value: (found as Record<string, unknown>)[key], key, parent: place, depth: place.depth + 1 });
    }
  }
  return null;
}

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if (UNPAIRED_SURROGATE.test(text)) return 'must not contain unpaired surrogates (invalid Unicode)';
  return null;
}

/** "Invalid field 'name': must not contain NUL characters", worded like describeValidationError. */
export function describeUnsafeInput(part: string, found: { path: string; problem: string }): string {
  const where = PART_WORDS[part] ?? 'field';
  if (!found.path) return `Invalid ${part === 'body' ? 'request body' : where}: ${found.problem}`;
  return `Invalid ${where} '${truncateQuoted(found.path)}': ${found.problem}`;
}

/**
 * preValidation hook of every route: path parameters, query and body (JSON or a parsed form)
 * may not carry NUL characters or unpaired surrogates, which PostgreSQL refuses (text and jsonb),
 * nor nest deeper than MAX_INPUT_DEPTH. One pass here instead of a rule in every schema, so that
 * free-form values (metadata, settings, message history) are covered too.
 */
export async function refuseUnsafeInput(request: FastifyRequest): Promise<void> {
  const parts: [string, unknown][] = [
    ['params', request.params],
    ['querystring', request.query],
    ['body', request.body],
  ];
  for (const [part, value] of parts) {
    const found = findUnsafeInput(value);
    if (found) throw AppErrors.validation(describeUnsafeInput(part, found));
  }
}
