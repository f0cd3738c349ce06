/**
 * The in-process BM25 index against the SQL lane it stands in for, on the judged queries of
 * SciFact and Cranfield: nDCG@10 and recall@10 through the search route (full text only, and all
 * lanes fused), with the SQL lane (SEARCH_INDEX_MAX_CHUNKS=0) and with the index (every company
 * held: SEARCH_MEMORY_MAX_CHUNKS=0), side by side on one seeded database; and how far the two
 * arms' full-text scores of the same results are apart.
 *
 *   npx tsx bench/retrieval/index-ndcg.ts [--datasets scifact,cranfield]
 *
 * Uses BENCH_DATABASE_URL, else a fresh database on the local PostgreSQL (dropped afterwards).
 */
import { parseArgs } from 'node:util';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { startInProcess } from '../lib/in-process.js';
import { createTenant } from '../../test/helpers/factories.js';
import { benchDatabase } from '../lib/harness.js';
import { loadDataset } from './datasets.js';
import { ndcgAt, recallAt } from './metrics.js';
import { seedDataset } from './seed.js';

const { values } = parseArgs({ options: { datasets: { type: 'string', default: 'scifact,cranfield' } } });

type Result = { document_id: string; chunk_id: string; scores: { fulltext?: number } };

const ARMS: [string, Record<string, string>][] = [
  ['SQL lane', { SEARCH_INDEX_MAX_CHUNKS: '0', SEARCH_MEMORY_MAX_CHUNKS: '0' }],
  ['in-process index', { SEARCH_MEMORY_MAX_CHUNKS: '0' }],
];
const MODES: [string, object][] = [
  ['full text', { enable_docstoresearch: false, enable_vectorsearch: false }],
  ['fused', {}],
];

async function main() {
  const database = await benchDatabase();
  const handle = createDatabase(database.url, 4);
  await migrateToLatest(handle.db);
  const seeder = await startInProcess(database.url, ARMS[0]![1]);
  try {
    for (const name of values.datasets!.split(',')) {
      const dataset = await loadDataset(name);
      const tenant = await createTenant(seeder.container, 'developer');
      const t0 = performance.now();
      const corpusOf = await seedDataset(handle.db, tenant.companyId, tenant.userId, dataset, { postings: true });
      const queries = dataset.queries.filter((query) => dataset.qrels.has(query.id));
      console.log(
        `\n=== ${name}: ${dataset.corpus.length} documents seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s, ${queries.length} judged queries`,
      );
      const results = new Map<string, Result[][]>();
      for (const [arm, env] of ARMS) {
        const target = await startInProcess(database.url, env);
        try {
          const search = async (query: string, method: object) => {
            const response = await target.app.inject({
              method: 'POST',
              url: '/api/public/documents/search',
              headers: tenant.headers,
              payload: { query, top_k: 50, categories: [], search_method: method },
            });
            if (response.statusCode !== 200) throw new Error(response.body);
            return response.json().results as Result[];
          };
          if (arm !== 'SQL lane') {
            await search(queries[0]!.text, MODES[0]![1]);
            while (target.container.knowledge.bm25?.heldVersion(tenant.companyId) == null)
              await new Promise((resolve) => setTimeout(resolve, 100));
          }
          for (const [mode, method] of MODES) {
            const ranked: Result[][] = [];
            for (const query of queries) ranked.push(await search(query.text, method));
            results.set(`${arm} ${mode}`, ranked);
            let ndcg = 0;
            let recall = 0;
            ranked.forEach((list, i) => {
              const docs: string[] = [];
              for (const result of list) {
                const id = corpusOf.get(result.document_id.replace(/^doc_/, ''));
                if (id && !docs.includes(id)) docs.push(id);
              }
              const judged = dataset.qrels.get(queries[i]!.id)!;
              ndcg += ndcgAt(docs, judged, 10);
              recall += recallAt(docs, judged, 10);
            });
            console.log(
              `${`[${arm}] ${mode}`.padEnd(34)} nDCG@10 ${(ndcg / ranked.length).toFixed(4)}   recall@10 ${(recall / ranked.length).toFixed(4)}`,
            );
          }
        } finally {
          await target.close();
        }
      }
      for (const [mode] of MODES) {
        const mine = results.get(`in-process index ${mode}`)!;
        const theirs = results.get(`SQL lane ${mode}`)!;
        let differentOrder = 0;
        let maxScoreGap = 0;
        mine.forEach((list, i) => {
          const other = theirs[i]!;
          if (list.map((r) => r.chunk_id).join() !== other.map((r) => r.chunk_id).join()) differentOrder++;
          const score = new Map(other.map((r) => [r.chunk_id, r.scores.fulltext]));
          for (const result of list) {
            const a = result.scores.fulltext;
            const b = score.get(result.chunk_id);
            if (a !== undefined && b !== undefined) maxScoreGap = Math.max(maxScoreGap, Math.abs(a - b));
          }
        });
        console.log(
          `${mode}: queries whose 50 results differ in order ${differentOrder}/${mine.length} (ties in score may order apart); largest gap of a full-text score ${maxScoreGap.toExponential(2)}`,
        );
      }
    }
  } finally {
    await seeder.close();
    await handle.close();
    await database.drop();
  }
}

await main();
