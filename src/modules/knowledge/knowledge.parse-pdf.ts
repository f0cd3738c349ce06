/**
 * PDF text through pdf.js (unpdf), page by page; pages without a text layer (scans) rendered
 * with @napi-rs/canvas and read by OCR (knowledge.ocr.ts: tesseract.js in the configured languages,
 * their data from the installed `@tesseract.js-data/*` packages); PNG, JPEG and TIFF images read by OCR.
 * pdf.js runs no document scripts (no JavaScript actions, no eval).
 */
import { createIsomorphicCanvasFactory, getDocumentProxy, renderPageAsImage } from 'unpdf';
import { IngestError, type Block, type ParsedDocument, type ProgressFn } from './knowledge.blocks.js';
import { createOcr, type OcrSetup } from './knowledge.ocr.js';

export const PDF_LIMITS = {
  /** Pages of one PDF read for text. */
  maxPages: 3000,
  /** Pages of one PDF read by OCR (a page takes seconds). */
  maxOcrPages: 200,
  /** A page whose text layer has fewer characters than this is read by OCR. */
  ocrBelowChars: 20,
  /** Scale of a rendered page (pdf.js units are 1/72 in: 2.5 ≈ 180 dpi). */
  renderScale: 2.5,
  /** Pixels of one image read by OCR. */
  maxImagePixels: 40_000_000,
};

interface PdfTextItem {
  str?: string;
  hasEOL?: boolean;
}

function pageText(items: PdfTextItem[]): string {
  let text = '';
  for (const item of items) {
    if (item.str !== undefined) text += item.str;
    if (item.hasEOL) text += '\n';
  }
  return text.trim();
}

export async function parsePdf(
  bytes: Uint8Array,
  progress: ProgressFn,
  options: { ocr: OcrSetup | null | false },
): Promise<ParsedDocument> {
  let pdf;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), {
      isEvalSupported: false,
      enableXfa: false,
      stopAtErrors: false,
    });
  } catch (error) {
    if ((error as Error).name === 'PasswordException')
      throw new IngestError('The PDF is encrypted (password protected); upload an unencrypted copy');
    throw new IngestError(`The PDF could not be read: ${(error as Error).message}`);
  }
  try {
    const pages = pdf.numPages;
    if (pages > PDF_LIMITS.maxPages)
      throw new IngestError(`The PDF has ${pages} pages; at most ${PDF_LIMITS.maxPages} are read, split it`);
    const texts: string[] = [];
    for (let number = 1; number <= pages; number++) {
      const page = await pdf.getPage(number);
      const content = await page.getTextContent();
      texts.push(pageText(content.items as PdfTextItem[]));
      page.cleanup();
      progress('extracting', number, pages);
    }
    const scanned = texts
      .map((text, index) => (text.replace(/\s/g, '').length < PDF_LIMITS.ocrBelowChars ? index : -1))
      .filter((i) => i >= 0);
    let ocr: ParsedDocument['ocr'];
    // OCR when the pages without text are not mere blanks among text pages: most pages, or the only text.
    const setup = options.ocr;
    const needsOcr =
      setup !== false && scanned.length > 0 && (scanned.length * 2 >= pages || texts.every((text) => !text));
    if (needsOcr) {
      if (scanned.length > PDF_LIMITS.maxOcrPages)
        throw new IngestError(
          `The PDF has ${scanned.length} scanned pages; at most ${PDF_LIMITS.maxOcrPages} are read by OCR, split it`,
        );
      const reader = await createOcr(setup);
      // Rendering needs a document opened with a canvas factory (@napi-rs/canvas): opened again, for the scans only.
      const canvasImport = () => import('@napi-rs/canvas');
      const CanvasFactory = await createIsomorphicCanvasFactory(canvasImport);
      const rendered = await getDocumentProxy(new Uint8Array(bytes), {
        isEvalSupported: false,
        enableXfa: false,
        CanvasFactory,
      });
      try {
        let sum = 0;
        let done = 0;
        for (const index of scanned) {
          const image = await renderPageAsImage(rendered, index + 1, { canvasImport, scale: PDF_LIMITS.renderScale });
          const { text, confidence } = await reader.read(new Uint8Array(image));
          texts[index] = text.trim();
          sum += confidence;
          progress('ocr', ++done, scanned.length);
        }
        ocr = { pages: scanned.length, confidence: Math.round((sum / scanned.length) * 10) / 10 };
      } finally {
        await reader.close();
        await rendered.destroy().catch(() => undefined);
      }
    }
    const blocks: Block[] = texts.filter(Boolean).map((text) => ({ kind: 'text', text }));
    return { blocks, units: pages, ...(ocr ? { ocr } : {}) };
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}

/** Width and height from an image's header (PNG IHDR, JPEG SOFn, TIFF IFD), without decoding it. */
export function imageSize(bytes: Uint8Array): { width: number; height: number } | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 24 && bytes[0] === 0x89 && bytes[1] === 0x50)
    return { width: view.getUint32(16), height: view.getUint32(20) };
  if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    for (let offset = 2; offset + 9 < bytes.length;) {
      if (bytes[offset] !== 0xff) return null;
      const marker = bytes[offset + 1]!;
      const length = view.getUint16(offset + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
        return { height: view.getUint16(offset + 5), width: view.getUint16(offset + 7) };
      offset += 2 + length;
    }
    return null;
  }
  if (bytes.length >= 8 && (bytes[0] === 0x49 || bytes[0] === 0x4d)) {
    const little = bytes[0] === 0x49;
    const ifd = view.getUint32(4, little);
    if (ifd + 2 > bytes.length) return null;
    const count = view.getUint16(ifd, little);
    let width = 0;
    let height = 0;
    for (let i = 0; i < count && ifd + 2 + i * 12 + 12 <= bytes.length; i++) {
      const entry = ifd + 2 + i * 12;
      const tag = view.getUint16(entry, little);
      const type = view.getUint16(entry + 2, little);
      const value = type === 3 ? view.getUint16(entry + 8, little) : view.getUint32(entry + 8, little);
      if (tag === 256) width = value;
      if (tag === 257) height = value;
    }
    return width && height ? { width, height } : null;
  }
  return null;
}

export async function parseImage(
  bytes: Uint8Array,
  progress: ProgressFn,
  ocr: OcrSetup | null,
): Promise<ParsedDocument> {
  const size = imageSize(bytes);
  if (!size) throw new IngestError('The image could not be read (corrupt, or not PNG, JPEG or TIFF)');
  if (size.width * size.height > PDF_LIMITS.maxImagePixels)
    throw new IngestError(
      `The image is ${size.width}×${size.height} pixels; at most ${PDF_LIMITS.maxImagePixels / 1_000_000} megapixels are read by OCR`,
    );
  progress('ocr', 0, 1);
  const reader = await createOcr(ocr);
  try {
    const { text, confidence } = await reader.read(bytes);
    progress('ocr', 1, 1);
    const body = text.trim();
    return {
      blocks: body ? [{ kind: 'text', text: body }] : [],
      units: 1,
      ocr: { pages: 1, confidence: Math.round(confidence * 10) / 10 },
    };
  } catch (error) {
    if (error instanceof IngestError) throw error;
    throw new IngestError(
      `The image could not be read by OCR: ${String((error as Error)?.message ?? error).slice(0, 200)}`,
    );
  } finally {
    await reader.close();
  }
}
