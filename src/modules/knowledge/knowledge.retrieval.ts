/**
 * The retrieval engine: runs the enabled lanes (vector, full text, docstore) and fuses their
 * rankings by reciprocal rank. Each result keeps every lane's own score.
 */
import type { Db } from '../../db/database.js';
import type { Embedder } from '../../ports/embedder.js';
import type { MemoryLanes } from './knowledge.memory-lanes.js';
import type { Bm25Lanes } from './knowledge.bm25-lanes.js';
import type { Lexicon } from './knowledge.lexicon.js';
import * as searchRepo from './knowledge.search.repo.js';
import type { ChunkDetails, LaneFilters, LaneHit, TextLanes } from './knowledge.search.types.js';
import { detectLanguage, jaccard, shingles, textSearchConfig } from './knowledge.text.js';
import { EXPANSION_WEIGHT, expandQuery } from './knowledge.expansion.js';
import type { VectorIndexes } from './knowledge.vector-index.js';

export type Lane = 'vector' | 'fulltext' | 'docstore';
export type VectorLaneState = 'used' | 'unavailable' | 'disabled';

export interface SearchInput {
  query: string;
  topK?: number;
  collectionIds?: string[];
  categories?: string[];
  startDate?: Date;
  endDate?: Date;
  lanes?: { vector?: boolean; fulltext?: boolean; docstore?: boolean };
  signal?: AbortSignal;
  /** Ranking of the full-text lane: BM25 (default) or ts_rank_cd (for comparison). */
  fulltextRanking?: 'bm25' | 'ts_rank_cd';
  /** Whether the full-text lane adds the query's support-domain equivalents (default true). */
  expand?: boolean;
}

/** A found chunk with its fused score and each lane's own score and rank. */
export type SearchResult = Omit<ChunkDetails, 'id'> & {
  chunk_id: string;
  score: number;
  scores: Partial<Record<Lane, number>>;
  ranks: Partial<Record<Lane, number>>;
};

export interface SearchOutput {
  results: SearchResult[];
  vector_lane: VectorLaneState;
  /** Why the vector lane is unavailable, when it is. */
  vector_lane_reason: string | null;
  lanes: Lane[];
}

/** The reciprocal-rank-fusion constant (Cormack et al.). */
export const RRF_K = 60;

export interface FusedHit {
  chunk_id: string;
  score: number;
  scores: Partial<Record<Lane, number>>;
  ranks: Partial<Record<Lane, number>>;
}

/**
 * Weights of the lanes in the fusion. The docstore lane is a precision lane (phrases, titles):
 * at full weight its guesses displaced better full-text hits (SciFact nDCG@10 0.620 fused vs
 * 0.692 full text alone); see bench/retrieval and docs/decisions.md.
 */
export const LANE_WEIGHTS: Record<Lane, number> = { vector: 1, fulltext: 1, docstore: 0.3 };

/** Weighted reciprocal rank fusion: Σ weight / (k + rank); ties broken by best single rank. */
export function fuse(
  lanes: Partial<Record<Lane, LaneHit[]>>,
  k = RRF_K,
  weights: Record<Lane, number> = LANE_WEIGHTS,
): FusedHit[] {
  const fused = new Map<string, FusedHit>();
  for (const [lane, hits] of Object.entries(lanes) as [Lane, LaneHit[]][]) {
    hits.forEach((hit, index) => {
      const entry = fused.get(hit.chunk_id) ?? { chunk_id: hit.chunk_id, score: 0, scores: {}, ranks: {} };
      entry.score += weights[lane] / (k + index + 1);
      entry.scores[lane] = hit.score;
      entry.ranks[lane] = index + 1;
      fused.set(hit.chunk_id, entry);
    });
  }
  const best = (hit: FusedHit) => Math.min(...Object.values(hit.ranks));
  return [...fused.values()].sort(
    (a, b) => b.score - a.score || best(a) - best(b) || a.chunk_id.localeCompare(b.chunk_id),
  );
}

/**
 * The full-text lane with the query's expansion: each chunk's BM25 score for the query plus
 * `weight` × its score for the equivalents' words (BM25 is a sum over terms, so this is BM25 with
 * the added terms weighted below the query's own), best first, `depth` kept.
 */
