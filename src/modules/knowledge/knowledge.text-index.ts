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
  passesFilters as matches,
  type ChunkDetails,
  type IndexSnapshot,
  type LaneFilters,
  type LaneHit,
  type TextLanes,
} from './knowledge.search.types.js';
import { PostingsBuilder, type Postings } from './knowledge.postings.js';
import {
  phraseMatches,
  similarityOf,
  trigrams,
  tsRankOr,
  type LexedQuery,
  type PhraseStep,
} from './knowledge.text-scoring.js';

interface Holder {
  collectionId: string | null;
  categories: string[];
  createdAt: number;
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

export type { IndexChunkRow, IndexDocumentRow, IndexSnapshot } from './knowledge.search.types.js';

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
          questions: snapshot.documents[document]!.questions,
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
