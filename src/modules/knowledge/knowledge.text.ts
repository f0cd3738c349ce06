/**
 * Text rules of the knowledge base: language detection, the PostgreSQL text-search
 * configuration of a language, and sentence-boundary chunking with overlap.
 */
import { franc } from 'franc-min';
import { recordOf, type Block } from './knowledge.blocks.js';
import { languageOfText } from './knowledge.terms.js';

/** ISO 639-3 (franc) → ISO 639-1 code and the PostgreSQL text-search configuration. */
const LANGUAGES: Record<string, { code: string; config: string }> = {
  eng: { code: 'en', config: 'english' },
  arb: { code: 'ar', config: 'arabic' },
  fra: { code: 'fr', config: 'french' },
  deu: { code: 'de', config: 'german' },
  spa: { code: 'es', config: 'spanish' },
  por: { code: 'pt', config: 'portuguese' },
  ita: { code: 'it', config: 'italian' },
  nld: { code: 'nl', config: 'dutch' },
  rus: { code: 'ru', config: 'russian' },
  tur: { code: 'tr', config: 'turkish' },
  ind: { code: 'id', config: 'indonesian' },
  hin: { code: 'hi', config: 'hindi' },
  swe: { code: 'sv', config: 'swedish' },
};

const CONFIG_BY_CODE: Record<string, string> = Object.fromEntries(
  Object.values(LANGUAGES).map(({ code, config }) => [code, config]),
);

const ARABIC_LETTERS = /[\u0600-\u06FF\u0750-\u077F\u08A0-\u08FF]/g;
const LATIN_LETTERS = /[A-Za-z]/g;

/**
 * The language of `text` as an ISO 639-1 code (`und` when it cannot be told). Script decides
 * first (a text mostly in Arabic letters is Arabic); franc decides among Latin-script languages,
 * with English as the answer for short Latin text.
 */
export function detectLanguage(text: string): string {
  const sample = text.slice(0, 5000);
  const arabic = sample.match(ARABIC_LETTERS)?.length ?? 0;
  const latin = sample.match(LATIN_LETTERS)?.length ?? 0;
  if (arabic + latin === 0) return 'und';
  if (arabic > latin) return 'ar';
  // Too short for franc's trigrams (a question): function words and letters decide.
  if (sample.length < 40) return languageOfText(sample);
  const guess = franc(sample, { minLength: 10, only: Object.keys(LANGUAGES) });
  return LANGUAGES[guess]?.code ?? 'en';
}

/** The text-search configuration for a language code; `simple` (no stemming) when none fits. */
export function textSearchConfig(language: string): string {
  return CONFIG_BY_CODE[language] ?? 'simple';
}

export interface ChunkOptions {
  /** Target length in characters. */
  size: number;
  /** Characters of trailing sentences repeated at the start of the next chunk. */
  overlap: number;
}

export const DEFAULT_CHUNKING: ChunkOptions = { size: 800, overlap: 150 };

function sentences(text: string, language: string): string[] {
  const segmenter = new Intl.Segmenter(language === 'und' ? 'en' : language, { granularity: 'sentence' });
  const out: string[] = [];
  for (const { segment } of segmenter.segment(text)) {
    const trimmed = segment.replace(/\s+/g, ' ').trim();
    if (trimmed) out.push(trimmed);
  }
  return out;
}

/** Splits a sentence longer than `size` at word boundaries. */
function splitLong(sentence: string, size: number): string[] {
  if (sentence.length <= size) return [sentence];
  const parts: string[] = [];
  let current = '';
  for (const word of sentence.split(' ')) {
    if (current && current.length + word.length + 1 > size) {
      parts.push(current);
      current = '';
    }
    current = current ? `${current} ${word}` : word.length > size ? word.slice(0, size) : word;
  }
  if (current) parts.push(current);
  return parts;
}

/**
 * Chunks of about `size` characters that end on sentence boundaries; each chunk after the first
 * starts with the last sentences (up to `overlap` characters) of the one before.
 */
