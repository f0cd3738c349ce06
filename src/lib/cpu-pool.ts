/**
 * The CPU pool: CPU-heavy work (speech synthesis and encoding, document parsing, OCR, resampling)
 * runs here, on a bounded set of worker threads, never on the event loop. Each kind of job has its
 * own bounded queue and its own cap on running jobs; a job that finds its kind's queue full is
 * refused at once with CpuBusyError (the HTTP layer answers 503 with `Retry-After`), so a burst
 * of one kind neither grows memory without bound nor starves the other kinds.
 *
 * A job is a function exported by a module file (`cpuJobModule(import.meta.url, './x.job')`),
 * loaded once per worker; it gets its input (structured clone, transferables moved) and a
 * context to emit chunks as they are ready (streamed answers) and to see cancellation (a shared
 * flag, readable while the job runs synchronously). Workers start on first use (all of them, and
 * warm up while idle, once a kind with a warm-up is used), run compiled JS from dist and
 * TypeScript under tsx/vitest, are replaced when they die or overrun their kind's time limit, and
 * never hold the process open. API and usage: docs/architecture.md.
 */
import type { Transferable, Worker } from 'node:worker_threads';
import { defaultThreads, newWorker } from './cpu-worker-start.js';

export { cpuJobModule, defaultThreads, THREAD_PRIORITIES } from './cpu-worker-start.js';

/** A job of the pool: `name`, exported by `module`, of one kind. I: input, O: result, C: chunk. */
export interface CpuJob<I, O, C = never> {
  kind: string;
  /** The file URL of the module that exports the job's function (see cpuJobModule). */
  module: string;
  name: string;
  /** Turns a failure thrown in the worker back into the caller's error type (by its name). */
  reviveError?: (failure: CpuJobFailure) => Error;
  /** Phantom fields that carry the types. */
  readonly types?: { input: I; output: O; chunk: C };
}

/** What the job function gets beside its input (in the worker). */
export interface CpuJobContext<C> {
  /** Sends a chunk to the caller now (moved, not copied, for the transferables listed). */
  emit(chunk: C, transfer?: Transferable[]): void;
  /** Whether the caller gave up (its signal aborted); the job should stop at its next step. */
  cancelled(): boolean;
  /** Throws when the caller gave up. */
  throwIfCancelled(): void;
}

export type CpuJobFunction<I, O, C = never> = (input: I, context: CpuJobContext<C>) => O | Promise<O>;

/** An error thrown by a job in the worker, as it crossed the thread: its name, message and plain fields. */
export interface CpuJobFailure {
  name: string;
  message: string;
  data: Record<string, string | number | boolean | null>;
}

/** The pool refused the job: its kind's queue is full, or the pool is closing. */
export class CpuBusyError extends Error {
  override readonly name = 'CpuBusyError';
  constructor(
    readonly kind: string,
    readonly reason: 'full' | 'closing',
    /** When a retry is likely to be taken, from the kind's recent job times and backlog. */
    readonly retryAfterSeconds: number,
  ) {
    super(
      reason === 'full'
        ? `The server is busy with other ${kind} work; retry after ${retryAfterSeconds} s`
        : 'The server is shutting down; retry on another instance',
    );
  }
}

/** A job failed in the worker (and has no reviver), overran its time limit, or its worker died. */
export class CpuJobError extends Error {
  override readonly name = 'CpuJobError';
  constructor(
    message: string,
    readonly failure: CpuJobFailure | null,
  ) {
    super(message);
  }
}

export interface CpuKindOptions {
  /** Jobs that may wait for a thread; one more is refused. */
  queue: number;
  /** Jobs of this kind running at once (default: every thread). */
  running?: number;
  /** A job running longer is stopped (its worker terminated and replaced). */
  timeoutMs?: number;
}

/** A kind's warm-up (CpuPool.setWarmUp): the function `name` of `module`, once per input, in order, on every thread. */
export interface CpuWarmUp {
  module: string;
  name: string;
  inputs: readonly unknown[];
}

export interface CpuPoolOptions {
  /** Worker threads (default: defaultThreads(nice)). */
  threads?: number;
  /**
   * Niceness of the worker threads (0–19; Linux only, where a thread has a priority of its own):
   * with the threads below the event loop, the service keeps answering while they are all busy.
   */
  nice?: number;
  kinds: Record<string, CpuKindOptions>;
  /** Heap cap of each worker: a runaway document kills its worker, not the service. */
  maxHeapMb?: number;
  /** False: warm-ups given (setWarmUp) are ignored. */
  warmUp?: boolean;
  /** Told of refusals and finished jobs (the metrics). */
  observer?: CpuPoolObserver;
}

