/**
 * The title half of the docstore lane of a large knowledge base, in memory: which documents'
 * titles reach the trigram similarity of the lane (DOCSTORE.minTitleSimilarity) with a query.
 * In SQL that is a GIN scan of every trigram of the query over every title of every company (the
 * common ones — " th", "the", "ion" — held by most titles), rechecked title by title: the tail of
 * the lane, growing with the corpus (docs/scale.md, "The docstore lane's tail").
 *
 * Here, per company: the titles' trigrams as PostgreSQL reads them (`show_trgm`, so the sets are
 * its own, compacted multibyte trigrams included) in postings of ascending slots, and each title's
 * trigram count. A title of b trigrams sharing s of the query's a reaches similarity t only if
 * s ≥ t·a and b ≤ a / t (s / (a + b − s) with s ≤ b), so every such title holds one of the query's
 * a − ⌈t·a⌉ + 1 rarest trigrams (prefix filtering): only those postings are scanned (titles of a
 * length that cannot pass are not admitted), the rest probed by galloping search, a candidate
 * dropped once it cannot reach its share. The answer is the documents
 * whose similarity, computed as pg_trgm computes it (float4), passes; the lane's statement then
 * reads them by id and checks them again against the current rows (status, filters, the title
 * and its similarity as PostgreSQL computes it), so a document changed since the index last
 * heard is never answered wrongly.
 *
 * Trigrams as pg_trgm reads them (`createTrigramReader`): words between characters that are not
 * letters or digits, so a text's trigrams are those of its pieces between white space. ASCII is
 * read here (lower-cased words, padded) once PostgreSQL has been seen to read it the same way
 * (a probe of every printable character, against the database's locale); anything else by
 * PostgreSQL (`show_trgm`: case, letters and the compaction of multibyte trigrams are its own) —
 * a query's pieces once each and remembered, titles in the statements that read them.
 */
import { DOCSTORE } from './knowledge.search.types.js';
import { similarityOf, trigrams } from './knowledge.text-scoring.js';
import { grow, IdSlots } from './knowledge.id-slots.js';

/**
 * A document's title and its trigrams as PostgreSQL reads them (`show_trgm(title)`), or null
 * for a title of ASCII when that is read here.
 */
export interface TitleRow {
  id: string;
  title: string;
  trigrams: string[] | null;
}

/** Below the threshold by more than float4 rounding can lift a ratio (so no title is missed). */
const LOWER = DOCSTORE.minTitleSimilarity * (1 - 1e-6);
/** Pieces pg_trgm reads as the JavaScript `trigrams` does: printable ASCII. */
const PLAIN = /^[\x21-\x7e]*$/;
/** Pieces of other characters remembered, at most. */
const MAX_REMEMBERED = 20_000;

/**
 * A reader of queries' trigrams as pg_trgm's `show_trgm` gives them: printable ASCII pieces
 * here (once `asciiReadHere`), other pieces asked of PostgreSQL (`ask`, all of a query's new
 * pieces at once) and remembered (forgotten all together past MAX_REMEMBERED).
 */
export function createTrigramReader(ask: (pieces: string[]) => Promise<string[][]>) {
  const remembered = new Map<string, string[]>();
  let agrees: Promise<boolean> | null = null;
  /** Whether PostgreSQL reads ASCII as this module does (asked once; again after a failure). */
  const asciiReadHere = () =>
    (agrees ??= ask(PROBE).then(
      (read) => read.every((theirs, i) => sameSet(theirs, trigrams(PROBE[i]!))),
      (error: unknown) => {
        agrees = null;
        throw error;
      },
    ));
  const read = async (query: string): Promise<string[]> => {
    const here = await asciiReadHere();
    const local = (piece: string) => here && PLAIN.test(piece);
    const pieces = query.split(/[ \t\n\r\f\v]+/).filter((piece) => piece.length > 0);
    const unknown = [...new Set(pieces.filter((piece) => !local(piece) && !remembered.has(piece)))];
    if (unknown.length) {
      const read = await ask(unknown);
      if (remembered.size + unknown.length > MAX_REMEMBERED) remembered.clear();
      unknown.forEach((piece, i) => remembered.set(piece, read[i]!));
    }
    const all = new Set<string>();
    for (const piece of pieces)
      for (const trigram of local(piece) ? trigrams(piece) : remembered.get(piece)!) all.add(trigram);
    return [...all];
  };
  return Object.assign(read, { asciiReadHere });
}

/** Every printable ASCII character between letters, and every letter and digit in both cases. */
const PROBE = [
  ...Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => `q${String.fromCharCode(0x21 + i)}w`),
  'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  'abcdefghijklmnopqrstuvwxyz',
  '0123456789',
  'A-b_C.d/E:f',
];

function sameSet(theirs: readonly string[], mine: Set<string>): boolean {
  return theirs.length === mine.size && theirs.every((trigram) => mine.has(trigram));
}

interface Postings {
  slots: Int32Array;
  length: number;
}

export class TitleIndex {
  private readonly lists = new Map<string, Postings>();
  private readonly ids = new IdSlots();
  private counts = new Uint16Array(16);
  private alive = new Uint8Array(16);
  private liveCount = 0;
  private keyBytes = 0;
  /** Shared trigrams of each slot while a query runs (zero between queries). */
  private shared = new Uint16Array(0);

