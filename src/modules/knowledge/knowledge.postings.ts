/**
 * Building the in-process text index: each holder's (chunk's or document's) tsvector read into
 * compressed postings that the query side of knowledge.text-index.ts walks.
 */
import { readTsvector } from './knowledge.text-scoring.js';

/**
 * The postings of many holders (chunks or documents), compressed by rows: for lexeme l, postings
 * start[l] … start[l + 1] − 1 name their holders (ascending) and each posting k its positions
 * positions[positionStart[k] … positionStart[k + 1] − 1]. A few typed arrays instead of an object
 * per posting: built in a fraction of the time, with little for the garbage collector.
 */
export class Postings {
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
export class PostingsBuilder {
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
