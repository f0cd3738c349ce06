/**
 * A query's lexemes without a database round trip. PostgreSQL stays the only stemmer: each word's
 * lexeme under a text-search configuration is asked of it once (to_tsvector of the word alone)
 * and remembered. A query is read here only when its parse is certain — runs of letters and
 * digits separated by spaces and plain punctuation, where PostgreSQL's parser makes one token
 * per run, each at the next position; anything else (hyphens, apostrophes, numbers with points,
 * addresses, combining marks) is read by PostgreSQL in the SQL lanes. The tests hold the two
 * readings equal.
 */
import type { Executor } from '../../db/database.js';
import * as searchRepo from './knowledge.search.repo.js';
import type { LexedQuery, PhraseStep } from './knowledge.text-scoring.js';

/** The words of `query` in order, or null when PostgreSQL's parse of it is not certain. */
export function plainWords(query: string): string[] | null {
  if (!/^[\p{L}0-9\s?!,;:"()؟،؛.]*$/u.test(query)) return null;
  // A full stop only as a sentence end: after a letter and before a space or the end.
  if (/(^|[^\p{L}])\.|\.(?=\S)/u.test(query)) return null;
  const words = query.match(/[\p{L}0-9]+/gu) ?? [];
  // PostgreSQL skips words longer than 2047 bytes; long runs are left to it.
  return words.every((word) => word.length <= 100) ? words : null;
}

/** Longer pieces are left to PostgreSQL (not remembered). */
const MAX_TOKEN = 100;

/**
 * The query cut at ASCII white space, or null when a token may span it. PostgreSQL's parser
 * starts afresh after white space (every token type but a tag, `<…>`, ends there), so the
 * distinct lexemes of a query are the union of those of its pieces read alone — except for
 * paths, which the parser reads differently at the start of a text (`~`, a leading `.` or `/`):
 * those queries are left to it. The tests hold the two readings equal on the test collections.
 */
export function spacedTokens(query: string): string[] | null {
  if (query.includes('<') || query.includes('~')) return null;
  const tokens = query.split(/[ \t\n\v\f\r]+/).filter(Boolean);
  // A piece starting with a dot or slash is read as a path at the start of a text only.
  return tokens.every((token) => token.length <= MAX_TOKEN && (token === '.' || !/^[./]/.test(token))) ? tokens : null;
}

/** A word PostgreSQL does not read as one token with at most one lexeme. */
const UNREADABLE = Symbol('unreadable');
type Entry = string | typeof UNREADABLE;

export interface Lexicon {
  /** The query read as the SQL lanes read it, or null (and its unknown words are looked up for next time). */
  lex(query: string, configs: readonly string[]): LexedQuery | null;
  /** Looks up the lexemes of words not known yet (each word under the configuration given). */
  learn(words: Iterable<[config: string, word: string]>): Promise<void>;
  /**
   * The distinct lexemes of `query` under the configurations (what `queryLexemes` answers), from
   * its pieces' remembered lexemes; the pieces not known yet are asked of PostgreSQL together
   * (one round trip). Null when the query's pieces cannot be read alone (`spacedTokens`).
   */
  lexemes(query: string, configs: readonly string[]): Promise<string[] | null>;
  readonly size: number;
}

export function createLexicon(
  db: Executor,
  options: { maxEntries?: number; onError?: (error: Error) => void } = {},
): Lexicon {
  const maxEntries = options.maxEntries ?? 200_000;
  /** `config \0 word` → its lexeme ('' for a stop word). */
  const entries = new Map<string, Entry>();
  const pending = new Set<string>();
  const key = (config: string, word: string) => `${config}\u0000${word}`;
  /** `config \0 piece` → the distinct lexemes of the piece read alone. */
  const pieces = new Map<string, string[]>();

  async function learnPieces(unknown: [string, string][]) {
    const byConfig = new Map<string, string[]>();
    for (const [config, piece] of unknown) {
      let list = byConfig.get(config);
      if (!list) byConfig.set(config, (list = []));
      list.push(piece);
    }
    for (const [config, list] of byConfig) {
      const found = await searchRepo.wordLexemes(db, config, list);
      list.forEach((piece, i) => pieces.set(key(config, piece), [...new Set(found[i]!.map((entry) => entry.lexeme))]));
    }
    if (pieces.size > maxEntries) {
      let drop = pieces.size - Math.floor(maxEntries * 0.9);
      for (const k of pieces.keys()) {
        if (drop-- <= 0) break;
        pieces.delete(k);
      }
    }
  }

  async function learn(words: Iterable<[string, string]>) {
    const byConfig = new Map<string, string[]>();
    for (const [config, word] of words) {
      const k = key(config, word);
      if (entries.has(k) || pending.has(k)) continue;
      pending.add(k);
      let list = byConfig.get(config);
      if (!list) byConfig.set(config, (list = []));
      list.push(word);
    }
    try {
      for (const [config, list] of byConfig) {
        for (let start = 0; start < list.length; start += 5000) {
          const batch = list.slice(start, start + 5000);
          const lexemes = await searchRepo.wordLexemes(db, config, batch);
          batch.forEach((word, i) => {
            const found = lexemes[i]!;
            entries.set(
              key(config, word),
              found.length === 0
                ? ''
                : found.length === 1 && found[0]!.positions.join() === '1'
                  ? found[0]!.lexeme
                  : UNREADABLE,
            );
          });
        }
      }
      if (entries.size > maxEntries) {
        const drop = entries.size - Math.floor(maxEntries * 0.9);
        let dropped = 0;
        for (const k of entries.keys()) {
          if (dropped++ >= drop) break;
          entries.delete(k);
        }
      }
    } finally {
      for (const [config, list] of byConfig) for (const word of list) pending.delete(key(config, word));
    }
  }

  return {
    get size() {
      return entries.size;
    },
    learn,
    async lexemes(query, configs) {
      const tokens = spacedTokens(query);
      if (!tokens) return null;
      const unknown = new Map<string, [string, string]>();
      for (const config of configs)
        for (const token of tokens)
          if (!pieces.has(key(config, token))) unknown.set(key(config, token), [config, token]);
      if (unknown.size) await learnPieces([...unknown.values()]);
      const lexemes = new Set<string>();
      for (const config of configs)
        for (const token of tokens) {
          const found = pieces.get(key(config, token));
          // Evicted meanwhile (a burst of new words): PostgreSQL reads the query whole.
          if (!found) return null;
          for (const lexeme of found) lexemes.add(lexeme);
        }
      return [...lexemes];
    },
    lex(query, configs) {
      const words = plainWords(query);
      if (!words) return null;
      const unknown: [string, string][] = [];
      const lexemes = new Set<string>();
      const phrases: PhraseStep[][] = [];
      for (const config of configs) {
        const phrase: PhraseStep[] = [];
        let previous = 0;
        words.forEach((word, index) => {
          const entry = entries.get(key(config, word));
          if (entry === undefined) {
            unknown.push([config, word]);
            return;
          }
          if (entry === UNREADABLE || entry === '') return;
          lexemes.add(entry);
          phrase.push({ lexeme: entry, distance: phrase.length ? index + 1 - previous : 0 });
          previous = index + 1;
        });
        phrases.push(phrase);
      }
      if (unknown.length) {
        learn(unknown).catch((error: unknown) => options.onError?.(error as Error));
        return null;
      }
      const unreadable = configs.some((config) => words.some((word) => entries.get(key(config, word)) === UNREADABLE));
      return unreadable ? null : { lexemes: [...lexemes], phrases };
    },
  };
}
