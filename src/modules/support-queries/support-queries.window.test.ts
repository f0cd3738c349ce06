import { describe, expect, it } from 'vitest';
import { classifyPriority, classifyQueryType } from './support-queries.classify.js';
import { subjectOf } from './support-queries.recorder.js';
import { checkPeriods, filterBounds, resolutionTrend, resolveWindow, volumeTrend } from './support-queries.window.js';

describe('resolveWindow', () => {
  const now = new Date('2025-06-15T12:00:00.000Z');

  it('defaults to the last N days up to now (inclusive)', () => {
    const window = resolveWindow(now, 30, undefined, undefined);
    expect(window.to.toISOString()).toBe('2025-06-15T12:00:00.001Z');
    expect(window.from.toISOString()).toBe('2025-05-16T12:00:00.001Z');
  });

  it('reads a bare end date as the whole day and a date-time as inclusive to the millisecond', () => {
    expect(resolveWindow(now, 30, '2025-01-01', '2025-01-31').to.toISOString()).toBe('2025-02-01T00:00:00.000Z');
    expect(resolveWindow(now, 30, '2025-01-01', '2025-01-31T10:00:00Z').to.toISOString()).toBe(
      '2025-01-31T10:00:00.001Z',
    );
    expect(resolveWindow(now, 30, '2025-01-01T10:00:00+02:00', undefined).from.toISOString()).toBe(
      '2025-01-01T08:00:00.000Z',
    );
  });

  it('rejects a start after the end, naming start_date', () => {
    expect(() => resolveWindow(now, 30, '2025-02-01', '2025-01-01')).toThrow(/start_date/);
    expect(() => filterBounds('2025-02-01T00:00:01Z', '2025-02-01T00:00:00Z')).toThrow(/start_date/);
    expect(filterBounds('2025-02-01', '2025-02-01')).toEqual({
      from: new Date('2025-02-01T00:00:00Z'),
      to: new Date('2025-02-02T00:00:00Z'),
    });
    expect(filterBounds(undefined, undefined)).toEqual({});
  });

  it('caps the number of periods of a series', () => {
    const long = { from: new Date('2020-01-01T00:00:00Z'), to: new Date('2025-01-01T00:00:00Z') };
    expect(() => checkPeriods(long, 'day', 'granularity')).toThrow(/granularity/);
    expect(() => checkPeriods(long, 'week', 'granularity')).not.toThrow();
    expect(() => checkPeriods(long, 'month', 'group_by')).not.toThrow();
  });
});

describe('trends', () => {
  it.each([
    [100, 111, 'increasing'],
    [100, 110, 'stable'],
    [100, 90, 'stable'],
    [100, 89, 'decreasing'],
    [0, 0, 'stable'],
    [0, 3, 'increasing'],
  ] as const)('volume %i → %i is %s', (first, second, trend) => {
    expect(volumeTrend(first, second)).toBe(trend);
  });

  it.each([
    [60, 53, 'improving'],
    [60, 54, 'stable'],
    [60, 66, 'stable'],
    [60, 67, 'worsening'],
    [null, 30, 'stable'],
    [30, null, 'stable'],
  ] as const)('resolution time %s → %s is %s', (first, second, trend) => {
    expect(resolutionTrend(first, second)).toBe(trend);
  });
});

describe('classification rules', () => {
  it.each([
    ['I was charged twice, please refund', 'billing', 'high'],
    ['Cannot log in after the password reset', 'account', 'high'],
    ['The export crashes with an error', 'bug_report', 'high'],
    ['Could you add dark mode? Just a suggestion', 'feature_request', 'low'],
    ['How do I configure the webhook?', 'technical_support', 'medium'],
    ['What are your opening hours?', 'general_inquiry', 'medium'],
    ['URGENT: outage, the widget is down for everyone', 'general_inquiry', 'urgent'],
  ] as const)('%s → %s / %s', (text, type, priority) => {
    expect(classifyQueryType(text)).toBe(type);
    expect(classifyPriority(text)).toBe(priority);
  });

  it('takes the first line as the subject, shortened on a word boundary', () => {
    expect(subjectOf('  Refund please\nmore text')).toBe('Refund please');
    const long = subjectOf(`${'word '.repeat(100)}`);
    expect(long.length).toBeLessThanOrEqual(200);
    expect(long.endsWith('…')).toBe(true);
    expect(subjectOf('   ')).toBe('(no subject)');
  });
});