  /** Live titles held. */
  get size() {
    return this.liveCount;
  }

  /** Slots of titles replaced since the build (their postings stay until a rebuild). */
  get deadSlots() {
    return this.ids.count - this.liveCount;
  }

  get bytes(): number {
    let total = this.ids.bytes + this.counts.byteLength + this.alive.byteLength;
    for (const list of this.lists.values()) total += list.slots.byteLength + 48;
    return total + this.keyBytes;
  }

  /** Adds the titles of a build (each document once). */
  add(rows: readonly TitleRow[]) {
    for (const row of rows) {
      const slot = this.ids.append(row.id);
      this.counts = grow(this.counts, slot + 1);
      this.alive = grow(this.alive, slot + 1);
      const distinct = row.trigrams ? new Set(row.trigrams) : trigrams(row.title);
      this.counts[slot] = Math.min(distinct.size, 0xffff);
      this.alive[slot] = 1;
      this.liveCount++;
      this.ids.index(slot, this.alive);
      for (const trigram of distinct) {
        let list = this.lists.get(trigram);
        if (!list) {
          list = { slots: new Int32Array(4), length: 0 };
          this.lists.set(trigram, list);
          this.keyBytes += 2 * trigram.length + 80;
        }
        list.slots = grow(list.slots, list.length + 1);
        list.slots[list.length++] = slot;
      }
    }
  }

  /** Replaces the titles of these documents (a re-ingested document's title may have changed). */
  replace(rows: readonly TitleRow[]) {
    let removed = false;
    for (const row of rows) {
      const slot = this.ids.lookup(row.id);
      if (slot < 0) continue;
      this.alive[slot] = 0;
      this.liveCount--;
      removed = true;
    }
    if (removed) this.ids.rebuild(this.alive);
    this.add(rows);
  }

  /** Ends a build: spare capacity released. */
  trim() {
    for (const list of this.lists.values()) list.slots = list.slots.slice(0, list.length);
  }

  /**
   * The documents whose title reaches the lane's similarity with a query of these (distinct)
   * trigrams (`createTrigramReader`), or null when more than `limit` titles would have to be checked.
   */
  matches(wanted: readonly string[], limit = 50_000): string[] | null {
    const a = wanted.length;
    if (a === 0) return [];
    // The fewest trigrams a title of b trigrams must share: s / (a + b − s) ≥ t ⇔ s ≥ t (a + b) / (1 + t).
    const needed = (b: number) => Math.max(1, Math.ceil((LOWER * (a + b)) / (1 + LOWER)));
    const lists = wanted.map((trigram) => this.lists.get(trigram) ?? EMPTY);
    lists.sort((x, y) => x.length - y.length);
    // A title first met in the k-th rarest list shares at most a − k trigrams: past the prefix, none is new.
    const prefix = a - Math.ceil(LOWER * a) + 1;
    if (this.shared.length < this.ids.count) this.shared = new Uint16Array(this.ids.count);
    const shared = this.shared;
    let candidates: number[] = [];
    try {
      for (let k = 0; k < prefix; k++) {
        const list = lists[k]!;
        for (let i = 0; i < list.length; i++) {
          const slot = list.slots[i]!;
          if (shared[slot]! > 0) shared[slot]!++;
          else if (this.alive[slot] && a - k >= needed(this.counts[slot]!)) {
            shared[slot] = 1;
            candidates.push(slot);
            if (candidates.length > limit) return null;
          }
        }
      }
      // The rest probed in ascending slot order, dropping a title once it cannot reach its share.
      candidates.sort((x, y) => x - y);
      for (let k = prefix; k <= a && candidates.length > 0; k++) {
        const list = lists[k];
        const kept: number[] = [];
        let position = 0;
        for (const slot of candidates) {
          if (list) {
            position = seek(list, position, slot);
            if (position < list.length && list.slots[position] === slot) shared[slot]!++;
          }
          // Lists after this one may add one each.
          if (shared[slot]! + Math.max(a - k - 1, 0) >= needed(this.counts[slot]!)) kept.push(slot);
          else shared[slot] = 0;
        }
        candidates = kept;
      }
      const found: string[] = [];
      for (const slot of candidates)
        if (similarityOf(shared[slot]!, this.counts[slot]!, a) >= DOCSTORE.minTitleSimilarity)
          found.push(this.ids.idOf(slot));
      return found;
    } finally {
      for (const slot of candidates) shared[slot] = 0;
    }
  }
}

const EMPTY: Postings = { slots: new Int32Array(0), length: 0 };

/** The first position ≥ `from` of an ascending list whose slot is ≥ `slot` (galloping, then binary search). */
function seek(list: Postings, from: number, slot: number): number {
  const slots = list.slots;
  if (from >= list.length || slots[from]! >= slot) return from;
  let step = 1;
  let low = from;
  let high = from + 1;
  while (high < list.length && slots[high]! < slot) {
    low = high;
    step *= 2;
    high = Math.min(list.length, high + step);
  }
  while (low < high) {
    const mid = (low + high) >> 1;
    if (slots[mid]! < slot) low = mid + 1;
    else high = mid;
  }
  return low;
}
