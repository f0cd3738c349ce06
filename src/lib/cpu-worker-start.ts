/**
 * How the CPU pool (./cpu-pool.ts) starts a thread: the worker's entry is the compiled file as it
 * is; under TypeScript (vitest, tsx) a bootstrap that registers tsx's loader in the thread first,
 * then imports the .ts file. Also the naming of job modules beside their caller and the default
 * number of threads.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/** The URL of a job module beside the caller, `.ts` when the caller runs as TypeScript. */
export function cpuJobModule(callerUrl: string, relativePath: string): string {
  return new URL(`${relativePath}${callerUrl.endsWith('.ts') ? '.ts' : '.js'}`, callerUrl).href;
}

const WORKER_FILE = cpuJobModule(import.meta.url, './cpu-worker');

interface TsxManifest {
  exports: { './esm/api': { import: { default: string } } };
}

/** A thread of the pool, running ./cpu-worker (see the header for how). */
export function newWorker(options: {
  name: string;
  workerData: { nice: number };
  resourceLimits?: { maxOldGenerationSizeMb: number };
}): Worker {
  if (!WORKER_FILE.endsWith('.ts')) return new Worker(new URL(WORKER_FILE), options);
  // tsx's ESM API (`tsx/esm/api`, its `import` export: this thread is not under vitest's resolver).
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as TsxManifest;
  const api = pathToFileURL(path.join(path.dirname(manifest), exports['./esm/api'].import.default)).href;
  const bootstrap = `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_FILE)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}

/** Whether worker threads can run below the event loop here (setpriority acts per thread on Linux). */
export const THREAD_PRIORITIES = process.platform === 'linux';

/**
 * At most 4 threads: one per core when they run below the event loop (it takes a core back
 * whenever it has work), else the cores less one (at least 1).
 */
export function defaultThreads(nice = 0): number {
  const cores = availableParallelism();
  return Math.max(1, Math.min(4, THREAD_PRIORITIES && nice > 0 ? cores : cores - 1));
}
