import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AbortLimit, startTimeLimit } from './abort-limit.js';

/** A full garbage collection on demand, in a process started without `--expose-gc`. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * What `signal` was aborted with, waiting up to `patienceMs` for it with real timers; 'not aborted'
 * when it was not by then. Garbage is collected twice before the limit passes. Only `signal` is
 * kept here: whatever else the time limit needs must be held by the limit itself.
 */
async function reasonAfterCollection(signal: AbortSignal, patienceMs: number): Promise<unknown> {
  const aborted = new Promise<unknown>((resolve) =>
    signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
  );
  await sleep(0);
  collectGarbage();
  await sleep(20);
  collectGarbage();
  return Promise.race([aborted, sleep(patienceMs).then(() => 'not aborted')]);
}

describe('AbortLimit', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("aborts the work with the caller's reason when the caller aborts first", () => {
    const work = new AbortController();
    const caller = new AbortController();
    const limit = new AbortLimit(work, caller.signal, 1000);
    const reason = new Error('client disconnected');
    caller.abort(reason);
    expect(work.signal.aborted).toBe(true);
    expect(work.signal.reason).toBe(reason);
    expect(limit.callerAborted).toBe(true);
    expect(limit.timedOut).toBe(false);
    vi.advanceTimersByTime(2000);
    expect(limit.timedOut).toBe(false);
  });

  it('aborts the work with a TimeoutError at the limit', () => {
    const work = new AbortController();
    const limit = new AbortLimit(work, new AbortController().signal, 1000);
    vi.advanceTimersByTime(999);
    expect(work.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(work.signal.aborted).toBe(true);
    expect((work.signal.reason as DOMException).name).toBe('TimeoutError');
    expect(limit.timedOut).toBe(true);
    expect(limit.callerAborted).toBe(false);
  });

  it('aborts at once for a caller already aborted', () => {
    const work = new AbortController();
    const caller = new AbortController();
    caller.abort(new Error('gone'));
    const limit = new AbortLimit(work, caller.signal, 1000);
    expect(work.signal.aborted).toBe(true);
    expect(limit.callerAborted).toBe(true);
    limit.release();
  });

  it('once released, neither the caller nor the clock aborts the work', () => {
    const work = new AbortController();
    const caller = new AbortController();
    const limit = new AbortLimit(work, caller.signal, 1000);
    limit.release();
    caller.abort();
    vi.advanceTimersByTime(5000);
    expect(work.signal.aborted).toBe(false);
    expect(limit.timedOut).toBe(false);
  });

  it("watches no listener when the caller's signal is the work's own: its owner aborts it", () => {
    const work = new AbortController();
    const limit = new AbortLimit(work, work.signal, 1000);
    work.abort(new Error('abandoned'));
    expect(limit.callerAborted).toBe(true);
    limit.release();
    vi.advanceTimersByTime(5000);
    expect(limit.timedOut).toBe(false);
  });

  it('stops watching the caller once the time limit passed', () => {
    const work = new AbortController();
    const caller = new AbortController();
    const remove = vi.spyOn(caller.signal, 'removeEventListener');
    const limit = new AbortLimit(work, caller.signal, 1000);
    vi.advanceTimersByTime(1000);
    expect(remove).toHaveBeenCalledWith('abort', limit);
    caller.abort(new Error('late'));
    expect((work.signal.reason as DOMException).name).toBe('TimeoutError');
  });
});

describe('startTimeLimit', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("aborts its signal with the caller's reason", () => {
    const caller = new AbortController();
    const limit = startTimeLimit(caller.signal, 1000);
    const reason = new Error('turn cancelled');
    caller.abort(reason);
    expect(limit.signal.reason).toBe(reason);
    expect(limit.callerAborted).toBe(true);
    expect(limit.timedOut).toBe(false);
    limit.release();
  });

  it('aborts its signal with a TimeoutError at the limit, with or without a caller', () => {
    for (const caller of [new AbortController().signal, undefined]) {
      const limit = startTimeLimit(caller, 1000);
      vi.advanceTimersByTime(999);
      expect(limit.signal.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect(limit.signal.reason).toBeInstanceOf(DOMException);
      expect((limit.signal.reason as DOMException).name).toBe('TimeoutError');
      expect(limit.timedOut).toBe(true);
      expect(limit.callerAborted).toBe(false);
    }
  });

  it('is aborted at once for a caller already aborted', () => {
    const reason = new Error('gone');
    const limit = startTimeLimit(AbortSignal.abort(reason), 1000);
    expect(limit.signal.reason).toBe(reason);
    limit.release();
  });

  it('once released, neither the caller nor the clock aborts its signal', () => {
    const caller = new AbortController();
    const limit = startTimeLimit(caller.signal, 1000);
    limit.release();
    caller.abort();
    vi.advanceTimersByTime(5000);
    expect(limit.signal.aborted).toBe(false);
  });
});

describe('a time limit after a garbage collection (real timers)', () => {
  // `AbortSignal.any([caller, AbortSignal.timeout(ms)])` fails this on Node 20: the collection
  // takes the timeout signal, which only `any` (weakly) referenced, and its timer with it.
  it('still times out when only its signal is kept', async () => {
    const caller = new AbortController();
    const signal = startTimeLimit(caller.signal, 200).signal;
    const reason = await reasonAfterCollection(signal, 10_000);
    expect(reason).toBeInstanceOf(DOMException);
    expect((reason as DOMException).name).toBe('TimeoutError');
  });

  it('still times out without a caller', async () => {
    const reason = await reasonAfterCollection(startTimeLimit(undefined, 200).signal, 10_000);
    expect((reason as DOMException).name).toBe('TimeoutError');
  });
});
