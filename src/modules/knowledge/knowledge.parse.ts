/**
 * One entry for every file type: bytes and format in, blocks out (pure, run in a worker thread
 * by knowledge.parse-worker.ts), then the document prepared for indexing: its text as stored,
 * its language and its chunks with their headings (knowledge.text.ts).
 */
import mammoth from 'mammoth';
import PostalMime from 'postal-mime';
import {
  IngestError,
  renderBlocks,
  squash,
  type Block,
  type ParsedDocument,
  type ProgressFn,
} from './knowledge.blocks.js';
import { detectFormat, FORMATS, type Format } from './knowledge.formats.js';
import { parseOdp, parseOds, parseOdt, parsePptx, parseXlsx } from './knowledge.parse-office.js';
import { parseImage, parsePdf } from './knowledge.parse-pdf.js';
import { defaultOcrSetup, type OcrSetup } from './knowledge.ocr.js';
import {
  decodeText,
  parseCsv,
  parseHtml,
  parseJson,
  parseMarkdown,
  parsePlainText,
  parseRtf,
} from './knowledge.parse-text.js';
import { readZip } from './knowledge.zip.js';
import { chunkBlocks, cleanText, detectLanguage, textSearchConfig } from './knowledge.text.js';

export const MAIL_LIMITS = { maxAttachments: 50, maxAttachmentBytes: 16 * 1024 * 1024 };

/** Formats an e-mail's attachment is read as (its text: documents too, images not). */
const ATTACHMENT_FORMATS = new Set<Format>([
  'text',
  'markdown',
  'csv',
  'tsv',
  'html',
  'json',
  'rtf',
  'pdf',
  'docx',
  'odt',
]);

async function parseDocx(bytes: Uint8Array): Promise<ParsedDocument> {
  // The container is checked (and inflated within the limits) before mammoth reads it.
  readZip(bytes, () => false, { all: true });
  try {
    const { value } = await mammoth.convertToHtml({ buffer: Buffer.from(bytes) });
    return parseHtml(`<!doctype html><html><body>${value}</body></html>`, { readability: false });
  } catch (error) {
    throw new IngestError(`The file is not a readable DOCX document: ${(error as Error).message}`);
  }
}

const mailbox = (value: { name: string; address?: string; group?: { name: string; address: string }[] }): string =>
  value.group
    ? value.group.map(mailbox).join(', ')
    : [value.name, value.address && `<${value.address}>`].filter(Boolean).join(' ');

async function parseEml(bytes: Uint8Array, progress: ProgressFn): Promise<ParsedDocument> {
  let email;
  try {
    email = await PostalMime.parse(bytes, { attachmentEncoding: 'arraybuffer', maxNestingDepth: 32 });
  } catch (error) {
    throw new IngestError(`The e-mail could not be read: ${(error as Error).message}`);
  }
  const subject = squash(email.subject ?? '');
  const blocks: Block[] = [];
  if (subject) blocks.push({ kind: 'heading', level: 1, text: subject });
  const header = [
    email.from && `From: ${mailbox(email.from)}`,
    email.to?.length && `To: ${email.to.map(mailbox).join(', ')}`,
    email.cc?.length && `Cc: ${email.cc.map(mailbox).join(', ')}`,
    email.date && `Date: ${email.date}`,
  ].filter(Boolean);
  if (header.length) blocks.push({ kind: 'text', text: header.join('\n') });
  if (email.text?.trim()) blocks.push(...parsePlainText(email.text).blocks);
  else if (email.html) blocks.push(...parseHtml(email.html, { readability: false }).blocks);
  const attachments = email.attachments.filter(
    (attachment) => attachment.disposition !== 'inline' || attachment.filename,
  );
  if (attachments.length > MAIL_LIMITS.maxAttachments)
    throw new IngestError(
      `The e-mail has ${attachments.length} attachments; at most ${MAIL_LIMITS.maxAttachments} are read`,
    );
  let index = 0;
  for (const attachment of attachments) {
    progress('attachments', index++, attachments.length);
    const content =
      typeof attachment.content === 'string'
        ? new TextEncoder().encode(attachment.content)
        : new Uint8Array(attachment.content);
    if (content.length > MAIL_LIMITS.maxAttachmentBytes) continue;
    const detected = detectFormat({
      bytes: content,
      fileName: attachment.filename ?? '',
      mimeType: attachment.mimeType,
    });
    if (!('format' in detected) || !ATTACHMENT_FORMATS.has(detected.format)) continue;
    try {
      const parsed = await parseFile(content, detected.format, () => undefined, { ocr: false });
      if (!parsed.blocks.length) continue;
      blocks.push({
        kind: 'heading',
        level: 2,
        text: `Attachment: ${attachment.filename ?? FORMATS[detected.format].label}`,
      });
      blocks.push(
        ...parsed.blocks.map((block) =>
          block.kind === 'heading' ? { ...block, level: Math.min(block.level + 2, 6) } : block,
        ),
      );
    } catch (error) {
      // An unreadable attachment does not fail the message; it is named in the text instead.
      if (!(error instanceof IngestError)) throw error;
      blocks.push({
        kind: 'text',
        text: `Attachment ${attachment.filename ?? ''} could not be read: ${error.message}`,
      });
    }
  }
  return { blocks, ...(subject ? { title: subject } : {}) };
}

