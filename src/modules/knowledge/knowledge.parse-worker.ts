/**
 * The worker thread that parses, reads by OCR and chunks documents (knowledge.parse-pool.ts
 * starts it): one task at a time, progress posted as it goes, the result or the failure last.
 */
import { parentPort } from 'node:worker_threads';
import { IngestError } from './knowledge.blocks.js';
import type { Format } from './knowledge.formats.js';
import { parseAndPrepare, prepareHtml } from './knowledge.parse.js';

export type ParseTask = { kind: 'file'; bytes: Uint8Array; format: Format } | { kind: 'html'; html: string };

export type ParseMessage =
  | { type: 'progress'; stage: string; done: number; total: number | null }
  | { type: 'result'; value: unknown }
  | { type: 'error'; message: string; ingest: boolean };

const port = parentPort;
if (port) {
  port.on('message', (task: ParseTask) => {
    const progress = (stage: string, done: number, total: number | null) =>
      port.postMessage({ type: 'progress', stage, done, total } satisfies ParseMessage);
    const work =
      task.kind === 'file'
        ? parseAndPrepare(task.bytes, task.format, progress)
        : Promise.resolve().then(() => prepareHtml(task.html, progress));
    work.then(
      (value) => port.postMessage({ type: 'result', value } satisfies ParseMessage),
      (error: unknown) =>
        port.postMessage({
          type: 'error',
          message: error instanceof Error ? error.message : String(error),
          ingest: error instanceof IngestError,
        } satisfies ParseMessage),
    );
  });
}
