import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AbortLimit } from './abort-limit.js';

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
});
