/**
 * A bounded pool of worker threads for parsing, OCR and chunking, so that no document's
 * extraction runs on the event loop. `size` threads, each with a heap limit; tasks beyond them
 * wait in a queue of at most `maxQueue` (then `run` refuses with PoolBusyError); a task that
 * outlives `timeoutMs` or exhausts its thread's memory ends that thread (a fresh one replaces
 * it) and fails with an IngestError that says so.
 */
import { Worker } from 'node:worker_threads';
import { IngestError } from './knowledge.blocks.js';
import type { ParseMessage, ParseTask } from './knowledge.parse-worker.js';
import type { PreparedDocument } from './knowledge.parse.js';

export class PoolBusyError extends Error {
  override readonly name = 'PoolBusyError';
}

export interface ParsePoolOptions {
  size: number;
  maxQueue: number;
  timeoutMs: number;
  /** Heap of one thread, MiB. */
  maxHeapMb: number;
}

interface Job {
  task: ParseTask;
  onProgress: (stage: string, done: number, total: number | null) => void;
  resolve: (value: PreparedDocument) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

/** The worker's script: built, the JavaScript beside this file; from source (tests, tsx), the TypeScript through tsx's loader. */
function startWorker(maxHeapMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: maxHeapMb };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./knowledge.parse-worker.js', import.meta.url), { resourceLimits });
  const entry = new URL('./knowledge.parse-worker.ts', import.meta.url).href;
  const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, resourceLimits });
}

export function createParsePool(options: ParsePoolOptions) {
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let closed = false;

  function spawn(): Slot {
    const slot: Slot = { worker: startWorker(options.maxHeapMb), job: null, timer: null };
    slot.worker.unref();
    slot.worker.on('message', (message: ParseMessage) => {
      const job = slot.job;
      if (!job) return;
      if (message.type === 'progress') job.onProgress(message.stage, message.done, message.total);
      else
        finish(
          slot,
          message.type === 'result'
            ? { value: message.value as PreparedDocument }
            : { error: message.ingest ? new IngestError(message.message) : new Error(message.message) },
        );
    });
    slot.worker.on('error', (error: Error & { code?: string }) => {
      const memory = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
      replace(slot, memory ? new IngestError('The document needs more memory than a parser may use; split it') : error);
    });
    slot.worker.on('exit', () => replace(slot, new Error('The parser thread stopped')));
    return slot;
  }

  /** Ends a slot's thread (a failed or timed-out task) and puts a fresh one in its place. */
  function replace(slot: Slot, error: Error) {
    const index = slots.indexOf(slot);
    if (index === -1) return;
    slots.splice(index, 1);
    if (slot.timer) clearTimeout(slot.timer);
    const job = slot.job;
    slot.job = null;
    slot.worker.removeAllListeners('exit');
    void slot.worker.terminate();
    job?.reject(error);
    if (!closed) {
      slots.push(spawn());
      next();
    }
  }

  function finish(slot: Slot, outcome: { value: PreparedDocument } | { error: Error }) {
    const job = slot.job;
    if (slot.timer) clearTimeout(slot.timer);
    slot.job = null;
    slot.timer = null;
    if (job) {
      if ('value' in outcome) job.resolve(outcome.value);
      else job.reject(outcome.error);
    }
    next();
  }

  function next() {
    for (const slot of slots) {
      if (slot.job || queue.length === 0) continue;
      const job = queue.shift()!;
      slot.job = job;
      slot.timer = setTimeout(
        () =>
          replace(
            slot,
            new IngestError(
              `The document took longer than ${Math.round(options.timeoutMs / 1000)} s to read; split it`,
            ),
          ),
        options.timeoutMs,
      );
      const transfer = job.task.kind === 'file' ? [job.task.bytes.buffer as ArrayBuffer] : [];
      slot.worker.postMessage(job.task, transfer);
    }
  }

  return {
    /** Parses in a thread; the bytes are moved to it (the caller's copy is emptied). */
    run(task: ParseTask, onProgress: Job['onProgress']): Promise<PreparedDocument> {
      if (closed) return Promise.reject(new Error('The parser pool is closed'));
      if (queue.length >= options.maxQueue)
        return Promise.reject(new PoolBusyError(`The document parsers are busy (${queue.length} waiting)`));
      while (slots.length < options.size) slots.push(spawn());
      return new Promise((resolve, reject) => {
        queue.push({ task, onProgress, resolve, reject });
        next();
      });
    },
    get stats() {
      return { threads: slots.length, busy: slots.filter((slot) => slot.job).length, queued: queue.length };
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('The parser pool is closed'));
      await Promise.all(
        slots.splice(0).map((slot) => {
          if (slot.timer) clearTimeout(slot.timer);
          slot.job?.reject(new Error('The parser pool is closed'));
          slot.worker.removeAllListeners('exit');
          return slot.worker.terminate();
        }),
      );
    },
  };
}

export type ParsePool = ReturnType<typeof createParsePool>;
