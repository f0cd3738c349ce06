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
import {
  DOCSTORE,
  type ChunkDetails,
  type LaneFilters,
  type LaneHit,
  type TextLanes,
} from './knowledge.search.types.js';
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

  /**
   * The query's lexemes: from the lexicon (its pieces' lexemes remembered; new pieces asked of
   * PostgreSQL together), else read whole by PostgreSQL (one round trip).
   */
  async function lexemesOf(query: string, configs: string[]) {
    return (await lexicon?.lexemes(query, configs)) ?? searchRepo.queryLexemes(db, query, configs);
  }

  /**
   * Both text lanes when the company's full-text lane is held in a BM25 index: the query's pass
   * and its expansion's in memory, then one statement for the docstore lane and the details of
   * the full-text lane's top hits (read by id, so a chunk deleted since the index last heard has
   * none and is never returned). Null when the index is not held (or was dropped meanwhile).
   */
  async function indexedLanes(
    companyId: string,
    input: searchRepo.TextLanesInput,
    expansion: string,
  ): Promise<(TextLanes & { asked: string[] }) | null> {
    if (!bm25 || bm25.heldVersion(companyId) === null || memory?.isHeld(companyId)) return null;
    const [own, added, titles] = await Promise.all([
      lexemesOf(input.query, input.configs),
      expansion ? lexemesOf(expansion, input.configs) : null,
      titleIds(input),
    ]);
    const ownHits = bm25.search(companyId, own, input.filters, input.depth);
    const addedHits = added ? bm25.search(companyId, added, input.filters, input.depth) : null;
    if (!ownHits || (added && !addedHits)) return null;
    const fulltext = addedHits ? withExpansion(ownHits, addedHits, EXPANSION_WEIGHT, input.depth) : ownHits;
    const asked = fulltext.slice(0, input.detailRank).map((hit) => hit.chunk_id);
    if (!input.docstore) {
      const details = await searchRepo.chunkDetails(db, companyId, asked);
      return { fulltext, docstore: null, details, asked };
    }
    const docstore = await searchRepo.docstoreWithDetails(db, { ...input, fulltext: null, titleIds: titles }, asked);
    return { fulltext, docstore: docstore.hits, details: docstore.details, asked };
  }

  /**
   * The text lanes from memory when the company's small-KB index is held and the query's words
   * known, else in SQL (and a large company's BM25 index prepared: `indexedLanes` answers once it
   * is held).
   */
  async function textLanes(input: searchRepo.TextLanesInput): Promise<TextLanes> {
    if (input.fulltext === 'ts_rank_cd') return searchRepo.textLanes(db, { ...input, titleIds: await titleIds(input) });
    const held = memory?.search(input.companyId, { ...input, fulltext: input.fulltext === 'bm25' });
    if (held) return held;
    if (input.fulltext === 'bm25') bm25?.search(input.companyId, [], input.filters, 0);
    return searchRepo.textLanes(db, { ...input, titleIds: await titleIds(input) });
  }

  /**
   * The documents titled near the query, from the title index held with a large company's BM25
   * index (null: the docstore statement scans the titles itself).
   */
  async function titleIds(input: searchRepo.TextLanesInput): Promise<string[] | null> {
    if (!bm25 || !input.docstore || input.query.length > DOCSTORE.maxTitleQueryLength) return null;
    if (memory?.isHeld(input.companyId)) return null;
    return bm25.titleMatches(input.companyId, input.query);
  }

  /** The text lanes, with the full-text lane's expansion pass added in. */
  async function allTextLanes(
    companyId: string,
    input: searchRepo.TextLanesInput,
    expansion: string,
  ): Promise<TextLanes & { asked?: string[] }> {
    const indexed = input.fulltext === 'bm25' ? await indexedLanes(companyId, input, expansion) : null;
    if (indexed) return indexed;
    const [text, expanded] = await Promise.all([
      textLanes(input),
      expansion ? textLanes({ ...input, query: expansion, fulltext: 'bm25', docstore: false }) : null,
    ]);
    return {
      fulltext:
        text.fulltext && expanded?.fulltext
          ? withExpansion(text.fulltext, expanded.fulltext, EXPANSION_WEIGHT, input.depth)
          : text.fulltext,
      docstore: text.docstore,
      details: [...text.details, ...(expanded?.details ?? [])],
    };
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
    const textInput: searchRepo.TextLanesInput = {
      companyId,
      query: input.query,
      configs,
      filters,
      depth,
      fulltext: fulltextRanking,
      docstore: enabled.docstore,
      detailRank: topK,
    };
    const [vector, text] = await Promise.all([
      enabled.vector ? vectorLane(companyId, input, filters, depth) : null,
      fulltextRanking || enabled.docstore ? allTextLanes(companyId, textInput, expansion) : null,
    ]);
    const lanes: Partial<Record<Lane, LaneHit[]>> = {};
    if (vector?.state === 'used') lanes.vector = vector.hits;
    if (text?.fulltext) lanes.fulltext = text.fulltext;
    if (text?.docstore) lanes.docstore = text.docstore;
    const fused = fuse(lanes).slice(0, topK);
    // The text lanes bring the details of their top hits; the rest (vector hits, deeper ranks) is
    // looked up (not those already asked for: deleted since the index last heard).
    const details = new Map((text?.details ?? []).map((row) => [row.id, row]));
    const asked = new Set(text?.asked ?? []);
    const missing = fused.map((hit) => hit.chunk_id).filter((id) => !details.has(id) && !asked.has(id));
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