/** The blocks of a file of `format` (the format told at upload by knowledge.formats.ts). */
export async function parseFile(
  bytes: Uint8Array,
  format: Format,
  progress: ProgressFn,
  /** The OCR languages (false: no OCR, as for an e-mail's attachments; unset: English). */
  options: { ocr: OcrSetup | null | false } = { ocr: defaultOcrSetup() },
): Promise<ParsedDocument> {
  switch (format) {
    case 'pdf':
      return parsePdf(bytes, progress, options);
    case 'docx':
      return parseDocx(bytes);
    case 'xlsx':
      return parseXlsx(bytes, progress);
    case 'pptx':
      return parsePptx(bytes, progress);
    case 'odt':
      return parseOdt(bytes, progress);
    case 'ods':
      return parseOds(bytes, progress);
    case 'odp':
      return parseOdp(bytes, progress);
    case 'eml':
      return parseEml(bytes, progress);
    case 'png':
    case 'jpeg':
    case 'tiff':
      return parseImage(bytes, progress, options.ocr || null);
    case 'rtf':
      return parseRtf(Buffer.from(bytes).toString('latin1'));
    case 'html':
      return parseHtml(decodeText(bytes), { readability: true });
    case 'markdown':
      return parseMarkdown(decodeText(bytes));
    case 'csv':
      return parseCsv(decodeText(bytes), progress);
    case 'tsv':
      return parseCsv(decodeText(bytes), progress, true);
    case 'json':
      return parseJson(decodeText(bytes));
    case 'text':
      return parsePlainText(decodeText(bytes));
  }
}

/** What ingestion stores of a source: its text, language, chunks and how it was read. */
export interface PreparedDocument {
  content: string;
  language: string;
  config: string;
  chunks: string[];
  title?: string;
  units?: number;
  ocr?: { pages: number; confidence: number };
}

/** Blocks → the stored text, its language and its chunks (headings and table headers carried into each). */
export function prepare(parsed: ParsedDocument, progress: ProgressFn): PreparedDocument {
  const blocks = parsed.blocks
    .map((block) => (block.kind === 'table' ? block : { ...block, text: cleanText(block.text) }))
    .filter((block) => block.kind === 'table' || block.text);
  const content = cleanText(renderBlocks(blocks));
  const language = detectLanguage(content);
  progress('chunking', 0, null);
  const chunks = chunkBlocks(blocks, language);
  progress('chunking', chunks.length, chunks.length);
  return {
    content,
    language,
    config: textSearchConfig(language),
    chunks,
    ...(parsed.title ? { title: parsed.title } : {}),
    ...(parsed.units !== undefined ? { units: parsed.units } : {}),
    ...(parsed.ocr ? { ocr: parsed.ocr } : {}),
  };
}

/** The worker's whole task for a file: parse, then prepare. */
export async function parseAndPrepare(
  bytes: Uint8Array,
  format: Format,
  progress: ProgressFn,
  ocr: OcrSetup | null = defaultOcrSetup(),
): Promise<PreparedDocument> {
  return prepare(await parseFile(bytes, format, progress, { ocr }), progress);
}

/** The worker's task for a fetched web page. */
export function prepareHtml(html: string, progress: ProgressFn): PreparedDocument {
  return prepare(parseHtml(html, { readability: true }), progress);
}
