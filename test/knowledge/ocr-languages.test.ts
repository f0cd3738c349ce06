/**
 * OCR in the configured languages (OCR_LANGUAGES): each language's data from its installed
 * `@tesseract.js-data/<code>` package (French from the devDependency `@tesseract.js-data/fra`),
 * a language without its package refused at start, and French accents read back from an image.
 */
import { existsSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { defaultOcrSetup, ocrSetup } from '../../src/modules/knowledge/knowledge.ocr.js';
import { parseAndPrepare } from '../../src/modules/knowledge/knowledge.parse.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant, type TestTenant } from '../helpers/factories.js';
import { makeTextImage } from './file-builders.js';
import { multipart, waitForTask } from './helpers.js';

const FRENCH = [
  'Les remboursements sont crédités sous cinq jours ouvrés.',
  'Le délai de rétractation court à réception du colis.',
  'Où êtes-vous ? Nous répondons très vite.',
];

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(env)}`);
}

describe('OCR_LANGUAGES', () => {
  it('is English by default, and lists installed languages with their data folders', () => {
    expect(loadConfig({}).knowledge.ocrLanguages.map((language) => language.code)).toEqual(['eng']);
    const languages = loadConfig({ OCR_LANGUAGES: ' eng, fra ,eng' }).knowledge.ocrLanguages;
    expect(languages.map((language) => language.code)).toEqual(['eng', 'fra']);
    for (const { code, dataDir } of languages)
      expect(existsSync(path.join(dataDir, `${code}.traineddata.gz`))).toBe(true);
  });

  it('refuses the start for a language whose data package is not installed, saying what to install', () => {
    const error = configError({ OCR_LANGUAGES: 'eng,tha' });
    expect(error.variable).toBe('OCR_LANGUAGES');
    expect(error.message).toMatch(/"tha".*not installed.*@tesseract\.js-data\/tha/);
  });

  it('refuses codes that are not tesseract language codes, an empty list and too many languages', () => {
    for (const value of ['english', 'fr', 'eng;fra', '../eng', 'eng,\u0000', ',']) {
      expect(configError({ OCR_LANGUAGES: value }).variable, value).toBe('OCR_LANGUAGES');
    }
    expect(configError({ OCR_LANGUAGES: 'eng,fra,deu,spa,por,ita,nld,pol,swe' }).message).toMatch(/at most 8/);
  });

  it('reads several languages from one folder of links to their packages, removed on close', () => {
    const { setup, close } = ocrSetup(loadConfig({ OCR_LANGUAGES: 'eng,fra' }).knowledge.ocrLanguages);
    expect(setup.languages).toBe('eng+fra');
    for (const code of ['eng', 'fra'])
      expect(lstatSync(path.join(setup.langPath, `${code}.traineddata.gz`)).isSymbolicLink()).toBe(true);
    close();
    expect(existsSync(setup.langPath)).toBe(false);
    // One language: its package's own folder, nothing made.
    const english = ocrSetup(loadConfig({}).knowledge.ocrLanguages);
    expect(english.setup).toEqual(defaultOcrSetup());
    english.close();
    expect(existsSync(english.setup.langPath)).toBe(true);
  });
});

describe('OCR of a French scan', () => {
  let t: TestApp;
  let tenant: TestTenant;
  beforeAll(async () => {
    t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none', OCR_LANGUAGES: 'eng,fra' });
    tenant = await createTenant(t.container, 'developer');
  });
  afterAll(async () => t?.close());

  it('reads the accented words back when French is configured', async () => {
    const form = multipart(
      { document_title: 'Conditions' },
      { name: 'conditions.png', type: 'image/png', bytes: makeTextImage(FRENCH) },
    );
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/file',
      headers: { ...tenant.headers, ...form.headers },
      payload: form.payload,
    });
    expect(response.statusCode, response.body).toBe(202);
    const task = await waitForTask(t, tenant.headers, response.json().task_id, 120_000);
    expect(task.status, task.error).toBe('completed');
    const doc = (
      await t.app.inject({ method: 'GET', url: `/api/public/documents/${task.document_id}`, headers: tenant.headers })
    ).json();
    expect(doc).toMatchObject({ language: 'fr', ocr_pages: 1 });
    for (const words of ['crédités', 'ouvrés', 'délai de rétractation', 'à réception', 'Où êtes-vous', 'très vite'])
      expect(doc.content, words).toContain(words);
  });

  it('loses accents with English alone (the language setting is what reads them)', async () => {
    const english = await parseAndPrepare(makeTextImage(FRENCH), 'png', () => {}, defaultOcrSetup());
    expect(english.content).toContain('crédités'); // the same image, read
    expect(english.content).not.toContain('Où êtes-vous');
  });
});
