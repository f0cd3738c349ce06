/**
 * Text formats: plain text, Markdown (headings and pipe tables), HTML (Readability's article,
 * its headings and tables kept), CSV/TSV (papaparse, the delimiter guessed; rows as records
 * under their header), JSON (arrays of records as tables, nested keys as headings) and RTF.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import Papa from 'papaparse';
import {
  IngestError,
  squash,
  tableFromRows,
  type Block,
  type ParsedDocument,
  type ProgressFn,
} from './knowledge.blocks.js';

export const TEXT_LIMITS = {
  /** Rows of one CSV file. */
  maxRows: 500_000,
  /** Characters of one CSV row (a file without line breaks is one huge row). */
  maxRowChars: 100_000,
  /** Columns of one CSV row. */
  maxColumns: 2000,
  /** Nesting depth of a JSON document. */
  maxJsonDepth: 64,
  /** Values of a JSON document. */
  maxJsonValues: 2_000_000,
};

/** Decodes text: a BOM (UTF-8, UTF-16) decides, then UTF-8 if valid, else Windows-1252. */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    return new TextDecoder('utf-8').decode(bytes.subarray(3));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}

/** Paragraphs (blank-line separated) of plain text as one block each run of lines. */
export function parsePlainText(text: string): ParsedDocument {
  const body = text.replace(/\r\n?/g, '\n').replace(/\0/g, '').trim();
  return { blocks: body ? [{ kind: 'text', text: body }] : [] };
}

// ---------------------------------------------------------------- Markdown

