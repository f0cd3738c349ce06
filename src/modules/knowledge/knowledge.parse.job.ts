/**
 * The knowledge base's jobs in the CPU pool (src/lib/cpu-pool.ts; knowledge.parsers.ts sends
 * them): a document parsed, read by OCR and chunked, its progress emitted as it goes; and a
 * crawled page's links and title read.
 */
import type { CpuJobContext } from '../../lib/cpu-pool.js';
import { readPageLinks, readSitemap, type PageLinks } from './knowledge.crawl-links.js';
import type { Format } from './knowledge.formats.js';
import type { OcrSetup } from './knowledge.ocr.js';
import { parseAndPrepare, prepareHtml, type PreparedDocument } from './knowledge.parse.js';

export type ParseTask =
  { kind: 'file'; bytes: Uint8Array; format: Format; ocr?: OcrSetup | null } | { kind: 'html'; html: string };

export interface ParseProgress {
  stage: string;
  done: number;
  total: number | null;
}

export function parseDocument(task: ParseTask, context: CpuJobContext<ParseProgress>): Promise<PreparedDocument> {
  const progress = (stage: string, done: number, total: number | null) => {
    context.throwIfCancelled();
    context.emit({ stage, done, total });
  };
  return task.kind === 'file'
    ? parseAndPrepare(task.bytes, task.format, progress, task.ocr ?? null)
    : Promise.resolve().then(() => prepareHtml(task.html, progress));
}

export function pageLinks(input: { html: string; url: string }): PageLinks {
  return readPageLinks(input.html, input.url);
}

export function sitemapEntries(input: { xml: string; url: string }): { pages: string[]; sitemaps: string[] } {
  return readSitemap(input.xml, input.url);
}
