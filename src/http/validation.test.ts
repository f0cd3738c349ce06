import { describe, expect, it } from 'vitest';
import type { ErrorObject } from 'ajv';
import { truncateQuoted } from './errors.js';
import {
  describeUnsafeInput,
  describeValidationError,
  findUnsafeInput,
  isIsoDateTime,
  MAX_INPUT_DEPTH,
} from './validation.js';

describe('isIsoDateTime', () => {
  it.each([
    '2026-01-31',
    '2024-02-29',
    '2026-11-21T10:00:00Z',
    '2026-11-21T10:00:00.123Z',
    '2026-11-21T10:00:00+03:00',
    '2026-11-21T10:00',
  ])('accepts %s', (value) => {
    expect(isIsoDateTime(value)).toBe(true);
  });
  it.each([
    '2024-06-31',
    '2023-02-29',
    '2026-13-01',
    '2026-00-10',
    '21-11-2026',
    'yesterday',
    '2026-11-21T25:00:00Z',
    '2026-11-21T10:00:00Zjunk',
    '',
  ])('rejects %s', (value) => {
    expect(isIsoDateTime(value)).toBe(false);
  });
});

describe('findUnsafeInput and describeUnsafeInput', () => {
  const message = (part: string, value: unknown) => {
    const found = findUnsafeInput(value);
    return found && describeUnsafeInput(part, found);
  };

  it('accepts ordinary text, emoji, right-to-left marks and Buffers', () => {
    expect(findUnsafeInput({ a: 'plain', b: ['😀 e\u0301', '\u202Eabc'], c: Buffer.from([0, 0xd8]), d: 1 })).toBeNull();
  });

  it.each([
    ['body', { name: 'a\u0000b' }, "Invalid field 'name': must not contain NUL characters"],
    [
      'body',
      { items: [{ text: 'ok' }, { text: '\u0000' }] },
      "Invalid field 'items.1.text': must not contain NUL characters",
    ],
    ['querystring', { q: 'x\u0000' }, "Invalid query parameter 'q': must not contain NUL characters"],
    ['params', { id: '\u0000' }, "Invalid path parameter 'id': must not contain NUL characters"],
    ['body', 'a\u0000', 'Invalid request body: must not contain NUL characters'],
    ['body', { meta: { 'k\u0000': 1 } }, "Invalid field 'meta': a property name must not contain NUL characters"],
    ['body', { t: 'a\uD800b' }, "Invalid field 't': must not contain unpaired surrogates (invalid Unicode)"],
    ['body', { t: '\uDC00' }, "Invalid field 't': must not contain unpaired surrogates (invalid Unicode)"],
  ])('names the %s part and the field: %j', (part, value, expected) => {
    expect(message(part, value)).toBe(expected);
  });

  it(`refuses nesting past ${MAX_INPUT_DEPTH} levels without recursing`, () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    expect(findUnsafeInput(deep)?.problem).toBe(`must not be nested more than ${MAX_INPUT_DEPTH} levels deep`);
    let ok: unknown = 'leaf';
    for (let i = 0; i < MAX_INPUT_DEPTH; i += 1) ok = { a: ok };
    expect(findUnsafeInput(ok)).toBeNull();
  });

  it('quotes a long field name only in part', () => {
    const name = 'k'.repeat(500);
    expect(message('body', { [name]: '\u0000' })).toBe(
      `Invalid field '${'k'.repeat(80)}…': must not contain NUL characters`,
    );
  });
});

describe('describeValidationError for bounds', () => {
  const error = (keyword: string, params: Record<string, unknown>): ErrorObject =>
    ({ keyword, instancePath: '/skip', schemaPath: '', params }) as ErrorObject;

  it('says at most / at least with the bound', () => {
    expect(describeValidationError('querystring', [error('maximum', { comparison: '<=', limit: 2147483647 })])).toBe(
      "Invalid query parameter 'skip': must be at most 2147483647",
    );
    expect(describeValidationError('querystring', [error('minimum', { comparison: '>=', limit: 0 })])).toBe(
      "Invalid query parameter 'skip': must be at least 0",
    );
    expect(describeValidationError('querystring', [error('type', { type: 'a finite number' })])).toBe(
      "Invalid query parameter 'skip': must be a finite number",
    );
  });
});

describe('truncateQuoted', () => {
  it('keeps short text and cuts long text with an ellipsis', () => {
    expect(truncateQuoted('short')).toBe('short');
    expect(truncateQuoted('x'.repeat(200))).toBe(`${'x'.repeat(80)}…`);
    expect(truncateQuoted('abcdef', 3)).toBe('abc…');
  });
});
