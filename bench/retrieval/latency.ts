/**
 * Ingestion throughput and search latency of the knowledge base at about 10k and 100k chunks.
 *
 *   npx tsx bench/retrieval/latency.ts [--queries 200] [--copies 8]
 *
 * 1. Ingests SciFact (5,183 abstracts) through the service's own pipeline (extraction,
 *    language detection, chunking, full-text and BM25 postings), four documents at a time, with
 *    no embedder: chunks/s.
 * 2. Searches (POST /documents/search through the app, all lanes) with the SciFact queries:
 *    p50/p99 at ~12k chunks; the same for a trivial authenticated route as the baseline.
 *    Twice: with the text lanes in SQL (SEARCH_MEMORY_MAX_CHUNKS=0), and from the in-process
 *    index of the company (after its build, timed, and once every query's words are known).
 * 3. Grows the company to ~100k chunks by copying the ingested documents with SQL (new ids,
 *    same text, postings rebuilt the way ingestion writes them), then searches again (in SQL:
 *    past the default SEARCH_MEMORY_MAX_CHUNKS).
 *
 * Uses BENCH_DATABASE_URL, else a fresh database on the local PostgreSQL (dropped afterwards).
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import type { buildApp } from '../../src/app.js';
import type { Container } from '../../src/container.js';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createTenant, createUser } from '../../test/helpers/factories.js';
import { queryConfigs } from '../../src/modules/knowledge/knowledge.retrieval.js';
import { expandQuery } from '../../src/modules/knowledge/knowledge.expansion.js';
import { textIndexSnapshot } from '../../src/modules/knowledge/knowledge.search.repo.js';
import { TextIndex } from '../../src/modules/knowledge/knowledge.text-index.js';
import { loadDataset } from './datasets.js';
import { benchDatabase } from '../lib/harness.js';
import { startInProcess } from '../lib/in-process.js';

const { values } = parseArgs({
  options: {
    queries: { type: 'string', default: '200' },
    copies: { type: 'string', default: '8' },
    /** A database this benchmark filled before: only measure search at its current size. */
    reuse: { type: 'string' },
  },
});

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

type App = Awaited<ReturnType<typeof buildApp>>;

