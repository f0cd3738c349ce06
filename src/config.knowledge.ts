/**
 * The knowledge base's settings (config.ts holds them under `knowledge`): uploads, website
 * fetches and crawls, search indexes, embeddings and the languages of OCR.
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { bool, ConfigError, hostList, int, modelsDir, oneOf, str, url, type Env } from './config.parse.js';

/** A language OCR reads: its tesseract code and the folder holding `<code>.traineddata.gz`. */
export interface OcrLanguage {
  code: string;
  dataDir: string;
}

/** At most this many OCR languages: each one loaded costs every OCR worker memory and time per page. */
export const MAX_OCR_LANGUAGES = 8;

const require = createRequire(import.meta.url);

/**
 * The folder of a language's OCR data in its installed npm package `@tesseract.js-data/<code>`
 * (LSTM data, `4.0.0_best_int`), null when the package is not installed. Nothing is downloaded.
 */
export function ocrDataDir(code: string): string | null {
  let root: string;
  try {
    root = path.dirname(require.resolve(`@tesseract.js-data/${code}/package.json`));
  } catch {
    return null;
  }
  const dir = path.join(root, '4.0.0_best_int');
  return existsSync(path.join(dir, `${code}.traineddata.gz`)) ? dir : null;
}

/**
 * OCR_LANGUAGES: tesseract codes (`eng`, `fra`, `chi_sim`), comma-separated. A language whose data
 * package is not installed refuses the start: a scan would otherwise be read in the wrong script.
 */
function ocrLanguages(env: Env): OcrLanguage[] {
  const codes = [
    ...new Set(
      (str(env, 'OCR_LANGUAGES') ?? 'eng')
        .split(/[,+]/)
        .map((code) => code.trim())
        .filter(Boolean),
    ),
  ];
  if (codes.length === 0) throw new ConfigError('OCR_LANGUAGES', 'must name at least one language (e.g. "eng")');
  if (codes.length > MAX_OCR_LANGUAGES)
    throw new ConfigError('OCR_LANGUAGES', `names ${codes.length} languages; at most ${MAX_OCR_LANGUAGES} are read`);
  return codes.map((code) => {
    if (!/^[a-z]{3}(_[a-z]{3,4})?$/.test(code))
      throw new ConfigError(
        'OCR_LANGUAGES',
        `holds "${code.slice(0, 40)}", not a tesseract language code such as eng, fra or chi_sim`,
      );
    const dataDir = ocrDataDir(code);
    if (!dataDir)
      throw new ConfigError(
        'OCR_LANGUAGES',
        `names "${code}", whose OCR data is not installed: add the package @tesseract.js-data/${code} (npm install @tesseract.js-data/${code})`,
      );
    return { code, dataDir };
  });
}

/** Knowledge base: uploads, website fetches and embeddings (documents and collections families). */
export interface KnowledgeConfig {
  /** MAX_UPLOAD_MB: file uploads and article bodies above it are refused with 413. */
  maxUploadBytes: number;
  /** ALLOW_PRIVATE_URLS: let website uploads reach loopback/private/link-local addresses (tests only). */
  allowPrivateUrls: boolean;
  fetchTimeoutMs: number;
  fetchMaxBytes: number;
  allowedHosts: string[]; // WEBSITE_ALLOWED_HOSTS: host[:port], comma-separated, fetched though private
  crawl: { concurrency: number; delayMs: number }; // CRAWL_CONCURRENCY fetches at once, CRAWL_DELAY_MS apart
  /**
   * OCR_LANGUAGES (default `eng`): the languages scans and images are read in, as tesseract codes
   * (`eng,fra,deu`), each with its data from the installed package `@tesseract.js-data/<code>`.
   */
  ocrLanguages: OcrLanguage[];
  /**
   * SEARCH_MEMORY_MAX_CHUNKS: a company's knowledge base with at most this many chunks is also
   * held in memory, so that its searches need no database round trip (0: every search in SQL).
   * All companies held together stay within four times this many chunks.
   */
  searchMemoryMaxChunks: number;
  /**
   * SEARCH_INDEX_MAX_CHUNKS: a larger knowledge base, up to this many chunks, has its full-text
   * lane (BM25) answered from an in-process index (0: in SQL); SEARCH_INDEX_BUDGET_MB bounds the
   * memory of those indexes for all companies together.
   */
  searchIndexMaxChunks: number;
  searchIndexBudgetBytes: number;
  embeddings: {
    /** EMBEDDINGS_PROVIDER: `openai` (an OpenAI-compatible API), `local` (transformers.js) or `none`. */
    provider: 'openai' | 'local' | 'none';
    url: string | undefined;
    apiKey: string | undefined;
    model: string;
    /** MODELS_DIR: local models laid out as `<org>/<model>` (transformers.js convention). */
    modelsDir: string;
    /** EMBEDDINGS_ALLOW_DOWNLOAD: let the local embedder fetch its model from the model hub. */
    allowDownload: boolean;
    batchSize: number;
    timeoutMs: number;
  };
}

