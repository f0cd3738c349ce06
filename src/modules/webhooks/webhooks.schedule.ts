/**
 * When a failed delivery is tried again: after each wait of the schedule (by default the Standard
 * Webhooks one, src/config.ts: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — eight attempts over
 * about 27 hours), each wait spread by up to
 * ±20 % so that the retries of one outage do not arrive together, and never sooner than the
 * receiver's Retry-After (capped at a day).
 */

const JITTER = 0.2;
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * The wait before attempt `attemptsMade + 1`, or null when the schedule is spent.
 * `random` is in [0, 1).
 */
export function nextRetryDelay(
  schedule: readonly number[],
  attemptsMade: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | null {
  const base = schedule[attemptsMade - 1];
  if (base === undefined) return null;
  const spread = base * (1 + JITTER * (2 * random() - 1));
  const floor = retryAfterMs === undefined ? 0 : Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
  return Math.round(Math.max(spread, floor));
}