export function withExpansion(own: LaneHit[], added: LaneHit[], weight: number, depth: number): LaneHit[] {
  const scores = new Map(own.map((hit) => [hit.chunk_id, hit.score]));
  for (const hit of added) scores.set(hit.chunk_id, (scores.get(hit.chunk_id) ?? 0) + weight * hit.score);
  return [...scores]
    .map(([chunk_id, score]) => ({ chunk_id, score }))
    .sort((a, b) => b.score - a.score || a.chunk_id.localeCompare(b.chunk_id))
    .slice(0, depth);
}

/** Text-search configurations to read a query with: its own language's, and English for Latin script. */
export function queryConfigs(query: string): string[] {
  const config = textSearchConfig(detectLanguage(query));
  return config === 'arabic' || config === 'english' ? [config] : [...new Set([config, 'english'])];
}

export interface EmbedderState {
  embedder: Embedder | null;
  /** Why there is no embedder (configuration), when there is none. */
  reason: string | null;
}

export function createRetrieval(deps: {
  db: Db;
  vectors: VectorIndexes;
  embedding: EmbedderState;
  memory: MemoryLanes | null;
  bm25?: Bm25Lanes | null;
  lexicon?: Lexicon;
}) {
  const { db, vectors, embedding, memory, bm25, lexicon } = deps;

  /** The query's lexemes: from the lexicon when it knows every word, else read by PostgreSQL (one round trip). */
  async function lexemesOf(query: string, configs: string[]) {
    return lexicon?.lex(query, configs)?.lexemes ?? searchRepo.queryLexemes(db, query, configs);
  }

  /**
   * The text lanes from memory when the company's index is held and the query's words known;
   * for a large knowledge base, the full-text lane from its BM25 index and the docstore lane in
   * SQL; else both in SQL.
   */
  async function textLanes(input: searchRepo.TextLanesInput): Promise<TextLanes> {
    if (input.fulltext === 'ts_rank_cd') return searchRepo.textLanes(db, input);
    const held = memory?.search(input.companyId, { ...input, fulltext: input.fulltext === 'bm25' });
    if (held) return held;
    if (input.fulltext === 'bm25' && bm25 && bm25.heldVersion(input.companyId) !== null) {
      const [lexemes, docstore] = await Promise.all([
        lexemesOf(input.query, input.configs),
        input.docstore ? searchRepo.textLanes(db, { ...input, fulltext: null }) : null,
      ]);
      const fulltext = bm25.search(input.companyId, lexemes, input.filters, input.depth);
      // Dropped while the words were read (a failed update): the lane in SQL.
      const hits = fulltext ?? (await searchRepo.textLanes(db, { ...input, docstore: false })).fulltext;
      return { fulltext: hits, docstore: docstore?.docstore ?? null, details: docstore?.details ?? [] };
    }
    // Not held (yet): in SQL, and the index prepared when the company is large enough for one.
    if (input.fulltext === 'bm25') bm25?.search(input.companyId, [], input.filters, 0);
    return searchRepo.textLanes(db, input);
  }

  async function vectorLane(companyId: string, input: SearchInput, filters: LaneFilters, depth: number) {
    if (!embedding.embedder) return { hits: [] as LaneHit[], state: 'unavailable' as const, reason: embedding.reason };
    try {
      const [query] = await embedding.embedder.embed([input.query], input.signal);
      const hits = await vectors.search(companyId, embedding.embedder.id, query!, filters, depth);
      return { hits, state: 'used' as const, reason: null };
    } catch (error) {
      if (input.signal?.aborted) throw error;
      return { hits: [] as LaneHit[], state: 'unavailable' as const, reason: (error as Error).message };
    }
  }

  async function search(companyId: string, input: SearchInput): Promise<SearchOutput> {
    const topK = input.topK ?? 4;
    const depth = Math.max(50, topK * 5);
    const filters: LaneFilters = {
      collectionIds: input.collectionIds,
      categories: input.categories,
      startDate: input.startDate,
      endDate: input.endDate,
    };
    const enabled = {
      vector: input.lanes?.vector ?? true,
      fulltext: input.lanes?.fulltext ?? true,
      docstore: input.lanes?.docstore ?? true,
    };
    const configs = queryConfigs(input.query);
    const fulltextRanking = enabled.fulltext ? (input.fulltextRanking ?? 'bm25') : null;
    const expansion = fulltextRanking === 'bm25' && input.expand !== false ? expandQuery(input.query).text : '';
    const [vector, text, expanded] = await Promise.all([
      enabled.vector ? vectorLane(companyId, input, filters, depth) : null,
      fulltextRanking || enabled.docstore
        ? textLanes({
            companyId,
            query: input.query,
            configs,
            filters,
            depth,
            fulltext: fulltextRanking,
            docstore: enabled.docstore,
            detailRank: topK,
          })
        : null,
      expansion
        ? textLanes({
            companyId,
            query: expansion,
            configs,
            filters,
            depth,
            fulltext: 'bm25',
            docstore: false,
            detailRank: topK,
          })
        : null,
    ]);
    const lanes: Partial<Record<Lane, LaneHit[]>> = {};
    if (vector?.state === 'used') lanes.vector = vector.hits;
    if (text?.fulltext)
      lanes.fulltext = expanded?.fulltext
        ? withExpansion(text.fulltext, expanded.fulltext, EXPANSION_WEIGHT, depth)
        : text.fulltext;
    if (text?.docstore) lanes.docstore = text.docstore;
    const fused = fuse(lanes).slice(0, topK);
    // The text lanes bring the details of their top hits; the rest (vector hits, deeper ranks) is looked up.
    const details = new Map([...(text?.details ?? []), ...(expanded?.details ?? [])].map((row) => [row.id, row]));
    const missing = fused.map((hit) => hit.chunk_id).filter((id) => !details.has(id));
    for (const row of await searchRepo.chunkDetails(db, companyId, missing)) details.set(row.id, row);
    const results: SearchResult[] = [];
    for (const hit of fused) {
      const chunk = details.get(hit.chunk_id);
      if (!chunk) continue;
      const { id, ...fields } = chunk;
      results.push({ ...fields, chunk_id: id, score: hit.score, scores: hit.scores, ranks: hit.ranks });
    }
    return {
      results,
      vector_lane: enabled.vector ? vector!.state : 'disabled',
      vector_lane_reason: enabled.vector ? vector!.reason : null,
      lanes: Object.keys(lanes) as Lane[],
    };
  }

  /**
   * Near-duplicates of `text` among the company's documents: cosine of embeddings when an
   * embedder works, else Jaccard similarity of word 3-shingles.
   */
  async function similar(companyId: string, text: string, threshold: number) {
    const configs = queryConfigs(text);
    const lexemes = (await searchRepo.queryLexemes(db, text.slice(0, 20_000), configs)).slice(0, 200);
    const candidates = await searchRepo.similarCandidates(db, companyId, lexemes, 50);
    let method: 'embeddings' | 'shingles' = 'shingles';
    let scores: number[];
    try {
      if (!embedding.embedder || candidates.length === 0) throw new Error('no embedder');
      const vectors = await embedding.embedder.embed([
        text.slice(0, 8000),
        ...candidates.map((doc) => doc.content.slice(0, 8000)),
      ]);
      const [query, ...others] = vectors;
      scores = others.map((vector) => vector.reduce((sum, value, i) => sum + value * query![i]!, 0));
      method = 'embeddings';
    } catch {
      const mine = shingles(text);
      scores = candidates.map((doc) => jaccard(mine, shingles(doc.content)));
    }
    const matches = candidates
      .map((doc, i) => ({
        document_id: doc.id,
        title: doc.title,
        similarity: Math.max(0, Math.min(1, scores[i] ?? 0)),
      }))
      .sort((a, b) => b.similarity - a.similarity);
    const maxSimilarity = matches[0]?.similarity ?? 0;
    return {
      is_duplicate: maxSimilarity >= threshold,
      max_similarity: maxSimilarity,
      method,
      matches: matches.filter((match) => match.similarity >= threshold).slice(0, 10),
    };
  }

  return { search, similar };
}

export type Retrieval = ReturnType<typeof createRetrieval>;
