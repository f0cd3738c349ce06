/**
 * The knowledge base's CPU work, sent to the service's one CPU pool (src/lib/cpu-pool.ts) as
 * jobs of the `documents` kind: parsing, OCR and chunking of a document (progress relayed as it
 * goes), and the links of a crawled page. The pool bounds how many run at once, how many wait
 * (more are refused with CpuBusyError: the ingestion job hands its task back for later) and each
 * thread's heap; a document that overruns the kind's time limit or its thread's heap fails with
 * an IngestError that says so.
 */
import { CpuJobError, cpuJobModule, type CpuJob, type CpuPool } from '../../lib/cpu-pool.js';
import { IngestError } from './knowledge.blocks.js';
import type { PageLinks } from './knowledge.crawl-links.js';
import { defaultOcrSetup, type OcrSetup } from './knowledge.ocr.js';
import type { ParseProgress, ParseTask } from './knowledge.parse.job.js';
import type { PreparedDocument } from './knowledge.parse.js';

/** The pool's kind of job for documents (its queue and time limit: CPU_POOL_DOCUMENTS_*). */
export const DOCUMENTS_KIND = 'documents';

const JOB_MODULE = cpuJobModule(import.meta.url, './knowledge.parse.job');
const reviveError = (failure: { name: string; message: string }) =>
  failure.name === 'IngestError' ? new IngestError(failure.message) : new Error(failure.message);

const PARSE_JOB: CpuJob<ParseTask, PreparedDocument, ParseProgress> = {
  kind: DOCUMENTS_KIND,
  module: JOB_MODULE,
  name: 'parseDocument',
  reviveError,
};
const LINKS_JOB: CpuJob<{ html: string; url: string }, PageLinks> = {
  kind: DOCUMENTS_KIND,
  module: JOB_MODULE,
  name: 'pageLinks',
  reviveError,
};
const SITEMAP_JOB: CpuJob<{ xml: string; url: string }, { pages: string[]; sitemaps: string[] }> = {
  kind: DOCUMENTS_KIND,
  module: JOB_MODULE,
  name: 'sitemapEntries',
  reviveError,
};

/** A thread that stopped (heap cap) or a job stopped at its time limit, in words for the task. */
function readable(error: unknown): unknown {
  if (!(error instanceof CpuJobError) || error.failure) return error;
  if (/ran past/.test(error.message)) return new IngestError('The document took too long to read; split it');
  if (/out of memory|ERR_WORKER_OUT_OF_MEMORY|heap/i.test(error.message))
    return new IngestError('The document needs more memory than a parser may use; split it');
  return new IngestError(`The document could not be read (${error.message})`);
}

/** `ocr`: the languages scans and images are read in (knowledge.ocr.ts; English unless told). */
export function createParsers(cpu: CpuPool, ocr: OcrSetup | null = defaultOcrSetup()) {
  return {
    /** Parses in a thread; the bytes of a file are moved to it (the caller's copy is emptied). */
    run(task: ParseTask, onProgress: (stage: string, done: number, total: number | null) => void) {
      const transfer = task.kind === 'file' ? [task.bytes.buffer as ArrayBuffer] : [];
      return cpu
        .run(PARSE_JOB, task.kind === 'file' ? { ...task, ocr } : task, {
          transfer,
          onChunk: (p) => onProgress(p.stage, p.done, p.total),
        })
        .catch((error: unknown) => {
          throw readable(error);
        });
    },
    /** The links, title and robots directives of a fetched page. */
    links: (html: string, url: string) => cpu.run(LINKS_JOB, { html, url }),
    /** The page and sitemap URLs a sitemap lists. */
    sitemap: (xml: string, url: string) => cpu.run(SITEMAP_JOB, { xml, url }),
  };
}

export type Parsers = ReturnType<typeof createParsers>;
