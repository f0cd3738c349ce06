/**
 * The full-text and docstore lanes over an in-process copy of one company's knowledge, for
 * knowledge bases small enough to hold (most help centres): a chat turn's search then needs no
 * database round trip. It ranks as the SQL lanes of knowledge.search.repo.ts do, from the same
 * tsvectors PostgreSQL computed (loaded as text, never re-derived here): BM25 over the chunks'
 * lexemes, the query as an exact phrase over whole documents, pg_trgm's title similarity, and
 * ts_rank's choice of each document's best chunk, each written after PostgreSQL's definition
 * (tsrank.c calc_rank_or, pg_trgm cnt_sml) and checked against it in the tests.
 */
import { BM25, DOCSTORE, type ChunkDetails, type LaneFilters, type LaneHit, type TextLanes } from './knowledge.search.repo.js';

/** Lexeme → positions, as PostgreSQL prints a tsvector: `'word':1,3 'it''s':2` (weights ignored). */
export function parseTsvector(text: string): Map<string, number[]> {
  const lexemes = new Map<string, number[]>();
  let i = 0;
  while (i < text.length) {
    if (text[i] === ' ') {
      i++;
      continue;
    }
    if (text[i] !== "'") throw new Error(`Unexpected tsvector text at ${i}: ${text.slice(i, i + 20)}`);
    i++;
    let lexeme = '';
    for (;;) {
      const next = text.indexOf("'", i);
      const escape = text.indexOf('\\', i);
      if (next < 0) throw new Error('Unterminated lexeme in tsvector text');
      if (escape >= 0 && escape < next) {
        lexeme += text.slice(i, escape) + text[escape + 1];
        i = escape + 2;
        continue;
      }
      lexeme += text.slice(i, next);
      if (text[next + 1] === "'") {
        lexeme += "'";
        i = next + 2;
        continue;
      }
      i = next + 1;
      break;
    }
    const positions: number[] = [];
    if (text[i] === ':') {
      i++;
      for (;;) {
        let value = 0;
        while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) value = value * 10 + text.charCodeAt(i++) - 48;
        positions.push(value);
        if (text[i] === 'A' || text[i] === 'B' || text[i] === 'C' || text[i] === 'D') i++;
        if (text[i] !== ',') break;
        i++;
      }
    }
    lexemes.set(lexeme, positions);
  }
  return lexemes;
}

const f32 = Math.fround;
/** ts_rank's weight of a position without a weight label (D), as a float4. */
const WEIGHT_D = f32(0.1);

/**
 * ts_rank(tsvector, q) for `q` an OR of distinct lexemes, without normalisation: PostgreSQL's
 * calc_rank_or, in its float4 arithmetic (so that ties and orderings come out the same).
 */