/** Inline Markdown reduced to its words: links and images to their text, emphasis and code marks dropped. */
function inlineMarkdown(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/<[^>\n]+>/g, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[^\w*])[*_]([^*_\n]+)[*_](?=[^\w*]|$)/g, '$1$2')
    .replace(/`([^`]+)`/g, '$1')
    .trim();
}

const pipeCells = (line: string) =>
  line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((cell) => inlineMarkdown(cell.replace(/\\\|/g, '|')));

export function parseMarkdown(source: string): ParsedDocument {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    const text = paragraph.join('\n').trim();
    if (text) blocks.push({ kind: 'text', text });
    paragraph = [];
  };
  let fence: string | null = null;
  // Front matter (--- … ---) is metadata, not text.
  let i = lines[0] === '---' ? Math.max(lines.indexOf('---', 1) + 1, 0) : 0;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    const fenceMark = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence) {
      if (fenceMark && fenceMark[0] === fence[0] && fenceMark.length >= fence.length) fence = null;
      else paragraph.push(line);
      continue;
    }
    if (fenceMark) {
      fence = fenceMark;
      continue;
    }
    const atx = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) {
      flush();
      const text = inlineMarkdown(atx[2]!);
      if (text) blocks.push({ kind: 'heading', level: atx[1]!.length, text });
      continue;
    }
    const next = lines[i + 1];
    if (
      line.trim() &&
      next !== undefined &&
      paragraph.length === 0 &&
      /^\s{0,3}(=+|-+)\s*$/.test(next) &&
      !line.includes('|')
    ) {
      blocks.push({ kind: 'heading', level: next.trim().startsWith('=') ? 1 : 2, text: inlineMarkdown(line) });
      i++;
      continue;
    }
    if (line.includes('|') && next !== undefined && /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(next)) {
      flush();
      const rows = [pipeCells(line)];
      for (i += 2; i < lines.length && lines[i]!.includes('|') && lines[i]!.trim(); i++)
        rows.push(pipeCells(lines[i]!));
      i--;
      const table = tableFromRows(rows);
      if (table) blocks.push(table);
      continue;
    }
    if (!line.trim()) {
      flush();
      continue;
    }
    paragraph.push(inlineMarkdown(line.replace(/^\s{0,3}(>\s?|[-*+]\s+|\d+[.)]\s+)/, '')));
  }
  flush();
  return { blocks };
}

// ---------------------------------------------------------------- HTML

/** What the walk reads of linkedom's DOM nodes. */
interface DomNode {
  nodeType: number;
  textContent: string | null;
  childNodes: ArrayLike<DomNode> & Iterable<DomNode>;
}
interface Element extends DomNode {
  tagName: string;
  children: ArrayLike<Element> & Iterable<Element>;
  querySelectorAll(selector: string): ArrayLike<Element> & Iterable<Element>;
  querySelector(selector: string): Element | null;
  remove(): void;
}

const BLOCK_TEXT = new Set(['P', 'LI', 'PRE', 'BLOCKQUOTE', 'DT', 'DD', 'FIGCAPTION', 'CAPTION', 'ADDRESS']);

/** Headings, paragraphs and tables of a DOM subtree, in document order. */
function domBlocks(root: Element): Block[] {
  const blocks: Block[] = [];
  let loose: string[] = [];
  const flushLoose = () => {
    const text = squash(loose.join(' '));
    if (text) blocks.push({ kind: 'text', text });
    loose = [];
  };
  const visit = (node: DomNode) => {
    if (node.nodeType === 3) {
      if (node.textContent?.trim()) loose.push(node.textContent);
      return;
    }
    if (node.nodeType !== 1) return;
    const element = node as Element;
    const tag = element.tagName.toUpperCase();
    if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'NAV', 'IFRAME'].includes(tag)) return;
    const heading = /^H([1-6])$/.exec(tag);
    if (heading) {
      flushLoose();
      const text = squash(element.textContent ?? '');
      if (text) blocks.push({ kind: 'heading', level: Number(heading[1]), text });
      return;
    }
    if (tag === 'TABLE') {
      flushLoose();
      const rows = [...element.querySelectorAll('tr')].map((tr) =>
        [...tr.children]
          .filter((cell) => /^(TD|TH)$/i.test(cell.tagName))
          .map((cell) => squash(cell.textContent ?? '')),
      );
      const caption = squash(element.querySelector('caption')?.textContent ?? '');
      const table = tableFromRows(rows, caption || undefined);
      if (table) blocks.push(table);
      return;
    }
    if (BLOCK_TEXT.has(tag)) {
      flushLoose();
      const text = tag === 'PRE' ? (element.textContent ?? '').trim() : squash(element.textContent ?? '');
      if (text) blocks.push({ kind: 'text', text });
      return;
    }
    for (const child of element.childNodes) visit(child);
    if (tag === 'DIV' || tag === 'SECTION' || tag === 'ARTICLE' || tag === 'BR') flushLoose();
  };
  visit(root);
  flushLoose();
  return mergeText(blocks);
}

/** Consecutive text blocks joined, so that chunks hold whole sections. */
function mergeText(blocks: Block[]): Block[] {
  const out: Block[] = [];
  for (const block of blocks) {
    const last = out.at(-1);
    if (block.kind === 'text' && last?.kind === 'text') last.text = `${last.text}\n${block.text}`;
    else out.push(block.kind === 'text' ? { ...block } : block);
  }
  return out;
}

/**
 * The readable part of an HTML page (Readability's article when it finds one, else the body
 * without scripts, styles and navigation) as blocks, with the page's title.
 */
export function parseHtml(html: string, options: { readability: boolean }): ParsedDocument {
  const { document } = parseHTML(html);
  const pageTitle = squash(document.title ?? '');
  if (options.readability) {
    try {
      const article = new Readability(
        document.cloneNode(true) as unknown as ConstructorParameters<typeof Readability>[0],
        {
          charThreshold: 100,
        },
      ).parse();
      if (article?.content && article.textContent?.trim()) {
        const root = parseHTML(`<!doctype html><html><body>${article.content}</body></html>`).document.body;
        const blocks = domBlocks(root as unknown as Element);
        if (blocks.length) return { blocks, title: squash(article.title ?? '') || pageTitle || undefined };
      }
    } catch {
      // Readability gives up on some pages; the body below is the fallback.
    }
  }
  const body = (document.body ?? document.documentElement) as unknown as Element | null;
  for (const node of [...(body?.querySelectorAll('header, footer, aside, form') ?? [])]) {
    if (options.readability) node.remove();
  }
  return { blocks: body ? domBlocks(body) : [], title: pageTitle || undefined };
}

// ---------------------------------------------------------------- CSV

export function parseCsv(source: string, progress: ProgressFn, tabs = false): ParsedDocument {
  const text = source.replace(/^\ufeff/, '');
  // An estimate for progress: the lines of the file (quoted line breaks make it a little high).
  let estimate = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) estimate++;
  const rows: string[][] = [];
  let failure: string | null = null;
  Papa.parse<string[]>(text, {
    delimiter: tabs ? '\t' : '',
    delimitersToGuess: [',', ';', '\t', '|'],
    skipEmptyLines: 'greedy',
    step: (result, parser) => {
      const row = result.data;
      const line = rows.length + 1;
      if (row.length > TEXT_LIMITS.maxColumns)
        failure = `Row ${line} has ${row.length} columns; at most ${TEXT_LIMITS.maxColumns}`;
      else if (row.reduce((n, cell) => n + cell.length, 0) > TEXT_LIMITS.maxRowChars)
        failure = `Row ${line} is longer than ${TEXT_LIMITS.maxRowChars} characters (an unclosed quote, or not a CSV file?)`;
      else if (rows.length >= TEXT_LIMITS.maxRows)
        failure = `The file has more than ${TEXT_LIMITS.maxRows} rows; split it`;
      if (failure) return parser.abort();
      rows.push(row);
      if (rows.length % 5000 === 0) progress('parsing', rows.length, Math.max(estimate, rows.length));
    },
  });
  if (failure) throw new IngestError(failure);
  progress('parsing', rows.length, rows.length);
  const table = tableFromRows(rows);
  return { blocks: table ? [table] : [], units: rows.length };
}

// ---------------------------------------------------------------- JSON

const isScalar = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);
const scalarText = (value: unknown) => (value === null ? '' : String(value));
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function parseJson(source: string): ParsedDocument {
  let value: unknown;
  try {
    value = JSON.parse(source.replace(/^\ufeff/, ''));
  } catch (error) {
    throw new IngestError(`The file is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
  }
  let count = 0;
  const blocks: Block[] = [];
  const walk = (node: unknown, path: string[], depth: number) => {
    if (depth > TEXT_LIMITS.maxJsonDepth)
      throw new IngestError(`The JSON nests deeper than ${TEXT_LIMITS.maxJsonDepth} levels`);
    if (++count > TEXT_LIMITS.maxJsonValues)
      throw new IngestError(`The JSON holds more than ${TEXT_LIMITS.maxJsonValues} values`);
    if (Array.isArray(node)) {
      // An array of flat records is a table with their keys as the header.
      if (node.length > 0 && node.every((item) => isRecord(item) && Object.values(item).every(isScalar))) {
        const keys = [...new Set(node.flatMap((item) => Object.keys(item as object)))];
        count += node.length * keys.length;
        if (count > TEXT_LIMITS.maxJsonValues)
          throw new IngestError(`The JSON holds more than ${TEXT_LIMITS.maxJsonValues} values`);
        const rows = [
          keys,
          ...node.map((item) => keys.map((key) => scalarText((item as Record<string, unknown>)[key]))),
        ];
        // Under a key, the heading pushed for it already names the table.
        const table = tableFromRows(rows);
        if (table) blocks.push(table);
        return;
      }
      if (node.every(isScalar)) {
        const text = node.map(scalarText).filter(Boolean).join(', ');
        if (text) blocks.push({ kind: 'text', text: path.length ? `${path.at(-1)}: ${text}` : text });
        return;
      }
      node.forEach((item, index) => walk(item, [...path, `${path.at(-1) ?? 'item'} ${index + 1}`], depth + 1));
      return;
    }
    if (isRecord(node)) {
      const lines: string[] = [];
      const nested: [string, unknown][] = [];
      for (const [key, item] of Object.entries(node)) {
        if (isScalar(item)) {
          if (scalarText(item)) lines.push(`${key}: ${scalarText(item)}`);
        } else nested.push([key, item]);
      }
      if (lines.length) blocks.push({ kind: 'text', text: lines.join('\n') });
      for (const [key, item] of nested) {
        blocks.push({ kind: 'heading', level: Math.min(path.length + 1, 6), text: [...path, key].join(' > ') });
        walk(item, [...path, key], depth + 1);
      }
      return;
    }
    if (scalarText(node)) blocks.push({ kind: 'text', text: scalarText(node) });
  };
  walk(value, [], 0);
  return { blocks };
}