export interface CpuPoolObserver {
  refused(kind: string, reason: CpuBusyError['reason']): void;
  finished(kind: string, outcome: 'ok' | 'error' | 'aborted' | 'timeout', seconds: number): void;
  /** A warm-up step (CpuPool.setWarmUp) ended. */
  warmedUp?(kind: string, outcome: 'ok' | 'error' | 'timeout'): void;
}

export interface CpuKindStats {
  queued: number;
  running: number;
  refused: number;
}

export interface RunOptions<C> {
  signal?: AbortSignal;
  /** Parts of the input moved to the worker instead of copied (an ArrayBuffer of bytes). */
  transfer?: Transferable[];
  onChunk?: (chunk: C) => void;
  /** Ahead of the kind's queued jobs that are not urgent (FIFO among urgent ones): a spoken turn's first audio. */
  urgent?: boolean;
}

export interface CpuPool {
  readonly threads: number;
  /** Runs a job; rejects at once with CpuBusyError when its kind's queue is full. */
  run<I, O, C>(job: CpuJob<I, O, C>, input: I, options?: RunOptions<C>): Promise<O>;
  /**
   * Runs a job and yields its chunks as they come (the job starts on the first pull; `onChunk`,
   * if given, sees each chunk on arrival). Once the signal aborts, chunks not yet read are dropped.
   */
  stream<I, C>(job: CpuJob<I, unknown, C>, input: I, options?: RunOptions<C>): AsyncIterable<C>;
  stats(): Record<string, CpuKindStats>;
  /**
   * Steps that bring a kind's code up to speed on a thread (loaded, optimised by V8) so no request
   * pays a cold thread: from the kind's first job, every thread (started then, or later) runs them
   * one by one while it has nothing else to do. A failed step ends the kind's warm-up.
   */
  setWarmUp(kind: string, warmUp: CpuWarmUp): void;
  /** Refuses new jobs, drops the queued ones, waits for running ones up to `graceMs`, stops the threads. */
  close(graceMs?: number): Promise<void>;
}

interface Task {
  id: number;
  warm?: boolean; // a warm-up step (CpuPool.setWarmUp): nobody waits for it, not one of the kind's jobs
  job: CpuJob<unknown, unknown, unknown>;
  input: unknown;
  options: RunOptions<unknown>;
  cancel: Int32Array;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  startedAt: number;
  settled: boolean;
  timer?: NodeJS.Timeout;
  onAbort?: () => void;
}

interface Slot {
  worker: Worker;
  task: Task | null;
  warmed: Map<string, number>; // the next warm-up step of each kind on this thread
}

type WorkerMessage =
  | { type: 'chunk'; id: number; chunk: unknown }
  | { type: 'done'; id: number; value: unknown }
  | { type: 'error'; id: number; failure: CpuJobFailure };

