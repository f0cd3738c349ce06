/**
 * The scoring primitives of the in-process text lanes, each written after PostgreSQL's own
 * definition and checked against it in the tests: reading a tsvector as PostgreSQL prints it,
 * ts_rank's calc_rank_or, pg_trgm's trigram similarity, and phrase matching over positions.
 */
/**
 * Reads a tsvector as PostgreSQL prints it (`'word':1,3 'it''s':2`, weights ignored), calling
 * `emit` with each lexeme and its positions (a scratch array, valid during the call).
 */
export function readTsvector(text: string, emit: (lexeme: string, positions: number[]) => void): void {
  const positions: number[] = [];
  // Backslashes are rare; their next place is looked up only once passed.
  let escape = text.indexOf('\\');
  let i = 0;
  while (i < text.length) {
    if (text.charCodeAt(i) === 32) {
      i++;
      continue;
    }
    if (text[i] !== "'") throw new Error(`Unexpected tsvector text at ${i}: ${text.slice(i, i + 20)}`);
    i++;
    let lexeme = '';
    for (;;) {
      const quote = text.indexOf("'", i);
      if (quote < 0) throw new Error('Unterminated lexeme in tsvector text');
      if (escape >= 0 && escape < i) escape = text.indexOf('\\', i);
      if (escape >= 0 && escape < quote) {
        lexeme += text.slice(i, escape) + text[escape + 1];
        i = escape + 2;
        continue;
      }
      lexeme += text.slice(i, quote);
      if (text[quote + 1] === "'") {
        lexeme += "'";
        i = quote + 2;
        continue;
      }
      i = quote + 1;
      break;
    }
    positions.length = 0;
    if (text[i] === ':') {
      i++;
      for (;;) {
        let value = 0;
        let code = text.charCodeAt(i);
        while (code >= 48 && code <= 57) {
          value = value * 10 + code - 48;
          code = text.charCodeAt(++i);
        }
        positions.push(value);
        if (code >= 65 && code <= 68) code = text.charCodeAt(++i); // weight label A–D
        if (code !== 44) break; // ','
        i++;
      }
    }
    emit(lexeme, positions);
  }
}

/** Lexeme → positions of a tsvector's text. */
export function parseTsvector(text: string): Map<string, number[]> {
  const lexemes = new Map<string, number[]>();
  readTsvector(text, (lexeme, positions) => lexemes.set(lexeme, [...positions]));
  return lexemes;
}

const f32 = Math.fround;
/** ts_rank's weight of a position without a weight label (D), as a float4. */
const WEIGHT_D = f32(0.1);

/**
 * ts_rank(tsvector, q) for `q` an OR of distinct lexemes, without normalisation: PostgreSQL's
 * calc_rank_or, in its float4 arithmetic (so that ties and orderings come out the same).
 */
export function tsRankOr(
  positionsOf: (lexeme: string) => number[] | undefined,
  lexemes: readonly string[],
  vectorIsEmpty = false,
): number {
  if (vectorIsEmpty || lexemes.length === 0) return 0;
  let res = 0;
  for (const lexeme of lexemes) {
    const positions = positionsOf(lexeme);
    if (!positions) continue;
    const count = positions.length || 1;
    let resj = 0;
    for (let j = 0; j < count; j++) resj = f32(resj + f32(WEIGHT_D / ((j + 1) * (j + 1))));
    // Every position weighs the same here, so the heaviest is the first (jm = 0).
    const term = f32(f32(WEIGHT_D + resj) - WEIGHT_D);
    res = f32(res + term / 1.64493406685);
  }
  return f32(res / lexemes.length);
}

/** pg_trgm's trigrams of a text: words of letters and digits, lower-cased, padded "  word ". */
export function trigrams(text: string): Set<string> {
  const set = new Set<string>();
  for (const word of text.match(/[\p{L}\p{N}]+/gu) ?? []) {
    const chars = [' ', ' ', ...[...word].map(lowerChar), ' '];
    for (let i = 0; i + 3 <= chars.length; i++) set.add(chars[i]! + chars[i + 1]! + chars[i + 2]!);
  }
  return set;
}

/** A character lower-cased as one character (as the C library's towlower does). */
function lowerChar(char: string): string {
  const lower = char.toLowerCase();
  return [...lower].length === 1 ? lower : char;
}

/** pg_trgm's similarity of two trigram sets of these sizes sharing `common` trigrams, as a float4. */
export function similarityOf(common: number, a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : f32(common / (a + b - common));
}

/** pg_trgm's similarity(a, b) from the trigram sets. */
export function trigramSimilarity(a: Set<string>, b: Set<string>): number {
  let common = 0;
  for (const trigram of a) if (b.has(trigram)) common++;
  return similarityOf(common, a.size, b.size);
}

/** One lexeme of a phrase and its distance from the previous one (`<N>`; 0 for the first). */
export interface PhraseStep {
  lexeme: string;
  distance: number;
}

/** Whether `phrase` (phraseto_tsquery's `a <-> b <2> c`) matches the positions of a tsvector. */
export function phraseMatches(
  positionsOf: (lexeme: string) => number[] | undefined,
  phrase: readonly PhraseStep[],
): boolean {
  if (phrase.length === 0) return false;
  let ends = positionsOf(phrase[0]!.lexeme);
  if (!ends) return false;
  for (let k = 1; k < phrase.length; k++) {
    const step = phrase[k]!;
    const positions = positionsOf(step.lexeme);
    if (!positions) return false;
    const previous: Set<number> = new Set(ends);
    ends = positions.filter((position) => previous.has(position - step.distance));
    if (ends.length === 0) return false;
  }
  return true;
}

/** The query as the SQL lanes read it: its distinct lexemes and its phrase under each configuration. */
export interface LexedQuery {
  lexemes: string[];
  phrases: PhraseStep[][];
}
