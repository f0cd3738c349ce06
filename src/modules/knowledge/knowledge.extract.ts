/**
 * Text extraction of uploaded files and fetched pages: PDF through pdf.js (unpdf), DOCX through
 * mammoth, HTML through Readability on a linkedom DOM. Failures are IngestErrors whose message
 * becomes the task's `error`.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import mammoth from 'mammoth';
import { extractText, getDocumentProxy } from 'unpdf';

/** A failure of one document's ingestion that retrying will not fix. */
export class IngestError extends Error {
  override readonly name = 'IngestError';
}

export const PDF_TYPE = 'application/pdf';
export const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** The file type told by the first bytes: `pdf`, `zip` (a DOCX is a zip) or null. */
export function sniffType(bytes: Uint8Array): 'pdf' | 'zip' | null {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  if (head.includes('%PDF-') && head.indexOf('%PDF-') < 1024) return 'pdf';
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) return 'zip';
  return null;
}

export async function extractPdf(bytes: Uint8Array): Promise<string> {
  let pdf;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes));
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'PasswordException')
      throw new IngestError('The PDF is encrypted (password protected); upload an unencrypted copy');
    throw new IngestError(`The PDF could not be read: ${(error as Error).message}`);
  }
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    const pages = (Array.isArray(text) ? text : [text]).map((page) => page.trim()).filter(Boolean);
    return pages.join('\n\n');
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}

export async function extractDocx(bytes: Uint8Array): Promise<string> {
  try {
    const { value } = await mammoth.extractRawText({ buffer: Buffer.from(bytes) });
    return value;
  } catch (error) {
    throw new IngestError(`The file is not a readable DOCX document: ${(error as Error).message}`);
  }
}

/** The readable text and title of an HTML page (Readability, else the body's text). */
export function extractHtml(html: string, url: string): { title: string; text: string } {
  const { document } = parseHTML(html);
  let title = (document.title ?? '').trim();
  try {
    const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], {
      charThreshold: 100,
    }).parse();
    if (article?.textContent?.trim()) {
      return { title: article.title?.trim() || title, text: article.textContent };
    }
  } catch {
    // Readability gives up on some pages; the body text below is the fallback.
  }
  const fallback = parseHTML(html).document;
  for (const node of fallback.querySelectorAll('script, style, noscript, template')) node.remove();
  title ||= url;
  return { title, text: fallback.body?.textContent ?? fallback.documentElement?.textContent ?? '' };
}

/** Normalises extracted text: unified newlines, no runs of blank lines or spaces. */
export function cleanText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
