import { describe, expect, it } from 'vitest';
import { fuse, LANE_WEIGHTS, queryConfigs, RRF_K } from './knowledge.retrieval.js';

const EQUAL = { vector: 1, fulltext: 1, docstore: 1 };

describe('fuse (reciprocal rank fusion)', () => {
  it("sums 1/(k + rank) over lanes and keeps each lane's score and rank", () => {
    const fused = fuse(
      {
        fulltext: [
          { chunk_id: 'a', score: 9 },
          { chunk_id: 'b', score: 5 },
        ],
        docstore: [
          { chunk_id: 'b', score: 0.8 },
          { chunk_id: 'c', score: 0.7 },
        ],
      },
      RRF_K,
      EQUAL,
    );
    expect(fused.map((hit) => hit.chunk_id)).toEqual(['b', 'a', 'c']);
    expect(fused[0]!.score).toBeCloseTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1));
    expect(fused[0]!.scores).toEqual({ fulltext: 5, docstore: 0.8 });
    expect(fused[0]!.ranks).toEqual({ fulltext: 2, docstore: 1 });
  });

  it('breaks equal fused scores by the best single rank', () => {
    const fused = fuse(
      { fulltext: [{ chunk_id: 'x', score: 1 }], docstore: [{ chunk_id: 'y', score: 1 }] },
      RRF_K,
      EQUAL,
    );
    expect(fused).toHaveLength(2);
    expect(fused[0]!.score).toBe(fused[1]!.score);
  });

  it('weighs the docstore lane below full text by default', () => {
    const fused = fuse({
      fulltext: [
        { chunk_id: 'a', score: 2 },
        { chunk_id: 'b', score: 1 },
      ],
      docstore: [{ chunk_id: 'b', score: 1 }],
    });
    expect(fused.map((hit) => hit.chunk_id)).toEqual(['b', 'a']);
    expect(fused[0]!.score).toBeCloseTo(1 / (RRF_K + 2) + LANE_WEIGHTS.docstore / (RRF_K + 1));
    const alone = fuse({ fulltext: [{ chunk_id: 'a', score: 2 }], docstore: [{ chunk_id: 'c', score: 1 }] });
    expect(alone.map((hit) => hit.chunk_id)).toEqual(['a', 'c']);
  });

  it('returns nothing for no lanes', () => {
    expect(fuse({})).toEqual([]);
  });
});

describe('queryConfigs', () => {
  it('reads Arabic queries with the Arabic configuration and English ones with English', () => {
    expect(queryConfigs('ما هي سياسة الاسترجاع')).toEqual(['arabic']);
    expect(queryConfigs('what is the refund policy')).toEqual(['english']);
  });
});
