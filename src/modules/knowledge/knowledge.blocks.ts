/**
 * The structure a parser hands to chunking: headings, paragraphs and tables (with their header
 * row), in reading order. Parsers are pure (bytes in, blocks out) so they run in worker threads.
 */

/** A failure of one document's ingestion that retrying will not fix; its message becomes the task's `error`. */
export class IngestError extends Error {
  override readonly name = 'IngestError';
}

export type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'text'; text: string }
  | { kind: 'table'; title?: string; header: string[]; rows: string[][] };

export interface ParsedDocument {
  blocks: Block[];
  /** A title found in the document itself (HTML <title>, an e-mail's subject). */
  title?: string;
  /** Pages (PDF), slides or sheets read. */
  units?: number;
  /** Mean OCR confidence (0–100) over the pages read by OCR, with their count. */
  ocr?: { pages: number; confidence: number };
}

/** Where a long parse reports how far it got: stage, units done, units in all (null: not known). */
export type ProgressFn = (stage: string, done: number, total: number | null) => void;

/** Collapses runs of spaces and trims; keeps nothing but the text. */
export const squash = (text: string) => text.replace(/[\s\u00a0]+/g, ' ').trim();

/** A table's header: the first row, blank cells named by their column letter (A, B, … AA). */
export function headerOf(row: string[], width: number): string[] {
  const header: string[] = [];
  for (let i = 0; i < width; i++) header.push(row[i]?.trim() || columnName(i));
  return header;
}

export function columnName(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/**
 * A table block from rows whose first non-empty row is the header; trailing empty cells and
 * empty rows are dropped. Null when no row holds anything.
 */
export function tableFromRows(rows: string[][], title?: string): Block | null {
  const kept = rows
    .map((row) => {
      let end = row.length;
      while (end > 0 && !row[end - 1]?.trim()) end--;
      return row.slice(0, end).map((cell) => squash(cell));
    })
    .filter((row) => row.length > 0);
  if (kept.length === 0) return null;
  const width = Math.max(...kept.map((row) => row.length));
  const [first, ...rest] = kept;
  return { kind: 'table', ...(title ? { title } : {}), header: headerOf(first!, width), rows: rest };
}

/** One row as a record: `Header: value; Header: value` (empty cells left out). */
export function recordOf(header: string[], row: string[]): string {
  const parts: string[] = [];
  row.forEach((cell, i) => {
    if (cell) parts.push(`${header[i] ?? columnName(i)}: ${cell}`);
  });
  return parts.join('; ');
}

/** The document's text as stored and shown: headings on their own lines, tables as rows of cells. */
export function renderBlocks(blocks: Block[]): string {
  const out: string[] = [];
  for (const block of blocks) {
    if (block.kind === 'heading') out.push(block.text);
    else if (block.kind === 'text') out.push(block.text);
    else {
      const lines = [block.header.join(' | '), ...block.rows.map((row) => row.join(' | '))];
      out.push([...(block.title ? [block.title] : []), ...lines].join('\n'));
    }
  }
  return out.join('\n\n');
}
