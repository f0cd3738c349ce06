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

/** A word PostgreSQL does not read as one token with at most one lexeme. */
const UNREADABLE = Symbol('unreadable');
type Entry = string | typeof UNREADABLE;

export interface Lexicon {
  /** The query read as the SQL lanes read it, or null (and its unknown words are looked up for next time). */
  lex(query: string, configs: readonly string[]): LexedQuery | null;
  /** Looks up the lexemes of words not known yet (each word under the configuration given). */
  learn(words: Iterable<[config: string, word: string]>): Promise<void>;
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
