/**
 * One AbortController for a piece of work, aborted by its caller's signal or at a time limit,
 * whichever comes first — what `AbortSignal.any([caller, AbortSignal.timeout(ms)])` means to do,
 * without its two extra signals (an AbortSignal is ≈ 0.8 KiB of heap, a timeout one 1.2, and `any`
 * 1.3 more, held as long as the work) and without its defect: `any` holds its sources weakly and
 * a timeout signal's timer holds its signal weakly, so once a garbage collection ran, a timeout
 * signal that nothing else references is collected with its timer and the combined signal never
 * times out (nodejs/node#57736; Node 20, and any Node whose `AbortSignal.any` keeps sources weakly).
 * Here the timer holds the limit, and the limit its controller, strongly until `release()`.
 * A class, its listener itself (`handleEvent`) and its timer's callback shared: no closures per
 * piece of work.
 */
export class AbortLimit {
  /** The time limit aborted the work. */
  timedOut = false;
  private readonly timer: NodeJS.Timeout;
  /** The caller's signal is watched (not the controller's own, whose owner aborts it directly). */
  private readonly watching: boolean;

  /** Aborts `controller` when `caller` aborts or after `ms`, with a `TimeoutError` as `AbortSignal.timeout` does. */
  constructor(
    private readonly controller: AbortController,
    private readonly caller: AbortSignal,
    ms: number,
  ) {
    this.timer = setTimeout(atLimit, ms, this);
    this.timer.unref();
    this.watching = caller !== controller.signal;
    if (!this.watching) return;
    if (caller.aborted) this.handleEvent();
    else caller.addEventListener('abort', this, { once: true });
  }

  /** The work's signal: give it to whatever does the work. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The caller's signal aborted the work (not the time limit). */
  get callerAborted(): boolean {
    return this.controller.signal.aborted && !this.timedOut;
  }

  /** Stops watching the caller and the clock (the work is over). */
  release(): void {
    clearTimeout(this.timer);
    if (this.watching) this.caller.removeEventListener('abort', this);
  }

  /** The caller's signal aborted (EventTarget calls a listener object's `handleEvent`). */
  handleEvent(): void {
    this.controller.abort(this.caller.reason);
  }

  /** @internal the time limit passed. */
  expire(): void {
    if (this.controller.signal.aborted) return; // aborted first by the caller: not a timeout
    this.timedOut = true;
    // The caller no longer matters: a long-lived caller's signal does not keep this limit.
    if (this.watching) this.caller.removeEventListener('abort', this);
    this.controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }
}

function atLimit(limit: AbortLimit): void {
  limit.expire();
}

/**
 * A time limit of `ms` for a piece of work, joined to its caller's signal when it has one: the
 * limit's `signal` aborts with the caller's reason when `caller` aborts, or with a `TimeoutError`
 * DOMException (as `AbortSignal.timeout`'s) after `ms`; `timedOut` says the clock did it. Use it
 * in place of `AbortSignal.any([caller, AbortSignal.timeout(ms)])` (see AbortLimit for why), and
 * `release()` it when the work ends, its body read included (try/finally): until then the
 * unref'd timer holds the limit, so nothing else need reference it.
 */
export function startTimeLimit(caller: AbortSignal | undefined, ms: number): AbortLimit {
  const controller = new AbortController();
  return new AbortLimit(controller, caller ?? controller.signal, ms);
}
