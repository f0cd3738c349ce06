/**
 * A thread of the CPU pool (./cpu-pool.ts): runs one job at a time, the function `name` of the
 * module at `module` (loaded once), and answers with its chunks, then its result or its failure
 * (name, message and plain fields, so the caller can revive its error type). It runs at the
 * pool's niceness, below the event loop's thread.
 */
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData, type Transferable } from 'node:worker_threads';
import type { CpuJobContext, CpuJobFailure } from './cpu-pool.js';

interface RunMessage {
  type: 'run';
  id: number;
  module: string;
  name: string;
  input: unknown;
  cancel: SharedArrayBuffer;
}

type JobFunction = (input: unknown, context: CpuJobContext<unknown>) => unknown;

const port = parentPort!;

// `nice` steps below the event loop (Linux: setpriority on the calling thread is this thread alone;
// elsewhere it would be the whole process, so it is not done there). Relative to the process's own
// niceness, so a service started with `nice` keeps its pool below it, and raising is never asked.
const { nice } = (workerData ?? { nice: 0 }) as { nice: number };
if (process.platform === 'linux' && nice > 0) setPriority(0, Math.min(19, getPriority(0) + nice));
const modules = new Map<string, Promise<Record<string, unknown>>>();

function failureOf(error: unknown): CpuJobFailure {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), data: {} };
  const data: CpuJobFailure['data'] = {};
  for (const [key, value] of Object.entries(error)) {
    if (key === 'name' || key === 'message') continue;
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) data[key] = value as never;
  }
  return { name: error.name, message: error.message, data };
}

async function run(message: RunMessage): Promise<void> {
  const { id } = message;
  const flag = new Int32Array(message.cancel);
  const context: CpuJobContext<unknown> = {
    emit: (chunk, transfer?: Transferable[]) => port.postMessage({ type: 'chunk', id, chunk }, transfer ?? []),
    cancelled: () => Atomics.load(flag, 0) === 1,
    throwIfCancelled() {
      if (Atomics.load(flag, 0) === 1) throw new DOMException('The job was cancelled', 'AbortError');
    },
  };
  try {
    let loading = modules.get(message.module);
    if (!loading) {
      loading = import(message.module) as Promise<Record<string, unknown>>;
      modules.set(message.module, loading);
      loading.catch(() => modules.delete(message.module));
    }
    const job = (await loading)[message.name];
    if (typeof job !== 'function') throw new Error(`${message.module} exports no function '${message.name}'`);
    const value = await (job as JobFunction)(message.input, context);
    port.postMessage({ type: 'done', id, value });
  } catch (error) {
    port.postMessage({ type: 'error', id, failure: failureOf(error) });
  }
}

port.on('message', (message: RunMessage) => void run(message));
