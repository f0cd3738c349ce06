/**
 * Retrieval quality of the knowledge base on a public test collection, through the API: every
 * document is uploaded as an article (POST /documents/upload/article), the ingestion jobs run
 * in-process, then each test query is searched (POST /documents/search) with one lane at a time
 * and with the fusion. Reports nDCG@10 and recall@10 per lane, plus the ts_rank_cd ranking of the
 * full-text lane for comparison with BM25, and ingestion throughput and search latency.
 *
 *   npx tsx bench/retrieval/run.ts [--dataset scifact|cranfield|arcd] [--queries 300]
 *
 * Uses BENCH_DATABASE_URL, else a fresh database on the local PostgreSQL (dropped afterwards).
 * No embedder is configured here (no model weights on this machine), so the vector lane reports
 * itself unavailable and the fusion is full text + docstore.
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createTenant, createUser } from '../../test/helpers/factories.js';
import { loadDataset, type Dataset } from './datasets.js';
import { fuse, LANE_WEIGHTS, RRF_K, withExpansion } from '../../src/modules/knowledge/knowledge.retrieval.js';
import { contentTerms } from '../../src/modules/knowledge/knowledge.terms.js';
import { SEARCH_SESSION_SETTINGS } from '../../src/modules/knowledge/knowledge.search.repo.js';
import { ndcgAt, recallAt } from './metrics.js';
import { benchDatabase } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'scifact' },
    queries: { type: 'string', default: '100000' },
    'keep-db': { type: 'boolean', default: false },
    /** A database left by --keep-db: skip ingestion and only run the queries. */
    reuse: { type: 'string' },
    /** Runs to do, by name prefix (comma-separated), e.g. "full text (BM25),docstore". */
    runs: { type: 'string' },
    /** RM3 of the full-text run: feedback chunks, expansion terms, weight of the expansion pass. */
    'rm3-docs': { type: 'string', default: '10' },
    'rm3-terms': { type: 'string', default: '10' },
    'rm3-weight': { type: 'string', default: '0.5' },
    'title-similarity': { type: 'string' },
  },
});

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main() {
  const dataset: Dataset = await loadDataset(values.dataset!);
  const database = values.reuse ? { url: values.reuse, drop: async () => undefined } : await benchDatabase();
  const handle = createDatabase(database.url, 2);
  await migrateToLatest(handle.db);
  await handle.close();
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    RUN_WORKERS: 'true',
    EMBEDDINGS_PROVIDER: 'none',
    RATE_LIMIT_ENABLED: 'false',
    DATABASE_POOL_MAX: '10',
  });
  // The title threshold is a session setting of the search connections: set before they open.
  if (values['title-similarity']) SEARCH_SESSION_SETTINGS['pg_trgm.similarity_threshold'] = values['title-similarity'];
  const container = createContainer({ config, databaseUrl: database.url, log: pino({ level: 'silent' }) });
  const app = await buildApp(container);
  await container.start();
  try {
    async function ingest(headers: Record<string, string>) {
      // ---- ingestion through the API
      const started = performance.now();
      // Eight clients upload at once, as a script feeding the API would.
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < dataset.corpus.length) {
            const doc = dataset.corpus[next++]!;
            // A few Cranfield records are empty: nothing to upload, nothing to find.
            if (!(doc.text || doc.title).trim()) continue;
            const response = await app.inject({
              method: 'POST',
              url: '/api/public/documents/upload/article',
              headers,
              payload: { document_title: doc.title || doc.id, content: doc.text || doc.title },
            });
            if (response.statusCode !== 202)
              throw new Error(`upload ${doc.id}: ${response.statusCode} ${response.body}`);
            docIdToCorpus.set(response.json().document_id, doc.id);
          }
        }),
      );
      const uploaded = performance.now();
      for (;;) {
        const stats = (await app.inject({ method: 'GET', url: '/api/public/documents/stats', headers })).json();
        if (stats.by_status.pending + stats.by_status.processing === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const ingested = performance.now();
      // Fresh planner statistics, as autovacuum keeps them on a live database (the load here can
      // hold autovacuum back for minutes, and stale counts make the planner ignore the GIN indexes).
      await sql`analyze`.execute(container.db);
      const stats = (await app.inject({ method: 'GET', url: '/api/public/documents/stats', headers })).json();
      console.log(
        `dataset ${dataset.name}: ${dataset.corpus.length} documents → ${stats.total_chunks} chunks, ${stats.by_status.failed} failed`,
      );
      console.log(
        `ingestion: uploads ${((uploaded - started) / 1000).toFixed(1)} s, all tasks done after ${((ingested - started) / 1000).toFixed(1)} s → ${(stats.total_chunks / ((ingested - started) / 1000)).toFixed(0)} chunks/s, ${(dataset.corpus.length / ((ingested - started) / 1000)).toFixed(0)} documents/s`,
      );
    }

    const docIdToCorpus = new Map<string, string>();
    let tenant: { companyId: string; headers: { 'x-api-key': string } };
    if (values.reuse) {
      const row = await container.db.selectFrom('kb_documents').select('company_id').executeTakeFirstOrThrow();
      tenant = { companyId: row.company_id, ...(await createUser(container, row.company_id, 'developer')) };
      const byTitle = new Map(dataset.corpus.map((doc) => [doc.title || doc.id, doc.id]));
      for (const doc of await container.db.selectFrom('kb_documents').select(['id', 'title']).execute()) {
        const corpusId = byTitle.get(doc.title);
        if (corpusId) docIdToCorpus.set(`doc_${doc.id}`, corpusId);
      }
      console.log(`reusing ${database.url}: ${docIdToCorpus.size} documents`);
    } else {
      tenant = await createTenant(container, 'developer');
      await ingest(tenant.headers);
    }
    const headers = tenant.headers;

    // ---- queries, lane by lane
    const queries = dataset.queries.filter((query) => dataset.qrels.has(query.id)).slice(0, Number(values.queries));
    const runs: {
      name: string;
      lanes: { vector: boolean; fulltext: boolean; docstore: boolean };
      ranking?: 'ts_rank_cd' | 'rm3';
    }[] = [
      { name: 'full text (BM25)', lanes: { vector: false, fulltext: true, docstore: false } },
      {
        name: 'full text (ts_rank_cd)',
        lanes: { vector: false, fulltext: true, docstore: false },
        ranking: 'ts_rank_cd',
      },
      // Pseudo-relevance feedback (RM3, Lavrenko & Croft; Abdul-Jaleel et al.), measured here only:
      // a relevance model of the top full-text chunks, its best new terms searched as a second
      // BM25 pass and added to the first at --rm3-weight (as the lexicon's expansion is).
      { name: 'full text + RM3', lanes: { vector: false, fulltext: true, docstore: false }, ranking: 'rm3' },
      { name: 'docstore (phrase + title trigram)', lanes: { vector: false, fulltext: false, docstore: true } },
      { name: 'vector', lanes: { vector: true, fulltext: false, docstore: false } },
      { name: 'fused (all enabled lanes)', lanes: { vector: true, fulltext: true, docstore: true } },
    ];
    const laneResults = new Map<
      string,
      { document_id: string; chunk_id: string; scores: Record<string, number> }[][]
    >();
    const evaluate = (ranked: { document_id: string }[][]) => {
      let ndcg = 0;
      let recall = 0;
      ranked.forEach((results, i) => {
        const docs: string[] = [];
        for (const result of results) {
          const corpusId = docIdToCorpus.get(result.document_id);
          if (corpusId && !docs.includes(corpusId)) docs.push(corpusId);
        }
        const judged = dataset.qrels.get(queries[i]!.id)!;
        ndcg += ndcgAt(docs, judged, 10);
        recall += recallAt(docs, judged, 10);
      });
      return { ndcg: ndcg / ranked.length, recall: recall / ranked.length };
    };
    type Result = { document_id: string; chunk_id: string; scores: Record<string, number>; text?: string };
    const fulltextOnly = { vector: false, fulltext: true, docstore: false };
    /** RM3: P(t|R) = Σ_d P(t|d) · P(d|q) over the top chunks (P(d|q) ∝ BM25), the best terms not in the query. */
    async function rm3(query: string): Promise<Result[]> {
      const first = await container.knowledge.search(tenant.companyId, { query, topK: 50, lanes: fulltextOnly });
      const feedback = first.results.slice(0, Number(values['rm3-docs']));
      const total = feedback.reduce((sum, r) => sum + (r.scores.fulltext ?? 0), 0) || 1;
      const own = new Set(contentTerms(query));
      const model = new Map<string, { weight: number; words: Map<string, number> }>();
      for (const result of feedback) {
        const words = (result.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => contentTerms(w).length);
        for (const word of words) {
          const term = contentTerms(word)[0]!;
          if (own.has(term)) continue;
          const entry = model.get(term) ?? { weight: 0, words: new Map() };
          entry.weight += ((result.scores.fulltext ?? 0) / total) * (1 / words.length);
          entry.words.set(word, (entry.words.get(word) ?? 0) + 1);
          model.set(term, entry);
        }
      }
      const terms = [...model.values()].sort((a, b) => b.weight - a.weight).slice(0, Number(values['rm3-terms']));
      const expansion = terms.map((t) => [...t.words].sort((a, b) => b[1] - a[1])[0]![0]).join(' ');
      if (!expansion) return first.results;
      const second = await container.knowledge.search(tenant.companyId, {
        query: expansion,
        topK: 50,
        lanes: fulltextOnly,
        expand: false,
      });
      const byChunk = new Map<string, Result>([...second.results, ...first.results].map((r) => [r.chunk_id, r]));
      const hit = (r: Result) => ({ chunk_id: r.chunk_id, score: r.scores.fulltext ?? 0 });
      return withExpansion(first.results.map(hit), second.results.map(hit), Number(values['rm3-weight']), 50).map((h) =>
        byChunk.get(h.chunk_id)!,
      );
    }
    const selected = values.runs?.split(',');
    const chosen = selected ? runs.filter((run) => selected.some((prefix) => run.name.startsWith(prefix))) : runs;
    console.log(
      `docstore: exact phrase, title similarity ≥ ${SEARCH_SESSION_SETTINGS['pg_trgm.similarity_threshold']}`,
    );
    console.log(`\n${queries.length} queries with judgements; document-level metrics (best chunk per document)`);
    console.log(`${'lane'.padEnd(30)} ${'nDCG@10'.padStart(8)} ${'R@10'.padStart(7)}   p50 ms   p99 ms   vector lane`);
    for (const run of chosen) {
      let ndcg = 0;
      let recall = 0;
      const latencies: number[] = [];
      let vectorLane = '';
      for (const query of queries) {
        const t0 = performance.now();
        let results: { document_id: string; chunk_id: string; scores: Record<string, number> }[];
        if (run.ranking === 'rm3') {
          results = await rm3(query.text);
          vectorLane = 'disabled';
        } else if (run.ranking) {
          const output = await container.knowledge.search(tenant.companyId, {
            query: query.text,
            topK: 50,
            lanes: run.lanes,
            fulltextRanking: run.ranking,
          });
          results = output.results;
          vectorLane = output.vector_lane;
        } else {
          const response = await app.inject({
            method: 'POST',
            url: '/api/public/documents/search',
            headers,
            payload: {
              query: query.text,
              top_k: 50,
              categories: [],
              search_method: {
                enable_vectorsearch: run.lanes.vector,
                enable_fulltextsearch: run.lanes.fulltext,
                enable_docstoresearch: run.lanes.docstore,
              },
            },
          });
          if (response.statusCode !== 200) throw new Error(`search: ${response.statusCode} ${response.body}`);
          const body = response.json();
          results = body.results;
          vectorLane = body.vector_lane;
        }
        latencies.push(performance.now() - t0);
        if (!run.ranking) (laneResults.get(run.name) ?? laneResults.set(run.name, []).get(run.name)!).push(results);
        const ranked: string[] = [];
        for (const result of results) {
          const corpusId = docIdToCorpus.get(result.document_id);
          if (corpusId && !ranked.includes(corpusId)) ranked.push(corpusId);
        }
        const judged = dataset.qrels.get(query.id)!;
        ndcg += ndcgAt(ranked, judged, 10);
        recall += recallAt(ranked, judged, 10);
      }
      latencies.sort((a, b) => a - b);
      console.log(
        `${run.name.padEnd(30)} ${(ndcg / queries.length).toFixed(3).padStart(8)} ${(recall / queries.length).toFixed(3).padStart(7)}   ${percentile(latencies, 50).toFixed(1).padStart(6)}   ${percentile(latencies, 99).toFixed(1).padStart(6)}   ${vectorLane}`,
      );
    }
    // Offline: the same lane rankings fused with other docstore weights (the service uses LANE_WEIGHTS).
    const fulltextRuns = laneResults.get('full text (BM25)') ?? [];
    const docstoreRuns = laneResults.get('docstore (phrase + title trigram)') ?? [];
    console.log('\nfusion of the full-text and docstore rankings above, by docstore weight (full text 1):');
    for (const weight of docstoreRuns.length ? [0, 0.1, 0.2, 0.3, 0.5, 1] : []) {
      const fused = fulltextRuns.map((fulltext, i) => {
        const byChunk = new Map([...fulltext, ...docstoreRuns[i]!].map((result) => [result.chunk_id, result]));
        const hits = fuse(
          {
            fulltext: fulltext.map((r) => ({ chunk_id: r.chunk_id, score: r.scores.fulltext ?? 0 })),
            docstore: docstoreRuns[i]!.map((r) => ({ chunk_id: r.chunk_id, score: r.scores.docstore ?? 0 })),
          },
          RRF_K,
          { ...LANE_WEIGHTS, docstore: weight },
        );
        return hits.map((hit) => byChunk.get(hit.chunk_id)!);
      });
      const { ndcg, recall } = evaluate(fused);
      console.log(
        `  docstore weight ${weight.toFixed(1)}${weight === LANE_WEIGHTS.docstore ? ' (service)' : '          '}  nDCG@10 ${ndcg.toFixed(3)}  R@10 ${recall.toFixed(3)}`,
      );
    }
    if (dataset.anchor) console.log(`\nanchor: ${dataset.anchor}`);
  } finally {
    await app.close();
    await container.close();
    if (!values['keep-db']) await database.drop();
    else console.log(`database kept: ${database.url}`);
  }
}

await main();
