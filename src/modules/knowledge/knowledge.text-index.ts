/**
 * The full-text and docstore lanes over an in-process copy of one company's knowledge, for
 * knowledge bases small enough to hold (most help centres): a chat turn's search then needs no
 * database round trip. It ranks as the SQL lanes of knowledge.search.repo.ts do, from the same
 * tsvectors PostgreSQL computed (loaded as text, never re-derived here): BM25 over the chunks'
 * lexemes, the query as an exact phrase over whole documents, pg_trgm's title similarity, and
 * ts_rank's choice of each document's best chunk, each written after PostgreSQL's definition
 * (tsrank.c calc_rank_or, pg_trgm cnt_sml) and checked against it in the tests.
 */
import {
  BM25,
  DOCSTORE,
  type ChunkDetails,
  type LaneFilters,
  type LaneHit,
  type TextLanes,
} from './knowledge.search.repo.js';

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
function similarityOf(common: number, a: number, b: number): number {
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

/**
 * The postings of many holders (chunks or documents), compressed by rows: for lexeme l, postings
 * start[l] … start[l + 1] − 1 name their holders (ascending) and each posting k its positions
 * positions[positionStart[k] … positionStart[k + 1] − 1]. A few typed arrays instead of an object
 * per posting: built in a fraction of the time, with little for the garbage collector.
 */
class Postings {
  constructor(
    private readonly lexemes: Map<string, number>,
    private readonly start: Int32Array,
    private readonly holders: Int32Array,
    private readonly positionStart: Int32Array,
    private readonly positions: Int32Array,
  ) {}

  /** Holders of `lexeme`. */
  count(lexeme: string): number {
    const l = this.lexemes.get(lexeme);
    return l === undefined ? 0 : this.start[l + 1]! - this.start[l]!;
  }

  /** Each holder of `lexeme` with its term frequency (positions, at least 1). */
  forEach(lexeme: string, visit: (holder: number, tf: number) => void, df?: (count: number) => void): void {
    const l = this.lexemes.get(lexeme);
    if (l === undefined) return;
    df?.(this.start[l + 1]! - this.start[l]!);
    for (let k = this.start[l]!; k < this.start[l + 1]!; k++)
      visit(this.holders[k]!, this.positionStart[k + 1]! - this.positionStart[k]! || 1);
  }

  /** Positions of `lexeme` in `holder`, or undefined when it does not hold it. */
  positionsIn(lexeme: string, holder: number): number[] | undefined {
    const l = this.lexemes.get(lexeme);
    if (l === undefined) return undefined;
    let low = this.start[l]!;
    let high = this.start[l + 1]! - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const value = this.holders[mid]!;
      if (value === holder)
        return Array.from(this.positions.subarray(this.positionStart[mid]!, this.positionStart[mid + 1]!));
      if (value < holder) low = mid + 1;
      else high = mid - 1;
    }
    return undefined;
  }
}

/** Collects holders' tsvectors (in ascending holder order) into one flat record, then lays out Postings. */
class PostingsBuilder {
  private readonly lexemes = new Map<string, number>();
  private readonly postingCounts: number[] = [];
  /** Per holder: holder, entry count, then per entry: lexeme id, position count, positions. */
  private record = new Int32Array(1 << 16);
  private length = 0;
  private positionTotal = 0;

  private push(value: number) {
    if (this.length === this.record.length) {
      const grown = new Int32Array(this.record.length * 2);
      grown.set(this.record);
      this.record = grown;
    }
    this.record[this.length++] = value;
  }

  /** Adds a holder's tsvector; returns its number of lexemes. */
  add(holder: number, tsvector: string): number {
    this.push(holder);
    const countAt = this.length;
    this.push(0);
    let entries = 0;
    readTsvector(tsvector, (lexeme, positions) => {
      let id = this.lexemes.get(lexeme);
      if (id === undefined) {
        id = this.lexemes.size;
        this.lexemes.set(lexeme, id);
        this.postingCounts.push(0);
      }
      this.postingCounts[id]! += 1;
      this.push(id);
      this.push(positions.length);
      for (const position of positions) this.push(position);
      this.positionTotal += positions.length;
      entries++;
    });
    this.record[countAt] = entries;
    return entries;
  }

