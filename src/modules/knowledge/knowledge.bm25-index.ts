/**
 * The full-text lane of a large knowledge base in memory: BM25 over one company's postings,
 * scored as the SQL lane scores them (knowledge.search.repo.ts: the same idf from the live
 * document frequency, the same length normalisation from the corpus statistics), answering the
 * top hits with MaxScore pruning (Turtle & Flood) refined by block maxima: a chunk is scored
 * only while the best it could still reach beats the current k-th hit, so the cost follows the
 * rare terms of a query, not the length of its common terms' postings.
 *
 * Chunks live in slots (typed arrays: the id's 16 bytes, length, filter fields, alive bit);
 * postings per lexeme are ascending slots with their term frequency, in growable typed arrays,
 * with the largest tf and smallest chunk length of each block of 64 postings. Changes arrive as
 * the ids of chunks touched (the change log of migration 0205): their slots die, and their
 * current rows get new slots at the end, so every list stays ascending. Document frequencies
 * count live postings only; a dead slot's postings are found by a scan of the lists (sliced).
 */
import { grow, IdSlots } from './knowledge.id-slots.js';
import { BM25, type LaneFilters, type LaneHit } from './knowledge.search.types.js';
import { readTsvector } from './knowledge.text-scoring.js';

export interface Bm25ChunkRow {
  id: string;
  token_count: number;
  collection_id: string | null;
  categories: string[];
  document_created_at: Date;
  /** The chunk's tsvector as text. */
  tsv: string;
}

/** kb_corpus_stats of the company at the version the index reflects. */
export interface CorpusState {
  chunk_count: number;
  token_total: number;
  version: number;
}

const BLOCK_SHIFT = 6;
const BLOCK = 1 << BLOCK_SHIFT;
/** Upper bounds are widened by this much, so that rounding never prunes a chunk that belongs in the top. */
const BOUND_SLACK = 1 + 1e-9;

class PostingList {
  slots = new Int32Array(4);
  tfs = new Uint16Array(4);
  length = 0;
  /** Live postings (the lexeme's document frequency). */
  df = 0;
  maxTf = 0;
  minDl = Number.MAX_SAFE_INTEGER;
  blockMaxTf = new Uint16Array(1);
  blockMinDl = new Int32Array(1);

  push(slot: number, tf: number, dl: number) {
    const k = this.length++;
    if (k === this.slots.length) {
      this.slots = grow(this.slots, k + 1);
      this.tfs = grow(this.tfs, k + 1);
    }
    this.slots[k] = slot;
    this.tfs[k] = tf;
    const block = k >> BLOCK_SHIFT;
    if ((k & (BLOCK - 1)) === 0) {
      this.blockMaxTf = grow(this.blockMaxTf, block + 1);
      this.blockMinDl = grow(this.blockMinDl, block + 1);
      this.blockMaxTf[block] = tf;
      this.blockMinDl[block] = dl;
    } else {
      if (tf > this.blockMaxTf[block]!) this.blockMaxTf[block] = tf;
      if (dl < this.blockMinDl[block]!) this.blockMinDl[block] = dl;
    }
    if (tf > this.maxTf) this.maxTf = tf;
    if (dl < this.minDl) this.minDl = dl;
    this.df++;
  }

  /** Releases the spare capacity of a finished build. */
  trim() {
    this.slots = this.slots.slice(0, this.length);
    this.tfs = this.tfs.slice(0, this.length);
    const blocks = (this.length + BLOCK - 1) >> BLOCK_SHIFT;
    this.blockMaxTf = this.blockMaxTf.slice(0, blocks);
    this.blockMinDl = this.blockMinDl.slice(0, blocks);
  }