// ---------------------------------------------------------------- RTF

/** Destinations whose text is not the document's (fonts, colours, styles, metadata, pictures, fields' instructions). */
const RTF_SKIP = new Set([
  'fonttbl',
  'colortbl',
  'stylesheet',
  'info',
  'pict',
  'object',
  'header',
  'footer',
  'headerl',
  'headerr',
  'footerl',
  'footerr',
  'fldinst',
  'themedata',
  'colorschememapping',
  'datastore',
  'latentstyles',
  'listtable',
  'listoverridetable',
  'rsidtbl',
  'generator',
  'xmlnstbl',
  'filetbl',
  'revtbl',
  'pgdsctbl',
  'bkmkstart',
  'bkmkend',
  'nonshppict',
  'shppict',
]);

/** Windows code pages an RTF file may declare (\ansicpgN) that TextDecoder reads. */
const codePage = (n: number) => (n === 65001 ? 'utf-8' : n >= 874 && n <= 1258 ? `windows-${n}` : 'windows-1252');

/**
 * The text of an RTF document: groups, control words and symbols read by the format's grammar
 * (RTF 1.9.1); `\uN` with its fallback skipped (`\ucN`), `\'hh` in the declared code page,
 * paragraphs and table cells as line breaks and tabs. No RTF reader on npm is maintained, and
 * the text needs only the grammar, so it is read here.
 */