export function tsRankOr(positionsOf: (lexeme: string) => number[] | undefined, lexemes: readonly string[], vectorIsEmpty = false): number {
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

/** pg_trgm's similarity(a, b) from the trigram sets, as a float4. */
export function trigramSimilarity(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let common = 0;
  for (const trigram of a) if (b.has(trigram)) common++;
  return f32(common / (a.size + b.size - common));
}

/** One lexeme of a phrase and its distance from the previous one (`<N>`; 0 for the first). */
export interface PhraseStep {
  lexeme: string;
  distance: number;
}

/** Whether `phrase` (phraseto_tsquery's `a <-> b <2> c`) matches the positions of a tsvector. */
export function phraseMatches(positionsOf: (lexeme: string) => number[] | undefined, phrase: readonly PhraseStep[]): boolean {
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

/** Postings of one lexeme: the holders (chunk or document indexes, ascending) and their positions. */
interface Postings {
  holders: Int32Array;
  offsets: Int32Array;
  positions: Int32Array;
}

class PostingsBuilder {
  private readonly lists = new Map<string, { holders: number[]; offsets: number[]; positions: number[] }>();

  add(holder: number, tsvector: Map<string, number[]>) {
    for (const [lexeme, positions] of tsvector) {
      let list = this.lists.get(lexeme);
      if (!list) this.lists.set(lexeme, (list = { holders: [], offsets: [0], positions: [] }));
      list.holders.push(holder);
      for (const position of positions) list.positions.push(position);
      list.offsets.push(list.positions.length);
    }
  }

  build(): Map<string, Postings> {
    const built = new Map<string, Postings>();
    for (const [lexeme, list] of this.lists) {
      built.set(lexeme, { holders: Int32Array.from(list.holders), offsets: Int32Array.from(list.offsets), positions: Int32Array.from(list.positions) });
    }
    return built;
  }
}

/** Positions of `lexeme` in holder `holder` (binary search), or undefined when absent. */
function positionsIn(postings: Map<string, Postings>, lexeme: string, holder: number): number[] | undefined {
  const list = postings.get(lexeme);
  if (!list) return undefined;
  let low = 0;
  let high = list.holders.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const value = list.holders[mid]!;
    if (value === holder) return Array.from(list.positions.subarray(list.offsets[mid]!, list.offsets[mid + 1]!));
    if (value < holder) low = mid + 1;
    else high = mid - 1;
  }
  return undefined;
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
  if (filters.categories?.length && !holder.categories.some((category) => filters.categories!.includes(category))) return false;
  if (filters.startDate && holder.createdAt < filters.startDate.getTime()) return false;
  if (filters.endDate && holder.createdAt > filters.endDate.getTime()) return false;
  return true;
}

/** Best first, then by chunk id (uuid order is the order of their lower-case text). */
const byScoreThenId = (a: LaneHit, b: LaneHit) => b.score - a.score || (a.chunk_id < b.chunk_id ? -1 : a.chunk_id > b.chunk_id ? 1 : 0);

export interface TextIndexSearch {
  query: string;
  lexed: LexedQuery;
  filters: LaneFilters;
  depth: number;
  fulltext: boolean;
  docstore: boolean;
  detailRank: number;
}

export class TextIndex {
  readonly size: number;
  private readonly chunks: (Holder & { id: string; document: number; ordinal: number; dl: number; details: ChunkDetails; empty: boolean })[];
  private readonly documents: (Holder & { id: string; completed: boolean; title: string; titleTrigrams: Set<string>; chunks: number[] })[];
  private readonly chunkPostings: Map<string, Postings>;
  private readonly documentPostings: Map<string, Postings>;
  private readonly corpus: IndexSnapshot['corpus'];
  private readonly chunkById: Map<string, TextIndex['chunks'][number]>;

  constructor(snapshot: IndexSnapshot) {
    this.corpus = snapshot.corpus;
    const documentIndex = new Map(snapshot.documents.map((row, index) => [row.id, index]));
    const documentPostings = new PostingsBuilder();
    this.documents = snapshot.documents.map((row, index) => {
      if (row.status === 'completed' && row.tsv) documentPostings.add(index, parseTsvector(row.tsv));
      return {
        id: row.id,
        completed: row.status === 'completed',
        title: row.title,
        titleTrigrams: trigrams(row.title),
        collectionId: row.collection_id,
        categories: row.categories,
        createdAt: row.created_at.getTime(),
        chunks: [],
      };
    });
    const chunkPostings = new PostingsBuilder();
    this.chunks = [];
    for (const row of snapshot.chunks) {
      const document = documentIndex.get(row.document_id);
      if (document === undefined) continue;
      const index = this.chunks.length;
      const tsvector = parseTsvector(row.tsv);
      chunkPostings.add(index, tsvector);
      this.documents[document]!.chunks.push(index);
      this.chunks.push({
        id: row.id,
        document,
        ordinal: row.ordinal,
        dl: row.token_count,
        empty: tsvector.size === 0,
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
    }
    for (const document of this.documents) document.chunks.sort((a, b) => this.chunks[a]!.ordinal - this.chunks[b]!.ordinal);
    this.chunkPostings = chunkPostings.build();
    this.documentPostings = documentPostings.build();
    this.chunkById = new Map(this.chunks.map((chunk) => [chunk.id, chunk]));
    this.size = this.chunks.length;
  }

  search(input: TextIndexSearch): TextLanes {
    const fulltext = input.fulltext ? this.bm25(input) : null;
    const docstore = input.docstore ? this.docstoreLane(input) : null;
    const details: ChunkDetails[] = [];
    for (const hits of [fulltext, docstore]) {
      for (const hit of hits?.slice(0, input.detailRank) ?? []) details.push(this.chunkById.get(hit.chunk_id)!.details);
    }
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
      const list = this.chunkPostings.get(lexeme);
      if (!list) continue;
      const df = list.holders.length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let k = 0; k < list.holders.length; k++) {
        const chunk = list.holders[k]!;
        const tf = list.offsets[k + 1]! - list.offsets[k]! || 1;
        const dl = this.chunks[chunk]!.dl;
        scores.set(chunk, (scores.get(chunk) ?? 0) + (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * dl) / avgdl)));
      }
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
    const inDocument = (document: number) => (lexeme: string) => positionsIn(this.documentPostings, lexeme, document);
    if (phrases.length) {
      // Only documents holding the phrase's first lexeme can hold the phrase.
      const holders = new Set<number>();
      for (const phrase of phrases) for (const holder of this.documentPostings.get(phrase[0]!.lexeme)?.holders ?? []) holders.add(holder);
      for (const document of [...holders].sort((a, b) => a - b)) {
        if (candidates.size >= depth) break;
        const row = this.documents[document]!;
        if (!matches(row, filters)) continue;
        if (phrases.some((phrase) => phraseMatches(inDocument(document), phrase))) candidates.set(document, 1);
      }
    }
    if (input.query.length <= DOCSTORE.maxTitleQueryLength) {
      const query = trigrams(input.query);
      this.documents.forEach((row, document) => {
        if (!row.completed || !matches(row, filters)) return;
        const similarity = trigramSimilarity(row.titleTrigrams, query);
        if (similarity >= DOCSTORE.minTitleSimilarity) candidates.set(document, (candidates.get(document) ?? 0) + similarity);
      });
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
      const positionsOf = (lexeme: string) => positionsIn(this.chunkPostings, lexeme, chunk);
      const candidate = {
        chunk,
        phrase: phrases.some((phrase) => phraseMatches(positionsOf, phrase)),
        rank: tsRankOr(positionsOf, lexemes, this.chunks[chunk]!.empty),
        ordinal: this.chunks[chunk]!.ordinal,
      };
      if (
        !best ||
        (candidate.phrase !== best.phrase ? candidate.phrase : candidate.rank !== best.rank ? candidate.rank > best.rank : candidate.ordinal < best.ordinal)
      ) {
        best = candidate;
      }
    }
    return best?.chunk;
  }
}
