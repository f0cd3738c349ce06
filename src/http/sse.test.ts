import { afterEach, describe, expect, it, vi } from 'vitest';
import { onHeartbeat } from './sse.js';

const until = async (check: () => boolean) => {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
};

describe('onHeartbeat', () => {
  afterEach(() => vi.restoreAllMocks());

  it('beats every stream of one period from one shared timer, and stops those that left', async () => {
    const intervals = vi.spyOn(globalThis, 'setInterval');
    const counts = [0, 0, 0];
    const stops = counts.map((_, i) => onHeartbeat(7, () => (counts[i] = counts[i]! + 1)));
    expect(intervals).toHaveBeenCalledTimes(1);
    await until(() => counts.every((n) => n >= 2));
    stops[0]!();
    stops[0]!(); // twice is harmless
    const left = counts[0];
    const before = counts[1]!;
    await until(() => counts[1]! >= before + 3);
    expect(counts[0]).toBe(left);
    stops[1]!();
    stops[2]!();
    // Every stream gone: the timer is cleared, and a new stream starts a new one.
    const cleared = vi.spyOn(globalThis, 'clearInterval');
    let again = 0;
    const stop = onHeartbeat(7, () => again++);
    expect(cleared).toHaveBeenCalledTimes(0);
    expect(intervals).toHaveBeenCalledTimes(2);
    await until(() => again >= 1);
    stop();
    expect(cleared).toHaveBeenCalledTimes(1);
  });
});
