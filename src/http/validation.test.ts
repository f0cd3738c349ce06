import { describe, expect, it } from 'vitest';
import { isIsoDateTime } from './validation.js';

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