  build(): Postings {
    const lexemeCount = this.lexemes.size;
    const start = new Int32Array(lexemeCount + 1);
    for (let l = 0; l < lexemeCount; l++) start[l + 1] = start[l]! + this.postingCounts[l]!;
    const postingTotal = start[lexemeCount]!;
    const holders = new Int32Array(postingTotal);
    const positionCounts = new Int32Array(postingTotal);
    const fill = start.slice(0, lexemeCount);
    // Pass 1: each posting's holder and number of positions, in place.
    for (let i = 0; i < this.length;) {
      const holder = this.record[i++]!;
      const entries = this.record[i++]!;
      for (let e = 0; e < entries; e++) {
        const k = fill[this.record[i]!]!++;
        holders[k] = holder;
        positionCounts[k] = this.record[i + 1]!;
        i += 2 + this.record[i + 1]!;
      }
    }
    const positionStart = new Int32Array(postingTotal + 1);
    for (let k = 0; k < postingTotal; k++) positionStart[k + 1] = positionStart[k]! + positionCounts[k]!;
    // Pass 2: the positions, each posting's in its place.
    const positions = new Int32Array(this.positionTotal);
    fill.set(start.subarray(0, lexemeCount));
    for (let i = 0; i < this.length;) {
      i++;
      const entries = this.record[i++]!;
      for (let e = 0; e < entries; e++) {
        const k = fill[this.record[i]!]!++;
        const count = this.record[i + 1]!;
        positions.set(this.record.subarray(i + 2, i + 2 + count), positionStart[k]!);
        i += 2 + count;
      }
    }
    return new Postings(this.lexemes, start, holders, positionStart, positions);
  }
}

export interface IndexChunkRow {
  id: string;
  document_id: string;
  ordinal: number;
  text: string;
  language: string;
  collection_id: string | null;
  categories: string[];
  document_created_at: Date;
  token_count: number;
  tsv: string;
}

export interface IndexDocumentRow {
  id: string;
  title: string;
  status: string;
  collection_id: string | null;
  categories: string[];
  created_at: Date;
  /** content_tsv as text, for completed documents. */
  tsv: string | null;
}

export interface IndexSnapshot {
  chunks: IndexChunkRow[];
  documents: IndexDocumentRow[];
  corpus: { chunk_count: number; token_total: number } | null;
}

interface Holder {
  collectionId: string | null;
  categories: string[];
  createdAt: number;
}

function matches(holder: Holder, filters: LaneFilters): boolean {
  if (filters.collectionIds?.length && !filters.collectionIds.includes(holder.collectionId ?? '')) return false;
  if (filters.categories?.length && !holder.categories.some((category) => filters.categories!.includes(category)))
    return false;
  if (filters.startDate && holder.createdAt < filters.startDate.getTime()) return false;
  if (filters.endDate && holder.createdAt > filters.endDate.getTime()) return false;
  return true;
}

/** Best first, then by chunk id (uuid order is the order of their lower-case text). */
const byScoreThenId = (a: LaneHit, b: LaneHit) =>
  b.score - a.score || (a.chunk_id < b.chunk_id ? -1 : a.chunk_id > b.chunk_id ? 1 : 0);

export interface TextIndexSearch {
  query: string;
  lexed: LexedQuery;
  filters: LaneFilters;
  depth: number;
  fulltext: boolean;
  docstore: boolean;
}

type IndexedChunk = Holder & {
  id: string;
  document: number;
  ordinal: number;
  dl: number;
  details: ChunkDetails;
  empty: boolean;
};
type IndexedDocument = Holder & { id: string; completed: boolean; titleTrigramCount: number; chunks: number[] };