  /** First position ≥ `from` whose slot is ≥ `slot` (blocks skipped by their last slot, then a binary search). */
  seek(from: number, slot: number): number {
    const slots = this.slots;
    if (from >= this.length || slots[from]! >= slot) return from;
    let block = from >> BLOCK_SHIFT;
    const lastBlock = (this.length - 1) >> BLOCK_SHIFT;
    while (block < lastBlock && slots[((block + 1) << BLOCK_SHIFT) - 1]! < slot) block++;
    let low = Math.max(from, block << BLOCK_SHIFT);
    let high = Math.min(this.length, (block + 1) << BLOCK_SHIFT);
    while (low < high) {
      const mid = (low + high) >> 1;
      if (slots[mid]! < slot) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  get bytes() {
    return this.slots.byteLength + this.tfs.byteLength + this.blockMaxTf.byteLength + this.blockMinDl.byteLength + 96;
  }
}

/** One query term while a search runs. */
interface Cursor {
  list: PostingList;
  idf: number;
  /** The most this term adds to any chunk. */
  bound: number;
  position: number;
}

export class Bm25Index {
  private readonly lists = new Map<string, PostingList>();
  private readonly ids = new IdSlots();
  private dl = new Int32Array(16);
  private alive = new Uint8Array(16);
  private collection = new Int32Array(16);
  private categorySet = new Int32Array(16);
  private createdAt = new Float64Array(16);
  private liveCount = 0;
  private readonly collections = new Map<string, number>();
  private readonly collectionNames: (string | null)[] = [];
  private readonly categorySets = new Map<string, number>();
  private readonly categoryLists: string[][] = [];
  private lexemeBytes = 0;
  corpus: CorpusState;

  constructor(corpus: CorpusState) {
    this.corpus = corpus;
  }

  /** Live chunks held. */
  get size() {
    return this.liveCount;
  }

  get version() {
    return this.corpus.version;
  }

  /** Slots whose chunk was removed or replaced since the build. */
  get deadSlots() {
    return this.ids.count - this.liveCount;
  }

  /** Bytes of the arrays and (estimated) of the lexeme table. */
  get bytes(): number {
    let total =
      this.ids.bytes +
      this.dl.byteLength +
      this.alive.byteLength +
      this.collection.byteLength +
      this.categorySet.byteLength +
      this.createdAt.byteLength +
      this.lexemeBytes;
    for (const list of this.lists.values()) total += list.bytes;
    return total;
  }

  private intern(collectionId: string | null, categories: string[]) {
    const collectionKey = collectionId ?? '';
    let c = this.collections.get(collectionKey);
    if (c === undefined) {
      c = this.collectionNames.length;
      this.collections.set(collectionKey, c);
      this.collectionNames.push(collectionId);
    }
    const categoryKey = JSON.stringify(categories);
    let k = this.categorySets.get(categoryKey);
    if (k === undefined) {
      k = this.categoryLists.length;
      this.categorySets.set(categoryKey, k);
      this.categoryLists.push(categories);
    }
    return [c, k] as const;
  }

  /** Adds a chunk in a new slot (after every existing one). */
  add(row: Bm25ChunkRow) {
    const slot = this.ids.append(row.id);
    this.dl = grow(this.dl, slot + 1);
    this.alive = grow(this.alive, slot + 1);
    this.collection = grow(this.collection, slot + 1);
    this.categorySet = grow(this.categorySet, slot + 1);
    this.createdAt = grow(this.createdAt, slot + 1);
    this.dl[slot] = row.token_count;
    this.alive[slot] = 1;
    const [c, k] = this.intern(row.collection_id, row.categories);
    this.collection[slot] = c;
    this.categorySet[slot] = k;
    this.createdAt[slot] = row.document_created_at.getTime();
    this.ids.index(slot, this.alive);
    this.liveCount++;
    readTsvector(row.tsv, (lexeme, positions) => {
      let list = this.lists.get(lexeme);
      if (!list) {
        list = new PostingList();
        this.lists.set(lexeme, list);
        this.lexemeBytes += 2 * lexeme.length + 80;
      }
      list.push(slot, positions.length || 1, row.token_count);
    });
  }

  /** Ends a build: spare capacity released. */
  trim() {
    for (const list of this.lists.values()) list.trim();
  }

  /**
   * The slots of these chunk ids that are alive (to be removed by `remove` once their postings'
   * lexemes are counted by `countRemoved`).
   */
  slotsOf(ids: readonly string[]): number[] {
    const slots: number[] = [];
    for (const id of ids) {
      const slot = this.ids.lookup(id);
      if (slot >= 0 && this.alive[slot]) slots.push(slot);
    }
    return slots.sort((a, b) => a - b);
  }

  /**
   * How many of `slots` (ascending) each lexeme's list holds: a scan of every list, yielding to
   * the event loop every few milliseconds.
   */
  async countRemoved(slots: readonly number[]): Promise<Map<PostingList, number>> {
    const counts = new Map<PostingList, number>();
    if (slots.length === 0) return counts;
    const first = slots[0]!;
    const last = slots[slots.length - 1]!;
    let sliceStart = performance.now();
    let visited = 0;
    for (const list of this.lists.values()) {
      if (list.length > 0 && list.slots[list.length - 1]! >= first && list.slots[0]! <= last) {
        let position = 0;
        let found = 0;
        for (const slot of slots) {
          position = list.seek(position, slot);
          if (position >= list.length) break;
          if (list.slots[position] === slot) found++;
        }
        if (found) counts.set(list, found);
      }
      if ((++visited & 1023) === 0 && performance.now() - sliceStart > 5) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    }
    return counts;
  }

  /** Takes the slots out (their ids free again), with the lexeme counts `countRemoved` gave for them. */
  remove(slots: readonly number[], counts: Map<PostingList, number>) {
    for (const slot of slots) {
      if (!this.alive[slot]) continue;
      this.alive[slot] = 0;
      this.liveCount--;
    }
    for (const [list, count] of counts) list.df -= count;
    // The id table is rebuilt without the dead slots (their ids may come back in new slots).
    this.ids.rebuild(this.alive);
  }

  /**
   * The `depth` best chunks for the lexemes (each counted once), among those passing the
   * filters: score descending, then chunk id — the SQL lane's order.
   */
  search(lexemes: readonly string[], filters: LaneFilters, depth: number): LaneHit[] {
    const { k1, b } = BM25;
    const n = Math.max(this.corpus.chunk_count, 1);
    const avgdl = Math.max(this.corpus.token_total / Math.max(this.corpus.chunk_count, 1), 1);
    const termScore = (tf: number, dl: number) => (tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * dl) / avgdl));
    const cursors: Cursor[] = [];
    for (const lexeme of new Set(lexemes)) {
      const list = this.lists.get(lexeme);
      if (!list || list.df <= 0) continue;
      const idf = Math.log(1 + (n - list.df + 0.5) / (list.df + 0.5));
      cursors.push({ list, idf, bound: idf * termScore(list.maxTf, list.minDl) * BOUND_SLACK, position: 0 });
    }
    if (cursors.length === 0 || depth <= 0) return [];
    // Ascending bounds; prefix[i] = the most terms 0…i add together.
    cursors.sort((x, y) => x.bound - y.bound);
    const prefix = new Float64Array(cursors.length);
    cursors.reduce((sum, cursor, i) => (prefix[i] = sum + cursor.bound), 0);
    const accepts = this.filterOf(filters);

    // Min-heap of the best hits so far: the root is the worst (lowest score, then highest id).
    const heapSlots = new Int32Array(depth);
    const heapScores = new Float64Array(depth);
    let heapSize = 0;
    const worse = (i: number, j: number) =>
      heapScores[i]! < heapScores[j]! ||
      (heapScores[i] === heapScores[j] && this.ids.compare(heapSlots[i]!, heapSlots[j]!) > 0);
    const swap = (i: number, j: number) => {
      const s = heapSlots[i]!;
      heapSlots[i] = heapSlots[j]!;
      heapSlots[j] = s;
      const v = heapScores[i]!;
      heapScores[i] = heapScores[j]!;
      heapScores[j] = v;
    };
    const siftDown = (i: number) => {
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heapSize && worse(l, m)) m = l;
        if (r < heapSize && worse(r, m)) m = r;
        if (m === i) return;
        swap(i, m);
        i = m;
      }
    };
    let threshold = 0;
    // Terms below `essential` together cannot lift a chunk to the threshold: only the others' postings are walked.
    let essential = 0;

    for (;;) {
      let candidate = Number.MAX_SAFE_INTEGER;
      for (let i = essential; i < cursors.length; i++) {
        const cursor = cursors[i]!;
        if (cursor.position < cursor.list.length) {
          const slot = cursor.list.slots[cursor.position]!;
          if (slot < candidate) candidate = slot;
        }
      }
      if (candidate === Number.MAX_SAFE_INTEGER) break;
      const dl = this.dl[candidate]!;
      const eligible = this.alive[candidate] === 1 && accepts(candidate);
      let score = 0;
      let blockBound = 0;
      for (let i = essential; i < cursors.length; i++) {
        const cursor = cursors[i]!;
        const list = cursor.list;
        if (cursor.position < list.length && list.slots[cursor.position] === candidate) {
          if (eligible) {
            const tf = list.tfs[cursor.position]!;
            score += (cursor.idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * dl) / avgdl));
          }
          cursor.position++;
        }
      }
      if (!eligible) continue;
      // The non-essential terms, largest first, while the chunk can still reach the threshold;
      // each term's block maximum (the block the chunk would be in) tightens its bound.
      let reachable = true;
      for (let i = essential - 1; i >= 0; i--) {
        if (heapSize === depth && score + prefix[i]! < threshold) {
          reachable = false;
          break;
        }
        const cursor = cursors[i]!;
        const list = cursor.list;
        cursor.position = list.seek(cursor.position, candidate);
        if (cursor.position >= list.length) continue;
        const block = cursor.position >> BLOCK_SHIFT;
        blockBound =
          cursor.idf * termScore(list.blockMaxTf[block]!, list.blockMinDl[block]!) * BOUND_SLACK +
          (i > 0 ? prefix[i - 1]! : 0);
        if (heapSize === depth && score + blockBound < threshold) {
          reachable = false;
          break;
        }
        if (list.slots[cursor.position] === candidate) {
          const tf = list.tfs[cursor.position]!;
          score += (cursor.idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * dl) / avgdl));
        }
      }
      if (!reachable) continue;
      if (heapSize < depth) {
        heapSlots[heapSize] = candidate;
        heapScores[heapSize] = score;
        for (let i = heapSize++; i > 0;) {
          const parent = (i - 1) >> 1;
          if (!worse(i, parent)) break;
          swap(i, parent);
          i = parent;
        }
      } else if (
        score > heapScores[0]! ||
        (score === heapScores[0] && this.ids.compare(candidate, heapSlots[0]!) < 0)
      ) {
        heapSlots[0] = candidate;
        heapScores[0] = score;
        siftDown(0);
      } else {
        continue;
      }
      if (heapSize === depth) {
        threshold = heapScores[0]!;
        while (essential < cursors.length && prefix[essential]! < threshold) essential++;
      }
    }
    const hits: { slot: number; score: number }[] = [];
    for (let i = 0; i < heapSize; i++) hits.push({ slot: heapSlots[i]!, score: heapScores[i]! });
    hits.sort((x, y) => y.score - x.score || this.ids.compare(x.slot, y.slot));
    return hits.map((hit) => ({ chunk_id: this.ids.idOf(hit.slot), score: hit.score }));
  }

  /** A slot test for the filters, with each collection and category set judged once. */
  private filterOf(filters: LaneFilters): (slot: number) => boolean {
    const { collectionIds, categories, startDate, endDate } = filters;
    const collections = collectionIds?.length
      ? this.collectionNames.map((name) => name !== null && collectionIds.includes(name))
      : null;
    const categorySets = categories?.length
      ? this.categoryLists.map((list) => list.some((category) => categories.includes(category)))
      : null;
    const start = startDate?.getTime() ?? -Infinity;
    const end = endDate?.getTime() ?? Infinity;
    if (!collections && !categorySets && !startDate && !endDate) return () => true;
    return (slot) =>
      (!collections || collections[this.collection[slot]!]!) &&
      (!categorySets || categorySets[this.categorySet[slot]!]!) &&
      this.createdAt[slot]! >= start &&
      this.createdAt[slot]! <= end;
  }
}

export type { PostingList };