export function parseRtf(source: string): ParsedDocument {
  if (!source.startsWith('{\\rtf')) throw new IngestError('The file is not a readable RTF document');
  let decoder = new TextDecoder('windows-1252');
  const out: string[] = [];
  const pendingBytes: number[] = [];
  const flushBytes = () => {
    if (pendingBytes.length) out.push(decoder.decode(new Uint8Array(pendingBytes.splice(0))));
  };
  interface State {
    skip: boolean;
    uc: number;
  }
  const stack: State[] = [];
  let state: State = { skip: false, uc: 1 };
  let skipChars = 0;
  let depth = 0;
  const emit = (text: string) => {
    if (state.skip) return;
    if (skipChars > 0) {
      const dropped = Math.min(skipChars, text.length);
      skipChars -= dropped;
      text = text.slice(dropped);
      if (!text) return;
    }
    flushBytes();
    out.push(text);
  };
  for (let i = 0; i < source.length;) {
    const ch = source[i]!;
    if (ch === '{') {
      if (++depth > 512) throw new IngestError('The RTF document nests groups deeper than 512 levels');
      stack.push(state);
      state = { ...state };
      // A group opened by \* is an optional destination this reader skips.
      if (source.startsWith('{\\*', i)) state.skip = true;
      i++;
    } else if (ch === '}') {
      flushBytes();
      state = stack.pop() ?? state;
      depth--;
      i++;
    } else if (ch === '\\') {
      const next = source[i + 1] ?? '';
      if (next === "'") {
        const byte = parseInt(source.slice(i + 2, i + 4), 16);
        if (!state.skip) {
          if (skipChars > 0) skipChars--;
          else if (Number.isFinite(byte)) pendingBytes.push(byte);
        }
        i += 4;
      } else if (/[a-zA-Z]/.test(next)) {
        const match = /^\\([a-zA-Z]{1,32})(-?\d{1,10})? ?/.exec(source.slice(i, i + 48))!;
        const word = match[1]!;
        const param = match[2] === undefined ? null : Number(match[2]);
        i += match[0].length;
        if (RTF_SKIP.has(word)) state.skip = true;
        else if (word === 'ansicpg' && param !== null) {
          try {
            decoder = new TextDecoder(codePage(param));
          } catch {
            decoder = new TextDecoder('windows-1252');
          }
        } else if (word === 'uc' && param !== null) state.uc = Math.max(param, 0);
        else if (word === 'u' && param !== null) {
          emit(String.fromCharCode(param < 0 ? param + 65536 : param));
          skipChars = state.uc;
        } else if (word === 'par' || word === 'line' || word === 'row' || word === 'sect' || word === 'page')
          emit('\n');
        else if (word === 'tab' || word === 'cell') emit('\t');
        else if (word === 'emdash') emit('—');
        else if (word === 'endash') emit('–');
        else if (word === 'bullet') emit('•');
        else if (word === 'lquote' || word === 'rquote') emit("'");
        else if (word === 'ldblquote' || word === 'rdblquote') emit('"');
        else if (word === 'bin' && param !== null) i += Math.max(param, 0);
      } else {
        // Control symbols: escaped braces and backslash, non-breaking space and hyphen.
        if (next === '\\' || next === '{' || next === '}') emit(next);
        else if (next === '~') emit('\u00a0');
        else if (next === '_') emit('-');
        else if (next === '\n' || next === '\r') emit('\n');
        i += 2;
      }
    } else if (ch === '\r' || ch === '\n') i++;
    else {
      let end = i;
      while (end < source.length && !'{}\\\r\n'.includes(source[end]!)) end++;
      emit(source.slice(i, end));
      i = end;
    }
  }
  flushBytes();
  const text = out
    .join('')
    .split('\n')
    .map((line) => line.replace(/[ \t]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { blocks: text ? text.split(/\n{2,}/).map((part) => ({ kind: 'text' as const, text: part })) : [] };
}
