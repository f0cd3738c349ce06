import { describe, expect, it } from 'vitest';
import { checkChannel, checkConfig, checkLanguages, primaryLanguages } from './deployment-fields.js';

describe('checkChannel', () => {
  it.each(['web', 'slack', 'ms-teams', 'whats_app', '2fa'])('accepts %s', (value) => {
    expect(checkChannel(value)).toEqual({ ok: true, value });
  });
  it.each(['Web', 'we b', 'a:b', '-web', '', 'slack/teams'])('rejects "%s"', (value) => {
    expect(checkChannel(value).ok).toBe(false);
  });
});

describe('checkLanguages', () => {
  it.each([
    ['en', 'en'],
    ['en,ar', 'en,ar'],
    [' EN , ar-sa ', 'en,ar-SA'],
    ['en,en,ar', 'en,ar'],
    ['zh-Hant-TW', 'zh-Hant-TW'],
    ['en,,ar', undefined],
  ])('normalizes "%s" to %s', (raw, expected) => {
    const result = checkLanguages(raw);
    if (expected === undefined) expect(result.ok).toBe(false);
    else expect(result).toEqual({ ok: true, value: expected });
  });
  it.each(['', ' , ', 'english', 'e', 'en;ar', '12', 'en-', 'en US'])('rejects "%s"', (raw) => {
    const result = checkLanguages(raw);
    expect(result.ok).toBe(false);
  });
  it('names the bad code', () => {
    expect(checkLanguages('en,xx_yy')).toEqual({ ok: false, problem: expect.stringContaining('"xx_yy"') });
  });
});

describe('primaryLanguages', () => {
  it('keeps the primary subtags', () => expect(primaryLanguages('en-US,ar, fr')).toEqual(['en', 'ar', 'fr']));
});

describe('checkConfig', () => {
  it('accepts an object', () => expect(checkConfig('{"a":1}')).toEqual({ ok: true, value: '{"a":1}' }));
  it.each(['{', 'not json', '[1,2]', '42', 'null', '"text"'])('rejects %s', (raw) => {
    expect(checkConfig(raw).ok).toBe(false);
  });
});
