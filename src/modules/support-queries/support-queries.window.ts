/**
 * Reading the start_date/end_date window and the trend rules (pure functions, unit-tested).
 * A window is half-open [from, to): start_date is inclusive, end_date is inclusive to the
 * millisecond, and a bare end date (`2026-01-31`) covers that whole day.
 */
import { AppErrors } from '../../http/errors.js';
import { parseIsoDate } from '../../http/schemas.js';
import type { Window } from './support-queries.read.js';
import type { Granularity } from './support-queries.schemas.js';

const DAY_MS = 86_400_000;
const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Most periods one response may carry (day granularity: about 2¾ years). */
export const MAX_PERIODS = 1000;
const PERIOD_DAYS: Record<Granularity, number> = { day: 1, week: 7, month: 28 };

/** Upper bound (exclusive) of an end_date value. */
function endBound(value: string): Date {
  const at = parseIsoDate(value);
  return new Date(at.getTime() + (BARE_DATE.test(value) ? DAY_MS : 1));
}

export function checkOrder(start: string | undefined, end: string | undefined): void {
  if (start && end && parseIsoDate(start).getTime() > parseIsoDate(end).getTime()) {
    throw AppErrors.validation(`Invalid query parameter 'start_date': ${start} is after end_date ${end}`);
  }
}

/** The list filter's bounds: only those given. */
export function filterBounds(start: string | undefined, end: string | undefined): { from?: Date; to?: Date } {
  checkOrder(start, end);
  return { ...(start ? { from: parseIsoDate(start) } : {}), ...(end ? { to: endBound(end) } : {}) };
}

/** The aggregate window: end defaults to now, start to `defaultDays` before the end. */
export function resolveWindow(
  now: Date,
  defaultDays: number,
  start: string | undefined,
  end: string | undefined,
): Window {
  checkOrder(start, end);
  const to = end ? endBound(end) : new Date(now.getTime() + 1);
  const from = start ? parseIsoDate(start) : new Date(to.getTime() - defaultDays * DAY_MS);
  return { from, to };
}

/** 400 naming `parameter` when the window would have more than MAX_PERIODS periods. */
export function checkPeriods(window: Window, granularity: Granularity, parameter: string): void {
  const periods = (window.to.getTime() - window.from.getTime()) / (PERIOD_DAYS[granularity] * DAY_MS);
  if (periods > MAX_PERIODS) {
    throw AppErrors.validation(
      `Invalid query parameter '${parameter}': a ${granularity} series of this window would exceed ${MAX_PERIODS} periods; choose a coarser ${parameter} or a shorter window`,
    );
  }
}

const TREND_BAND = 0.1;

/** Second half against the first: up or down by more than 10 % of the first half, else stable. */
export function volumeTrend(first: number, second: number): 'increasing' | 'decreasing' | 'stable' {
  if (first === 0) return second > 0 ? 'increasing' : 'stable';
  if (second > first * (1 + TREND_BAND)) return 'increasing';
  if (second < first * (1 - TREND_BAND)) return 'decreasing';
  return 'stable';
}

/** Resolution time falling by more than 10 % is improving, rising by more than 10 % worsening; no data either side is stable. */
export function resolutionTrend(first: number | null, second: number | null): 'improving' | 'worsening' | 'stable' {
  if (first === null || second === null || first === 0) return 'stable';
  if (second < first * (1 - TREND_BAND)) return 'improving';
  if (second > first * (1 + TREND_BAND)) return 'worsening';
  return 'stable';
}
