/**
 * OCR with tesseract.js in the languages the service is configured for (OCR_LANGUAGES), their
 * data read from the installed `@tesseract.js-data/<code>` packages: nothing is downloaded and
 * nothing cached (cacheMethod `none`).
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ocrDataDir, type OcrLanguage } from '../../config.knowledge.js';
import { IngestError } from './knowledge.blocks.js';

/** What an OCR reader needs (sent to the CPU pool with each document): `eng+fra` and the folder holding their data. */
export interface OcrSetup {
  languages: string;
  langPath: string;
}

/**
 * The setup for the configured languages. tesseract.js reads every language from one folder
 * (`${langPath}/${code}.traineddata.gz`) and each package has its own: one language is read from
 * its package's folder; several from a private temporary folder of links to each package's data
 * file (made here, removed by `close`).
 */
export function ocrSetup(languages: readonly OcrLanguage[]): { setup: OcrSetup; close(): void } {
  const codes = languages.map((language) => language.code).join('+');
  if (languages.length === 1) return { setup: { languages: codes, langPath: languages[0]!.dataDir }, close() {} };
  const folder = mkdtempSync(path.join(tmpdir(), 'switchboard-ocr-'));
  for (const { code, dataDir } of languages)
    symlinkSync(path.join(dataDir, `${code}.traineddata.gz`), path.join(folder, `${code}.traineddata.gz`));
  return {
    setup: { languages: codes, langPath: folder },
    close: () => rmSync(folder, { recursive: true, force: true }),
  };
}

/** English from `@tesseract.js-data/eng`: the setup of a reader not told otherwise (null when not installed). */
export function defaultOcrSetup(): OcrSetup | null {
  const dataDir = ocrDataDir('eng');
  return dataDir ? { languages: 'eng', langPath: dataDir } : null;
}

/** Reads images by OCR with one tesseract worker for the document; `close` ends it. */
export async function createOcr(setup: OcrSetup | null) {
  if (!setup) throw new IngestError('OCR is not available: the package @tesseract.js-data/eng is not installed');
  const { createWorker } = await import('tesseract.js');
  // tesseract.js reads `${langPath}/<code>.traineddata.gz` for each language; cacheMethod none: nothing written, nothing fetched.
  const worker = await createWorker(setup.languages, 1, { langPath: setup.langPath, cacheMethod: 'none', gzip: true });
  return {
    async read(image: Uint8Array): Promise<{ text: string; confidence: number }> {
      const { data } = await worker.recognize(Buffer.from(image));
      return { text: data.text, confidence: data.confidence };
    },
    close: () => worker.terminate(),
  };
}
