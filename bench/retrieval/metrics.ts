/** Ranking metrics over document ids: nDCG@k (graded gains) and recall@k. */

/** nDCG@k of `ranked` against `judged` (document id → gain > 0). */
export function ndcgAt(ranked: string[], judged: Map<string, number>, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, index) => {
    const gain = judged.get(id) ?? 0;
    if (gain > 0) dcg += gain / Math.log2(index + 2);
  });
  const ideal = [...judged.values()]
    .filter((gain) => gain > 0)
    .sort((a, b) => b - a)
    .slice(0, k);
  const idcg = ideal.reduce((sum, gain, index) => sum + gain / Math.log2(index + 2), 0);
  return idcg === 0 ? 0 : dcg / idcg;
}

/** Share of the relevant documents found in the first k. */
export function recallAt(ranked: string[], judged: Map<string, number>, k: number): number {
  const relevant = [...judged.entries()].filter(([, gain]) => gain > 0).map(([id]) => id);
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((id) => top.has(id)).length / relevant.length;
}
