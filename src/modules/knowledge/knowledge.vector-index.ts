/**
 * The vector lane without pgvector: one in-process index per (company, embedding model), built
 * from the stored vectors and rebuilt when the company's corpus version in the database moves,
 * so every instance answers from the same data. Exact search (dot product of unit vectors).
 */
import type { Db } from '../../db/database.js';
import { corpusVersion } from './knowledge.tasks.repo.js';
import { vectorRows, type LaneFilters, type LaneHit } from './knowledge.search.repo.js';

interface Index {
  version: number;
  ids: string[];
  collections: (string | null)[];
  categories: string[][];
  createdAt: number[];
  dims: number;
  matrix: Float32Array;
}

export interface VectorIndexes {
  search(
    companyId: string,
    model: string,
    query: Float32Array,
    filters: LaneFilters,
    limit: number,
  ): Promise<LaneHit[]>;
  /** Entries held in memory (for stats). */
  size(): number;
}

function matches(index: Index, row: number, filters: LaneFilters): boolean {
  if (filters.collectionIds?.length && !filters.collectionIds.includes(index.collections[row] ?? '')) return false;
  if (filters.categories?.length && !index.categories[row]!.some((category) => filters.categories!.includes(category)))
    return false;
  if (filters.startDate && index.createdAt[row]! < filters.startDate.getTime()) return false;
  if (filters.endDate && index.createdAt[row]! > filters.endDate.getTime()) return false;
  return true;
}

export function createVectorIndexes(db: Db, maxIndexes = 64): VectorIndexes {
  const cache = new Map<string, Index>();
  const building = new Map<string, Promise<Index>>();

  async function build(companyId: string, model: string, version: number): Promise<Index> {
    const rows = await vectorRows(db, companyId, model);
    const dims = rows[0] ? rows[0].embedding.byteLength / 4 : 0;
    const usable = rows.filter((row) => row.embedding.byteLength === dims * 4);
    const matrix = new Float32Array(usable.length * dims);
    usable.forEach((row, i) => {
      matrix.set(
        new Float32Array(
          row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength),
        ),
        i * dims,
      );
    });
    return {
      version,
      dims,
      matrix,
      ids: usable.map((row) => row.id),
      collections: usable.map((row) => row.collection_id),
      categories: usable.map((row) => row.categories),
      createdAt: usable.map((row) => row.document_created_at.getTime()),
    };
  }

  async function current(companyId: string, model: string): Promise<Index> {
    const key = `${companyId}\u0000${model}`;
    const version = await corpusVersion(db, companyId);
    const cached = cache.get(key);
    if (cached && cached.version === version) return cached;
    const pendingKey = `${key}\u0000${version}`;
    let pending = building.get(pendingKey);
    if (!pending) {
      pending = build(companyId, model, version).finally(() => building.delete(pendingKey));
      building.set(pendingKey, pending);
    }
    const index = await pending;
    cache.delete(key);
    cache.set(key, index);
    while (cache.size > maxIndexes) cache.delete(cache.keys().next().value!);
    return index;
  }

  return {
    size: () => [...cache.values()].reduce((sum, index) => sum + index.ids.length, 0),
    async search(companyId, model, query, filters, limit) {
      const index = await current(companyId, model);
      if (index.dims !== query.length) return [];
      const scores: LaneHit[] = [];
      let floor = -Infinity;
      const { matrix, dims } = index;
      for (let row = 0; row < index.ids.length; row++) {
        let dot = 0;
        const offset = row * dims;
        for (let d = 0; d < dims; d++) dot += matrix[offset + d]! * query[d]!;
        if (dot <= floor && scores.length >= limit) continue;
        if (!matches(index, row, filters)) continue;
        scores.push({ chunk_id: index.ids[row]!, score: dot });
        if (scores.length > limit * 4) {
          scores.sort((a, b) => b.score - a.score);
          scores.length = limit;
          floor = scores[limit - 1]!.score;
        }
      }
      scores.sort((a, b) => b.score - a.score);
      return scores.slice(0, limit);
    },
  };
}