/** Yields to the event loop every few milliseconds of a long build, so requests keep flowing. */
async function sliced<T>(items: readonly T[], visit: (item: T, index: number) => void): Promise<void> {
  let sliceStart = performance.now();
  for (let i = 0; i < items.length; i++) {
    visit(items[i]!, i);
    if ((i & 63) === 63 && performance.now() - sliceStart > 5) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

export class TextIndex {
  readonly size: number;
  private readonly chunkById: Map<string, IndexedChunk>;
  /** Completed documents by the trigrams of their titles. */
  private readonly titlesByTrigram = new Map<string, number[]>();

  private constructor(
    private readonly chunks: IndexedChunk[],
    private readonly documents: IndexedDocument[],
    private readonly chunkPostings: Postings,
    private readonly documentPostings: Postings,
    private readonly corpus: IndexSnapshot['corpus'],
    titles: (Set<string> | null)[],
  ) {
    this.chunkById = new Map(chunks.map((chunk) => [chunk.id, chunk]));
    this.size = chunks.length;
    titles.forEach((set, document) => {
      for (const trigram of set ?? []) {
        const holders = this.titlesByTrigram.get(trigram);
        if (holders) holders.push(document);
        else this.titlesByTrigram.set(trigram, [document]);
      }
    });
  }

  /** Builds the index of a snapshot, in slices of a few milliseconds of the event loop. */
  static async build(snapshot: IndexSnapshot): Promise<TextIndex> {
    const documentIndex = new Map(snapshot.documents.map((row, index) => [row.id, index]));
    const documentPostings = new PostingsBuilder();
    const documents: IndexedDocument[] = [];
    const titles: (Set<string> | null)[] = [];
    await sliced(snapshot.documents, (row, index) => {
      const completed = row.status === 'completed';
      if (completed && row.tsv) documentPostings.add(index, row.tsv);
      const title = trigrams(row.title);
      titles.push(completed ? title : null);
      documents.push({
        id: row.id,
        completed,
        titleTrigramCount: title.size,
        collectionId: row.collection_id,
        categories: row.categories,
        createdAt: row.created_at.getTime(),
        chunks: [],
      });
    });
    const chunkPostings = new PostingsBuilder();
    const chunks: IndexedChunk[] = [];
    await sliced(snapshot.chunks, (row) => {
      const document = documentIndex.get(row.document_id);
      if (document === undefined) return;
      const index = chunks.length;
      const entries = chunkPostings.add(index, row.tsv);
      documents[document]!.chunks.push(index);
      chunks.push({
        id: row.id,
        document,
        ordinal: row.ordinal,
        dl: row.token_count,
        empty: entries === 0,
        collectionId: row.collection_id,
        categories: row.categories,
        createdAt: row.document_created_at.getTime(),
        details: {
          id: row.id,
          text: row.text,
          document_id: row.document_id,
          title: snapshot.documents[document]!.title,
          collection_id: row.collection_id,
          categories: row.categories,
          language: row.language,
        },
      });
    });
    for (const document of documents) document.chunks.sort((a, b) => chunks[a]!.ordinal - chunks[b]!.ordinal);
    return new TextIndex(chunks, documents, chunkPostings.build(), documentPostings.build(), snapshot.corpus, titles);
  }

  search(input: TextIndexSearch): TextLanes {
    const fulltext = input.fulltext ? this.bm25(input) : null;
    const docstore = input.docstore ? this.docstoreLane(input) : null;
    // Every hit's details (the SQL lanes bring their top hits'): they are at hand, and a hit
    // ranked lower in each lane can still be fused into the top.
    const details: ChunkDetails[] = [];
    for (const hits of [fulltext, docstore])
      for (const hit of hits ?? []) details.push(this.chunkById.get(hit.chunk_id)!.details);
    return { fulltext, docstore, details };
  }

  /** BM25 over the company's postings (document frequency unfiltered), then the filters. */
  private bm25(input: TextIndexSearch): LaneHit[] {
    if (!this.corpus) return [];
    const { k1, b } = BM25;
    const n = Math.max(this.corpus.chunk_count, 1);
    const avgdl = Math.max(this.corpus.token_total / Math.max(this.corpus.chunk_count, 1), 1);
    const scores = new Map<number, number>();
    for (const lexeme of input.lexed.lexemes) {
      let idf = 0;
      this.chunkPostings.forEach(
        lexeme,
        (chunk, tf) => {
          const dl = this.chunks[chunk]!.dl;
          scores.set(chunk, (scores.get(chunk) ?? 0) + (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * dl) / avgdl)));
        },
        (df) => (idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))),
      );
    }
    const hits: LaneHit[] = [];
    for (const [chunk, score] of scores) {
      if (matches(this.chunks[chunk]!, input.filters)) hits.push({ chunk_id: this.chunks[chunk]!.id, score });
    }
    return hits.sort(byScoreThenId).slice(0, input.depth);
  }

  /** Documents holding the query as a phrase (+1) or titled like it (+ similarity); each by its best chunk. */
  private docstoreLane(input: TextIndexSearch): LaneHit[] {
    const { lexed, filters, depth } = input;
    const candidates = new Map<number, number>();
    const phrases = lexed.phrases.filter((phrase) => phrase.length > 0);
    if (phrases.length) {
      // Only documents holding the phrase's rarest lexeme can hold the phrase.
      const holders = new Set<number>();
      for (const phrase of phrases) {
        const rarest = phrase.reduce((a, b) =>
          this.documentPostings.count(b.lexeme) < this.documentPostings.count(a.lexeme) ? b : a,
        );
        this.documentPostings.forEach(rarest.lexeme, (holder) => holders.add(holder));
      }
      for (const document of [...holders].sort((a, b) => a - b)) {
        if (candidates.size >= depth) break;
        if (!matches(this.documents[document]!, filters)) continue;
        const positionsOf = (lexeme: string) => this.documentPostings.positionsIn(lexeme, document);
        if (phrases.some((phrase) => phraseMatches(positionsOf, phrase))) candidates.set(document, 1);
      }
    }
    if (input.query.length <= DOCSTORE.maxTitleQueryLength) {
      // Shared trigrams counted through the title index; similarity = shared / (|a| + |b| − shared).
      const query = trigrams(input.query);
      const shared = new Map<number, number>();
      for (const trigram of query)
        for (const document of this.titlesByTrigram.get(trigram) ?? [])
          shared.set(document, (shared.get(document) ?? 0) + 1);
      for (const [document, common] of shared) {
        const row = this.documents[document]!;
        const similarity = similarityOf(common, row.titleTrigramCount, query.size);
        if (similarity >= DOCSTORE.minTitleSimilarity && matches(row, filters))
          candidates.set(document, (candidates.get(document) ?? 0) + similarity);
      }
    }
    const chosen = [...candidates].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, depth);
    const hits: LaneHit[] = [];
    for (const [document, score] of chosen) {
      const best = this.bestChunk(document, phrases, lexed.lexemes);
      if (best !== undefined) hits.push({ chunk_id: this.chunks[best]!.id, score });
    }
    return hits.sort(byScoreThenId).slice(0, depth);
  }

  /** A document's chunk holding the phrase first, then by ts_rank of the query's words, then the first. */
  private bestChunk(document: number, phrases: PhraseStep[][], lexemes: string[]): number | undefined {
    let best: { chunk: number; phrase: boolean; rank: number; ordinal: number } | undefined;
    for (const chunk of this.documents[document]!.chunks) {
      const positionsOf = (lexeme: string) => this.chunkPostings.positionsIn(lexeme, chunk);
      const candidate = {
        chunk,
        phrase: phrases.some((phrase) => phraseMatches(positionsOf, phrase)),
        rank: tsRankOr(positionsOf, lexemes, this.chunks[chunk]!.empty),
        ordinal: this.chunks[chunk]!.ordinal,
      };
      if (
        !best ||
        (candidate.phrase !== best.phrase
          ? candidate.phrase
          : candidate.rank !== best.rank
            ? candidate.rank > best.rank
            : candidate.ordinal < best.ordinal)
      ) {
        best = candidate;
      }
    }
    return best?.chunk;
  }
}
