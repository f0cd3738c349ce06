/**
 * The shapes and constants the retrieval lanes share — the SQL lanes (knowledge.search.repo.ts),
 * the in-process indexes (knowledge.text-index.ts, knowledge.bm25-index.ts) and the engine that
 * fuses them. Imports nothing, so that none of those depends on another through it.
 */

export interface LaneFilters {
  collectionIds?: string[];
  categories?: string[];
  startDate?: Date;
  endDate?: Date;
}

export interface LaneHit {
  chunk_id: string;
  score: number;
}

/** BM25 parameters (Robertson/Lucene defaults as in the BEIR baseline). */
export const BM25 = { k1: 1.2, b: 0.75 };

/**
 * The docstore lane's title match: only for queries short enough to be a title lookup (a long
 * query's trigrams make the index scan cost tens of milliseconds at 100k chunks), and only for
 * titles close to the query (exact evidence).
 */
export const DOCSTORE = { minTitleSimilarity: 0.6, maxTitleQueryLength: 64 };

export interface ChunkDetails {
  id: string;
  text: string;
  document_id: string;
  title: string;
  /** The document's alternative questions. */
  questions: string[];
  collection_id: string | null;
  categories: string[];
  language: string;
}

export interface TextLanes {
  fulltext: LaneHit[] | null;
  docstore: LaneHit[] | null;
  /** Details of the chunks ranked within `detailRank` in a lane. */
  details: ChunkDetails[];
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
  questions: string[];
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

/** Whether a chunk's (or document's) filter fields pass the filters. */
export function passesFilters(
  holder: { collectionId: string | null; categories: readonly string[]; createdAt: number },
  filters: LaneFilters,
): boolean {
  if (filters.collectionIds?.length && !filters.collectionIds.includes(holder.collectionId ?? '')) return false;
  if (filters.categories?.length && !holder.categories.some((category) => filters.categories!.includes(category)))
    return false;
  if (filters.startDate && holder.createdAt < filters.startDate.getTime()) return false;
  if (filters.endDate && holder.createdAt > filters.endDate.getTime()) return false;
  return true;
}