export function createCpuPool(options: CpuPoolOptions): CpuPool {
  const nice = Math.max(0, Math.min(19, options.nice ?? 0));
  const threads = Math.max(1, options.threads ?? defaultThreads(nice));
  const kinds = new Map(
    Object.entries(options.kinds).map(([kind, o]) => [
      kind,
      {
        ...o,
        running: Math.max(1, Math.min(threads, o.running ?? threads)),
        queued: [] as Task[],
        active: 0,
        refused: 0,
        avgMs: 1000,
        warmUp: null as CpuWarmUp | null,
      },
    ]),
  );
  const kindNames = [...kinds.keys()];
  /** Kinds with a warm-up that have had a job: whether it goes on (false once a step failed). */
  const warming = new Map<string, boolean>();
  const slots: Slot[] = [];
  let nextId = 1;
  let turn = 0;
  let closing = false;

  function kindOf(name: string) {
    const kind = kinds.get(name);
    if (!kind) throw new Error(`The CPU pool has no job kind '${name}'`);
    return kind;
  }

  /** Seconds until the backlog ahead of a new job is likely worked off (1–120). */
  function retryAfter(kind: ReturnType<typeof kindOf>): number {
    const seconds = ((kind.queued.length + kind.active) * kind.avgMs) / kind.running / 1000;
    return Math.min(120, Math.max(1, Math.ceil(seconds)));
  }

  /** Whether a job of this kind would get a thread at once (so even a queue of 0 takes it). */
  function startsNow(kind: ReturnType<typeof kindOf>): boolean {
    if (kind.queued.length || kind.active >= kind.running) return false;
    return slots.length < threads || slots.some((slot) => !slot.task);
  }

  function spawn(): Slot {
    const worker = newWorker({
      name: 'switchboard-cpu',
      workerData: { nice },
      ...(options.maxHeapMb ? { resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb } } : {}),
    });
    worker.unref();
    const slot: Slot = { worker, task: null, warmed: new Map() };
    worker.on('message', (message: WorkerMessage) => onMessage(slot, message));
    let crash = '';
    // An uncaught error (or the heap cap) ends the thread; the exit that follows settles its task.
    worker.on('error', (error) => (crash = `: ${error.message}`));
    worker.on('exit', (code) => {
      const index = slots.indexOf(slot);
      if (index >= 0) slots.splice(index, 1);
      const task = slot.task;
      if (task)
        finish(
          slot,
          task,
          'error',
          new CpuJobError(`The ${task.job.kind} worker stopped (exit code ${code})${crash}`, null),
        );
      dispatch();
    });
    slots.push(slot);
    return slot;
  }

  function onMessage(slot: Slot, message: WorkerMessage) {
    const task = slot.task;
    if (!task || task.id !== message.id) return;
    if (message.type === 'chunk') {
      if (!task.settled) task.options.onChunk?.(message.chunk);
      return;
    }
    if (message.type === 'done') finish(slot, task, 'ok', null, message.value);
    else {
      const { failure } = message;
      const error = task.job.reviveError?.(failure) ?? new CpuJobError(failure.message, failure);
      finish(slot, task, 'error', error);
    }
    dispatch();
  }

  function settle(task: Task, error: unknown, value?: unknown) {
    if (task.settled) return;
    task.settled = true;
    clearTimeout(task.timer);
    if (task.onAbort) task.options.signal?.removeEventListener('abort', task.onAbort);
    if (error) task.reject(error);
    else task.resolve(value);
  }

  function finish(slot: Slot, task: Task, outcome: 'ok' | 'error' | 'timeout', error: unknown, value?: unknown) {
    slot.task = null;
    if (task.warm) {
      if (outcome !== 'ok') warming.set(task.job.kind, false);
      options.observer?.warmedUp?.(task.job.kind, outcome);
      return settle(task, null);
    }
    const kind = kindOf(task.job.kind);
    kind.active--;
    const ms = performance.now() - task.startedAt;
    kind.avgMs = kind.avgMs * 0.8 + ms * 0.2;
    const aborted = task.settled && !!task.options.signal?.aborted;
    options.observer?.finished(task.job.kind, aborted ? 'aborted' : outcome, ms / 1000);
    settle(task, error, value);
  }

  function nextTask(): Task | undefined {
    for (let i = 0; i < kindNames.length; i++) {
      const name = kindNames[(turn + i) % kindNames.length]!;
      const kind = kinds.get(name)!;
      if (kind.queued.length && kind.active < kind.running) {
        turn = (turn + i + 1) % kindNames.length;
        return kind.queued.shift();
      }
    }
    return undefined;
  }

  function dispatch() {
    for (;;) {
      let slot = slots.find((candidate) => !candidate.task);
      if (!slot && slots.length >= threads) break;
      const task = nextTask();
      if (!task) break;
      slot ??= spawn();
      start(slot, task);
    }
    // Threads with nothing else to do take their next warm-up step.
    if (!closing && warming.size) for (const slot of slots) if (!slot.task) warmUp(slot);
  }

  /** Starts the thread's next warm-up step of a kind in use, if any is left. */
  function warmUp(slot: Slot) {
    for (const [name, on] of warming) {
      if (!on) continue;
      const warm = kindOf(name).warmUp!;
      const step = slot.warmed.get(name) ?? 0;
      if (step >= warm.inputs.length) continue;
      slot.warmed.set(name, step + 1);
      const task: Task = {
        id: nextId++,
        warm: true,
        job: { kind: name, module: warm.module, name: warm.name },
        input: warm.inputs[step],
        options: {},
        cancel: new Int32Array(new SharedArrayBuffer(4)),
        resolve: () => {},
        reject: () => {},
        startedAt: 0,
        settled: false,
      };
      start(slot, task);
      return;
    }
  }

  function start(slot: Slot, task: Task) {
    const kind = kindOf(task.job.kind);
    if (!task.warm) kind.active++;
    slot.task = task;
    task.startedAt = performance.now();
    if (kind.timeoutMs) {
      task.timer = setTimeout(() => {
        // The worker is stopped and forgotten at once, so no other job is given to it.
        slots.splice(slots.indexOf(slot), 1);
        void slot.worker.terminate();
        const message = `The ${task.job.kind} job ran past ${kind.timeoutMs} ms and was stopped`;
        finish(slot, task, 'timeout', new CpuJobError(message, null));
        dispatch();
      }, kind.timeoutMs);
      task.timer.unref();
    }
    const { module, name } = task.job;
    slot.worker.postMessage(
      { type: 'run', id: task.id, module, name, input: task.input, cancel: task.cancel.buffer },
      task.options.transfer ?? [],
    );
  }

  function run<I, O, C>(job: CpuJob<I, O, C>, input: I, runOptions: RunOptions<C> = {}): Promise<O> {
    const kind = kindOf(job.kind);
    const signal = runOptions.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (closing || (kind.queued.length >= kind.queue && !startsNow(kind))) {
      const reason = closing ? 'closing' : 'full';
      kind.refused++;
      options.observer?.refused(job.kind, reason);
      return Promise.reject(new CpuBusyError(job.kind, reason, retryAfter(kind)));
    }
    return new Promise<O>((resolve, reject) => {
      const task: Task = {
        id: nextId++,
        job: job as CpuJob<unknown, unknown, unknown>,
        input,
        options: runOptions as RunOptions<unknown>,
        cancel: new Int32Array(new SharedArrayBuffer(4)),
        resolve: resolve as (value: unknown) => void,
        reject,
        startedAt: 0,
        settled: false,
      };
      if (signal) {
        task.onAbort = () => {
          Atomics.store(task.cancel, 0, 1);
          const index = kind.queued.indexOf(task);
          if (index >= 0) kind.queued.splice(index, 1);
          settle(task, signal.reason);
        };
        signal.addEventListener('abort', task.onAbort, { once: true });
      }
      const behind = runOptions.urgent ? kind.queued.findIndex((queued) => !queued.options.urgent) : -1;
      if (behind >= 0) kind.queued.splice(behind, 0, task);
      else kind.queued.push(task);
      const firstUse = !!kind.warmUp && !warming.has(job.kind);
      dispatch();
      if (firstUse) {
        // The kind is in use: every thread is started and warms up while it has nothing else to do.
        warming.set(job.kind, true);
        while (slots.length < threads) spawn();
        dispatch();
      }
    });
  }

  return {
    threads,
    run,
    stream: (job, input, runOptions = {}) => streamOf(run, job, input, runOptions),
    setWarmUp: (kind, warmUp) => void (options.warmUp !== false && (kindOf(kind).warmUp = warmUp)),
    stats: () =>
      Object.fromEntries(
        [...kinds].map(([name, kind]) => [
          name,
          { queued: kind.queued.length, running: kind.active, refused: kind.refused },
        ]),
      ),
    async close(graceMs = 10_000) {
      closing = true;
      for (const [name, kind] of kinds) {
        for (const task of kind.queued.splice(0)) settle(task, new CpuBusyError(name, 'closing', retryAfter(kind)));
      }
      const deadline = Date.now() + graceMs;
      while (slots.some((slot) => slot.task) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
}

/** A job's chunks as an async iterable: buffered as they arrive, ended by the job's result. */
function streamOf<I, C>(
  run: CpuPool['run'],
  job: CpuJob<I, unknown, C>,
  input: I,
  options: RunOptions<C>,
): AsyncIterable<C> {
  return {
    async *[Symbol.asyncIterator]() {
      const chunks: C[] = [];
      let wake: (() => void) | null = null;
      let ended = false;
      let failure: unknown = null;
      const stop = new AbortController();
      const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
      const notify = () => {
        wake?.();
        wake = null;
      };
      const done = run(job, input, {
        ...options,
        signal,
        onChunk: (chunk) => {
          options.onChunk?.(chunk);
          chunks.push(chunk);
          notify();
        },
      }).then(
        () => {
          ended = true;
          notify();
        },
        (error: unknown) => {
          failure = error;
          ended = true;
          notify();
        },
      );
      try {
        for (;;) {
          options.signal?.throwIfAborted();
          if (chunks.length) {
            yield chunks.shift()!;
            continue;
          }
          if (ended) break;
          await new Promise<void>((resolve) => (wake = resolve));
        }
        if (failure) throw failure;
      } finally {
        // The consumer stopped early (or failed): the job is cancelled.
        if (!ended) stop.abort(new DOMException('The consumer stopped reading', 'AbortError'));
        await done;
      }
    },
  };
}
