/**
 * The file types the knowledge base reads, told by their content first (magic bytes, a zip's
 * entries, the shape of text) and by the file's name and declared type where content alone
 * cannot tell (Markdown from plain text, CSV from text). Upload-time limits per type.
 */
import { zipDirectory, zipDirectoryProblem } from './knowledge.zip.js';
import { unzipSync } from 'fflate';

export const FORMATS = {
  pdf: { mime: 'application/pdf', label: 'PDF', extensions: ['pdf'] },
  docx: {
    mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    label: 'DOCX',
    extensions: ['docx'],
  },
  xlsx: {
    mime: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    label: 'XLSX',
    extensions: ['xlsx'],
  },
  pptx: {
    mime: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    label: 'PPTX',
    extensions: ['pptx'],
  },
  odt: { mime: 'application/vnd.oasis.opendocument.text', label: 'ODT', extensions: ['odt'] },
  ods: { mime: 'application/vnd.oasis.opendocument.spreadsheet', label: 'ODS', extensions: ['ods'] },
  odp: { mime: 'application/vnd.oasis.opendocument.presentation', label: 'ODP', extensions: ['odp'] },
  rtf: { mime: 'application/rtf', label: 'RTF', extensions: ['rtf'] },
  eml: { mime: 'message/rfc822', label: 'e-mail (EML)', extensions: ['eml'] },
  html: { mime: 'text/html', label: 'HTML', extensions: ['html', 'htm', 'xhtml'] },
  markdown: { mime: 'text/markdown', label: 'Markdown', extensions: ['md', 'markdown', 'mdown', 'mkd'] },
  csv: { mime: 'text/csv', label: 'CSV', extensions: ['csv'] },
  tsv: { mime: 'text/tab-separated-values', label: 'TSV', extensions: ['tsv', 'tab'] },
  json: { mime: 'application/json', label: 'JSON', extensions: ['json'] },
  text: { mime: 'text/plain', label: 'plain text', extensions: ['txt', 'text', 'log'] },
  png: { mime: 'image/png', label: 'PNG', extensions: ['png'] },
  jpeg: { mime: 'image/jpeg', label: 'JPEG', extensions: ['jpg', 'jpeg'] },
  tiff: { mime: 'image/tiff', label: 'TIFF', extensions: ['tif', 'tiff'] },
} as const;

export type Format = keyof typeof FORMATS;

/** Declared types that name a format besides its own MIME type. */
const ALIASES: Record<string, Format> = {
  'application/x-pdf': 'pdf',
  'text/rtf': 'rtf',
  'application/x-rtf': 'rtf',
  'text/x-markdown': 'markdown',
  'application/csv': 'csv',
  'text/x-csv': 'csv',
  'text/json': 'json',
  'application/xhtml+xml': 'html',
  'image/jpg': 'jpeg',
  'image/pjpeg': 'jpeg',
  'application/vnd.oasis.opendocument.text-template': 'odt',
};

const BY_MIME = new Map<string, Format>([
  ...Object.entries(FORMATS).map(([format, info]) => [info.mime, format as Format] as const),
  ...Object.entries(ALIASES),
]);
const BY_EXTENSION = new Map<string, Format>(
  Object.entries(FORMATS).flatMap(([format, info]) => info.extensions.map((ext) => [ext, format as Format] as const)),
);

/** Upload-time size limits per type (below MAX_UPLOAD_MB, which bounds every upload). */
export const FORMAT_MAX_BYTES: Partial<Record<Format, number>> = {
  csv: 64 * 1024 * 1024,
  tsv: 64 * 1024 * 1024,
  json: 32 * 1024 * 1024,
  text: 32 * 1024 * 1024,
  markdown: 32 * 1024 * 1024,
  html: 16 * 1024 * 1024,
  rtf: 32 * 1024 * 1024,
  eml: 32 * 1024 * 1024,
  png: 20 * 1024 * 1024,
  jpeg: 20 * 1024 * 1024,
  tiff: 40 * 1024 * 1024,
};

export const supportedLabels = () => [...new Set(Object.values(FORMATS).map((info) => info.label))].join(', ');

export type Detection = { format: Format } | { status: 413 | 415 | 400; message: string };

type Content = Format | 'zip' | 'ole' | 'binary' | 'textual';

/** What the bytes are, as far as content alone tells. */
function sniff(bytes: Uint8Array): Content {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  const pdfAt = head.indexOf('%PDF-');
  if (pdfAt !== -1 && pdfAt < 1024) return 'pdf';
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) return 'zip';
  if (bytes[0] === 0x89 && head.startsWith('PNG', 1)) return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (head.startsWith('II*\0') || head.startsWith('MM\0*')) return 'tiff';
  if (bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0) return 'ole';
  if (head.startsWith('{\\rtf')) return 'rtf';
  const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
  if (!utf16 && bytes.subarray(0, 8192).includes(0)) return 'binary';
  return 'textual';
}

/** OOXML or ODF told by a zip's entries; null for another zip. */
function zipKind(bytes: Uint8Array, names: string[]): Format | null {
  if (names.includes('mimetype')) {
    let mimetype = '';
    try {
      mimetype = new TextDecoder()
        .decode(
          unzipSync(bytes, { filter: (file) => file.name === 'mimetype' && file.originalSize < 200 }).mimetype ??
            new Uint8Array(),
        )
        .trim();
    } catch {
      mimetype = '';
    }
    for (const kind of ['odt', 'ods', 'odp'] as const) {
      if (mimetype === FORMATS[kind].mime || mimetype.startsWith(`${FORMATS[kind].mime}-`)) return kind;
    }
  }
  if (names.includes('[Content_Types].xml')) {
    if (names.includes('word/document.xml')) return 'docx';
    if (names.includes('xl/workbook.xml')) return 'xlsx';
    if (names.includes('ppt/presentation.xml')) return 'pptx';
  }
  return null;
}