async function measure(label: string, queries: string[], request: (query: string) => Promise<void>) {
  for (const query of queries.slice(0, 20)) await request(query);
  const times: number[] = [];
  for (const query of queries) {
    const t0 = performance.now();
    await request(query);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(46)} p50 ${pct(times, 50).toFixed(1).padStart(6)} ms   p99 ${pct(times, 99).toFixed(1).padStart(6)} ms`,
  );
  return pct(times, 50);
}

/** p50/p99 of the search per lane and of a trivial authenticated route, at the current size. */
async function measureRound(
  app: App,
  headers: Record<string, string>,
  queries: string[],
  chunks: number,
  lanes = 'text lanes in SQL',
): Promise<number> {
  const search = (lanes: Record<string, boolean>) => async (query: string) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/public/documents/search',
      headers,
      payload: { query, top_k: 10, categories: [], search_method: lanes },
    });
    if (response.statusCode !== 200) throw new Error(response.body);
  };
  console.log(`\n--- ${chunks} chunks, ${queries.length} SciFact queries, sequential, ${lanes}`);
  const base = await measure('baseline GET /collections', queries, async () => {
    await app.inject({ method: 'GET', url: '/api/public/collections', headers });
  });
  // One unmeasured round over every query first: the postings of 100k chunks outgrow PostgreSQL's
  // default shared buffers, so the lane measured first would otherwise pay for reading them in.
  for (const query of queries) await search({})(query);
  const fused = await measure('search, all lanes (fused)', queries, search({}));
  await measure('search, full text only', queries, search({ enable_docstoresearch: false }));
  await measure('search, docstore only', queries, search({ enable_fulltextsearch: false }));
  console.log(`fused p50 / baseline p50 = ${(fused / base).toFixed(1)}×`);
  return fused;
}

/**
 * What the query expansion adds to a search (through the service, all lanes): each query without
 * and with it, alternated (and which goes first alternated); p50 of each and the median of the
 * paired differences, over all queries and over those the lexicon expands.
 */
async function expansionCost(knowledge: Container['knowledge'], companyId: string, queries: string[]) {
  const run = async (query: string, expand: boolean) => {
    const started = performance.now();
    await knowledge.search(companyId, { query, topK: 10, expand });
    return performance.now() - started;
  };
  const rows: { off: number; on: number; expanded: boolean }[] = [];
  for (const [index, query] of queries.entries()) {
    const first = index % 2 === 0;
    const a = await run(query, !first);
    const b = await run(query, first);
    rows.push({ off: first ? a : b, on: first ? b : a, expanded: expandQuery(query).text !== '' });
  }
  const median = (list: number[]) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)] ?? 0;
  for (const [label, set] of [
    ['all queries', rows],
    ['expanded queries', rows.filter((row) => row.expanded)],
  ] as const)
    console.log(
      `expansion, ${label} (${set.length}): p50 ${median(set.map((row) => row.off)).toFixed(1)} ms without, ${median(set.map((row) => row.on)).toFixed(1)} ms with; median paired difference ${median(set.map((row) => row.on - row.off)).toFixed(2)} ms`,
    );
}

async function main() {
  const database = values.reuse ? { url: values.reuse, drop: async () => undefined } : await benchDatabase();
  const databaseUrl = database.url;
  const handle = createDatabase(databaseUrl, 2);
  await migrateToLatest(handle.db);
  await handle.close();
  const instance = (env: Record<string, string>) => startInProcess(databaseUrl, env);
  // The same service twice: text lanes always in SQL, and the default (small companies in memory).
  const { container, app } = await instance({ SEARCH_MEMORY_MAX_CHUNKS: '0' });
  const inMemory = await instance({ SEARCH_MEMORY_MAX_CHUNKS: '20000' });
  const { db, knowledge } = container;
  try {
    const dataset = await loadDataset('scifact');
    const queries = dataset.queries.slice(0, Number(values.queries)).map((query) => query.text);
    if (values.reuse) {
      const row = await db.selectFrom('kb_documents').select('company_id').executeTakeFirstOrThrow();
      const user = await createUser(container, row.company_id, 'developer');
      const chunks = (await knowledge.stats({ userId: user.userId, companyId: row.company_id, role: 'developer' }))
        .total_chunks;
      await measureRound(app, user.headers, queries, chunks);
      await expansionCost(knowledge, row.company_id, queries);
      return;
    }
    const tenant = await createTenant(container, 'developer');
    const context = { userId: tenant.userId, companyId: tenant.companyId, role: 'developer' as const };

    // ---- 1. ingestion throughput
    const uploads: { document_id: string }[] = [];
    for (const doc of dataset.corpus)
      uploads.push(
        await knowledge.uploadArticle(context, { document_title: doc.title, content: doc.text || doc.title }),
      );
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < uploads.length) await knowledge.ingest(uploads[next++]!.document_id.slice(4));
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const stats = await knowledge.stats(context);
    console.log(
      `ingestion: ${stats.total_documents} documents, ${stats.total_chunks} chunks in ${seconds.toFixed(1)} s → ${(stats.total_chunks / seconds).toFixed(0)} chunks/s (${(stats.total_documents / seconds).toFixed(0)} documents/s), 4 in parallel, no embedder`,
    );
    await sql`analyze`.execute(db);

    const small = await measureRound(app, tenant.headers, queries, stats.total_chunks);

    // ---- 2b. the same company from the in-process index
    const t1 = performance.now();
    const snapshot = await textIndexSnapshot(db, tenant.companyId, 1_000_000);
    const t2 = performance.now();
    const index = await TextIndex.build(snapshot!);
    const t3 = performance.now();
    console.log(
      `\nin-process index of ${index.size} chunks: snapshot read in ${(t2 - t1).toFixed(0)} ms, built in ${(t3 - t2).toFixed(0)} ms (in slices of ≤ 5 ms of the event loop); heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`,
    );
    const memory = inMemory.container.knowledge.memory!;
    const search = (query: string) =>
      inMemory.app.inject({
        method: 'POST',
        url: '/api/public/documents/search',
        headers: tenant.headers,
        payload: { query, top_k: 10, categories: [], search_method: {} },
      });
    await search(queries[0]!);
    while (!memory.isHeld(tenant.companyId)) await new Promise((resolve) => setTimeout(resolve, 50));
    // One pass teaches the instance every query's words (each word is read by PostgreSQL once).
    for (const query of queries) await search(query);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const held = queries.filter((query) => memory.isHeld(tenant.companyId, query, queryConfigs(query)));
    console.log(
      `queries answered from memory: ${held.length} of ${queries.length} (the others' words need PostgreSQL's parser)`,
    );
    const fromMemory = await measureRound(
      inMemory.app,
      tenant.headers,
      queries,
      stats.total_chunks,
      'text lanes in memory',
    );
    console.log(`fused p50 in memory / in SQL = ${(fromMemory / small).toFixed(2)}×`);
    const fused = (target: App) => async (query: string) => {
      await target.inject({
        method: 'POST',
        url: '/api/public/documents/search',
        headers: tenant.headers,
        payload: { query, top_k: 10, categories: [], search_method: {} },
      });
    };
    const heldInSql = await measure('the held queries only, all lanes, in SQL', held, fused(app));
    const heldInMemory = await measure('the held queries only, all lanes, in memory', held, fused(inMemory.app));
    console.log(`held queries: fused p50 in memory / in SQL = ${(heldInMemory / heldInSql).toFixed(2)}×`);

    // ---- 3. grow to ~100k chunks with copies of the same documents
    const copies = Number(values.copies);
    const t0 = performance.now();
    for (let copy = 0; copy < copies; copy++) {
      await db.transaction().execute(async (trx) => {
        await sql`create temp table copy_map on commit drop as
          select id as old_id, gen_random_uuid() as new_id from kb_documents where company_id = ${tenant.companyId} and id = any(${uploads.map((u) => u.document_id.slice(4))}::uuid[])`.execute(
          trx,
        );
        await sql`insert into kb_documents (id, company_id, title, categories, source_type, content, content_tsv, language, status, chunk_count, embedding_status, created_by, completed_at)
          select m.new_id, d.company_id, d.title, d.categories, d.source_type, d.content, d.content_tsv, d.language, d.status, d.chunk_count, d.embedding_status, d.created_by, now()
          from kb_documents d join copy_map m on m.old_id = d.id`.execute(trx);
        await sql`insert into kb_chunks (company_id, document_id, collection_id, categories, document_created_at, ordinal, text, language, tsv, token_count)
          select c.company_id, m.new_id, c.collection_id, c.categories, now(), c.ordinal, c.text, c.language, c.tsv, c.token_count
          from kb_chunks c join copy_map m on m.old_id = c.document_id`.execute(trx);
        await sql`insert into kb_postings (company_id, lexeme, chunk_id, tf, dl)
          select c.company_id, u.lexeme, c.id, coalesce(array_length(u.positions, 1), 1), c.token_count
          from kb_chunks c join copy_map m on m.new_id = c.document_id, unnest(c.tsv) u`.execute(trx);
      });
    }
    await sql`update kb_corpus_stats s set chunk_count = x.n, token_total = x.tokens, version = s.version + 1
      from (select count(*) as n, sum(token_count) as tokens from kb_chunks where company_id = ${tenant.companyId}) x
      where s.company_id = ${tenant.companyId}`.execute(db);
    await sql`vacuum analyze kb_postings`.execute(db);
    await sql`analyze`.execute(db);
    const grown = (await knowledge.stats(context)).total_chunks;
    console.log(`\ncopied ×${copies} with SQL in ${((performance.now() - t0) / 1000).toFixed(1)} s → ${grown} chunks`);
    const large = await measureRound(app, tenant.headers, queries, grown);
    await expansionCost(knowledge, tenant.companyId, queries);
    console.log(`\nfused p50 at ${grown} / at ${stats.total_chunks} chunks = ${(large / small).toFixed(2)}×`);
  } finally {
    await inMemory.app.close();
    await inMemory.container.close();
    await app.close();
    await container.close();
    await database.drop();
  }
}

await main();
