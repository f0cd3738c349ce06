/**
 * The knowledge base's job in the CPU pool (src/lib/cpu-pool.ts): a document's text extracted
 * (PDF, DOCX, HTML: ./knowledge.extract.ts), cleaned, its language told and its chunks cut, all
 * in a worker thread, so a 300-page PDF never holds the event loop. Failures the document itself
 * causes are IngestErrors (revived by name on the caller's side).
 */
import { cleanText, extractDocx, extractHtml, extractPdf } from './knowledge.extract.js';
import { chunkText, detectLanguage } from './knowledge.text.js';

export type PrepareInput =
  | { source: 'pdf' | 'docx'; bytes: Uint8Array<ArrayBuffer> }
  | { source: 'html'; html: string; url: string }
  | { source: 'text'; text: string };

export interface PreparedText {
  /** Cleaned text; empty when the document has none. */
  text: string;
  language: string;
  chunks: string[];
}

async function rawText(input: PrepareInput): Promise<string> {
  switch (input.source) {
    case 'pdf':
      return extractPdf(input.bytes);
    case 'docx':
      return extractDocx(input.bytes);
    case 'html':
      return extractHtml(input.html, input.url).text;
    case 'text':
      return input.text;
  }
}

export async function prepare(input: PrepareInput): Promise<PreparedText> {
  const text = cleanText(await rawText(input));
  if (!text) return { text, language: 'und', chunks: [] };
  const language = detectLanguage(text);
  return { text, language, chunks: chunkText(text, language) };
}