/** Among text, which format: the declared type and name decide, the content confirms where it can. */
function textKind(bytes: Uint8Array, claimed: Format | null): Format | { status: 415; message: string } {
  const head = new TextDecoder('utf-8').decode(bytes.subarray(0, 4096)).replace(/^\ufeff/, '');
  const trimmed = head.trimStart();
  if (claimed === 'json') {
    if (!/^[[{"\d\-tfn]/.test(trimmed))
      return { status: 415, message: 'The file was declared as JSON but its content is not' };
    return 'json';
  }
  if (claimed && ['html', 'markdown', 'csv', 'tsv', 'text', 'eml'].includes(claimed)) return claimed;
  if (claimed) {
    return { status: 415, message: `The file was declared as ${FORMATS[claimed].label} but its content is text` };
  }
  if (/^(<!doctype html|<html[\s>]|<\?xml[^>]*>\s*<html)/i.test(trimmed)) return 'html';
  if (/^[[{]/.test(trimmed)) return 'json';
  if (
    /^(?:(?:Received|Return-Path|From|To|Subject|Date|Message-ID|MIME-Version|Delivered-To|X-[\w-]+):[^\n]*\r?\n)+/i.test(
      head,
    ) &&
    /^(From|Subject|Date|MIME-Version):/im.test(head)
  )
    return 'eml';
  return 'text';
}

/**
 * The format of an upload: the content decides between families (PDF, zip-based office files,
 * images, RTF, text); the declared type, else the file's extension, names the format inside a
 * family. A declared type or name that the content contradicts is a 415; an archive whose
 * directory exceeds the limits is a 413.
 */
export function detectFormat(file: { bytes: Uint8Array; fileName: string; mimeType: string }): Detection {
  const declared = file.mimeType.split(';')[0]!.trim().toLowerCase();
  const extension = /\.([a-z0-9]{1,10})$/i.exec(file.fileName)?.[1]?.toLowerCase() ?? '';
  const byMime = BY_MIME.get(declared) ?? null;
  const byName = BY_EXTENSION.get(extension) ?? null;
  // Browsers on Windows send a .csv as application/vnd.ms-excel: the name and content decide.
  const generic =
    !declared || ['application/octet-stream', 'binary/octet-stream', 'application/vnd.ms-excel'].includes(declared);
  if (!generic && !byMime && !(declared.startsWith('text/') && byName)) {
    return {
      status: 415,
      message: `Unsupported file type ${declared.slice(0, 100)} (${file.fileName.slice(0, 100)}); supported: ${supportedLabels()}`,
    };
  }
  // text/plain is what many clients send for any text file: the name says which.
  const claimed = byMime === 'text' && byName ? byName : (byMime ?? byName);
  const content = sniff(file.bytes);
  const what = claimed ? FORMATS[claimed].label : 'a supported type';
  const contradiction = (found: string): Detection => ({
    status: 415,
    message: `The file was declared as ${what} but its content is ${found} (${file.fileName.slice(0, 100)})`,
  });
  let format: Format;
  if (content === 'ole')
    return {
      status: 415,
      message: `Legacy Office binary files (.doc, .xls, .ppt) are not read; save it as DOCX, XLSX or PPTX (${file.fileName.slice(0, 100)})`,
    };
  if (content === 'binary')
    return claimed
      ? contradiction('binary data')
      : {
          status: 415,
          message: `Unsupported binary file (${file.fileName.slice(0, 100)}); supported: ${supportedLabels()}`,
        };
  if (content === 'zip') {
    const directory = zipDirectory(file.bytes);
    if (!directory)
      return {
        status: 415,
        message: `The file is a corrupt or truncated zip archive (${file.fileName.slice(0, 100)})`,
      };
    const problem = zipDirectoryProblem(directory);
    if (problem) return { status: 413, message: problem };
    const kind = zipKind(
      file.bytes,
      directory.map((entry) => entry.name),
    );
    if (!kind) {
      // A zip named as an office file whose parts are missing fails at extraction with the reason.
      if (claimed && ['docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp'].includes(claimed)) return { format: claimed };
      return claimed
        ? contradiction('a zip archive of another kind')
        : { status: 415, message: 'Unsupported zip archive: not an OOXML or ODF document' };
    }
    if (claimed && claimed !== kind) return contradiction(FORMATS[kind].label);
    format = kind;
  } else if (content === 'textual') {
    const kind = textKind(file.bytes, claimed);
    if (typeof kind !== 'string') return kind;
    format = kind;
  } else {
    if (claimed && claimed !== content) return contradiction(FORMATS[content].label);
    format = content;
  }
  const max = FORMAT_MAX_BYTES[format];
  if (max !== undefined && file.bytes.length > max)
    return {
      status: 413,
      message: `${FORMATS[format].label} files may be at most ${Math.round(max / 1024 / 1024)} MiB`,
    };
  return { format };
}

/** The format of a stored document from its MIME type (as recorded at upload). */
export function formatOfMime(mime: string | null): Format | null {
  return BY_MIME.get((mime ?? '').toLowerCase()) ?? null;
}