export function knowledgeConfig(env: Env): KnowledgeConfig {
  const embeddingsUrl = url(env, 'EMBEDDINGS_URL', ['http:', 'https:']);
  const provider = oneOf(
    env,
    'EMBEDDINGS_PROVIDER',
    ['openai', 'local', 'none'] as const,
    embeddingsUrl ? 'openai' : 'local',
  );
  if (provider === 'openai' && !embeddingsUrl)
    throw new ConfigError('EMBEDDINGS_URL', 'is required when EMBEDDINGS_PROVIDER is openai');
  const defaultModel =
    provider === 'openai' ? 'text-embedding-3-small' : 'Xenova/paraphrase-multilingual-MiniLM-L12-v2';
  return {
    maxUploadBytes: int(env, 'MAX_UPLOAD_MB', 25, 1, 2048) * 1024 * 1024,
    allowPrivateUrls: bool(env, 'ALLOW_PRIVATE_URLS', false),
    fetchTimeoutMs: int(env, 'WEBSITE_FETCH_TIMEOUT_MS', 15_000, 100, 300_000),
    fetchMaxBytes: int(env, 'WEBSITE_MAX_MB', 5, 1, 100) * 1024 * 1024,
    allowedHosts: hostList(env, 'WEBSITE_ALLOWED_HOSTS'),
    crawl: { concurrency: int(env, 'CRAWL_CONCURRENCY', 2, 1, 8), delayMs: int(env, 'CRAWL_DELAY_MS', 500, 0, 60_000) },
    ocrLanguages: ocrLanguages(env),
    searchMemoryMaxChunks: int(env, 'SEARCH_MEMORY_MAX_CHUNKS', 10_000, 0, 1_000_000),
    searchIndexMaxChunks: int(env, 'SEARCH_INDEX_MAX_CHUNKS', 2_000_000, 0, 50_000_000),
    searchIndexBudgetBytes: int(env, 'SEARCH_INDEX_BUDGET_MB', 1024, 1, 1_048_576) * 1024 * 1024,
    embeddings: {
      provider,
      url: embeddingsUrl,
      apiKey: str(env, 'EMBEDDINGS_API_KEY'),
      model: str(env, 'EMBEDDINGS_MODEL') ?? defaultModel,
      modelsDir: modelsDir(env),
      // Tests never reach for the model hub unless asked to.
      allowDownload: bool(env, 'EMBEDDINGS_ALLOW_DOWNLOAD', str(env, 'NODE_ENV') !== 'test'),
      batchSize: int(env, 'EMBEDDINGS_BATCH_SIZE', 64, 1, 2048),
      timeoutMs: int(env, 'EMBEDDINGS_TIMEOUT_MS', 30_000, 100, 600_000),
    },
  };
}