export function chunkText(text: string, language: string, options: ChunkOptions = DEFAULT_CHUNKING): string[] {
  const units = sentences(text, language).flatMap((sentence) => splitLong(sentence, options.size));
  const chunks: string[] = [];
  let current: string[] = [];
  let length = 0;
  let fresh = 0;
  for (const unit of units) {
    if (fresh > 0 && length + unit.length + 1 > options.size) {
      chunks.push(current.join(' '));
      const carried: string[] = [];
      let carriedLength = 0;
      for (let i = current.length - 1; i >= 0; i--) {
        const sentence = current[i]!;
        if (carriedLength + sentence.length > options.overlap) break;
        carried.unshift(sentence);
        carriedLength += sentence.length + 1;
      }
      current = carried;
      length = carriedLength;
      fresh = 0;
    }
    current.push(unit);
    length += unit.length + 1;
    fresh++;
  }
  if (fresh > 0) chunks.push(current.join(' '));
  return chunks;
}

/** Normalises extracted text: unified newlines, no runs of blank lines or spaces. */
export function cleanText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/\0/g, '')
    .replace(/[ \t\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * Chunks of a structured document: each section's text chunked on sentence boundaries under
 * the path of its headings (`Setup > Wi-Fi`), each table's rows as records (`Header: value; …`)
 * grouped up to the chunk size, the table's name and columns repeated at the top of every chunk
 * of its rows. A document of plain text alone chunks exactly as `chunkText`.
 */
export function chunkBlocks(blocks: Block[], language: string, options: ChunkOptions = DEFAULT_CHUNKING): string[] {
  const chunks: string[] = [];
  const path: { level: number; text: string }[] = [];
  let section: string[] = [];
  const heading = () => path.map((entry) => entry.text).join(' > ');
  const flush = () => {
    const text = section.join('\n').trim();
    section = [];
    if (!text) return;
    const prefix = heading();
    const budget = Math.max(options.size - (prefix ? prefix.length + 1 : 0), options.size / 2);
    for (const chunk of chunkText(text, language, { size: budget, overlap: options.overlap }))
      chunks.push(prefix ? `${prefix}\n${chunk}` : chunk);
  };
  for (const block of blocks) {
    if (block.kind === 'heading') {
      flush();
      while (path.length && path.at(-1)!.level >= block.level) path.pop();
      path.push({ level: block.level, text: block.text.slice(0, 200) });
    } else if (block.kind === 'text') section.push(block.text);
    else {
      flush();
      const title = [heading(), block.title].filter(Boolean).join(' > ');
      const top = `${title ? `${title}\n` : ''}Columns: ${block.header.join(' | ')}`.slice(0, options.size / 2);
      let rows: string[] = [];
      let length = top.length;
      for (const row of block.rows) {
        const record = recordOf(block.header, row);
        if (!record) continue;
        for (const part of splitLong(record, options.size - top.length - 1)) {
          if (rows.length && length + part.length + 1 > options.size) {
            chunks.push(`${top}\n${rows.join('\n')}`);
            rows = [];
            length = top.length;
          }
          rows.push(part);
          length += part.length + 1;
        }
      }
      if (rows.length) chunks.push(`${top}\n${rows.join('\n')}`);
      // A table with a header and no rows still says what it holds.
      else if (block.rows.length === 0) section.push(top);
    }
  }
  flush();
  return chunks;
}

/** Word shingles (3 words) of a text, for near-duplicate detection without embeddings. */
export function shingles(text: string, size = 3): Set<string> {
  const words =
    text
      .toLowerCase()
      .normalize('NFKC')
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  const out = new Set<string>();
  if (words.length < size) {
    if (words.length) out.add(words.join(' '));
    return out;
  }
  for (let i = 0; i + size <= words.length; i++) out.add(words.slice(i, i + size).join(' '));
  return out;
}

/** Jaccard similarity of two shingle sets. */
export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const item of small) if (large.has(item)) shared++;
  return shared / (a.size + b.size - shared);
}
