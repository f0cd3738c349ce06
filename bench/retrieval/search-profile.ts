/**
 * Where a search of a large knowledge base spends its time, for a CPU profile: SciFact seeded
 * once (×`--copies`, ~14.5k chunks each; its full-text lane held by the in-process BM25 index),
 * then the judged queries searched `--rounds` times through the route (full text only, and all
 * lanes), with p50/p95 of each round.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/retrieval/search-profile.ts [--copies 1] [--rounds 3]
 *
 * Uses BENCH_DATABASE_URL, else a fresh database on the local PostgreSQL (dropped afterwards).
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createTenant } from '../../test/helpers/factories.js';
import { benchDatabase, percentile } from '../lib/harness.js';
import { loadDataset } from './datasets.js';
import { seedDataset, setCorpusStats } from './seed.js';
import { sql } from 'kysely';

const { values } = parseArgs({
  options: { copies: { type: 'string', default: '1' }, rounds: { type: 'string', default: '3' } },
});

async function main() {
  const database = await benchDatabase();
  const handle = createDatabase(database.url, 4);
  await migrateToLatest(handle.db);
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    RUN_WORKERS: 'false',
    EMBEDDINGS_PROVIDER: 'none',
    RATE_LIMIT_ENABLED: 'false',
    SEARCH_MEMORY_MAX_CHUNKS: '0',
  });
  const container = createContainer({ config, databaseUrl: database.url, log: pino({ level: 'silent' }) });
  const app = await buildApp(container);
  await container.start();
  try {
    const dataset = await loadDataset('scifact');
    const tenant = await createTenant(container, 'developer');
    for (let copy = 0; copy < Number(values.copies); copy++)
      await seedDataset(handle.db, tenant.companyId, tenant.userId, dataset);
    await setCorpusStats(handle.db, tenant.companyId);
    await sql`vacuum analyze kb_chunks`.execute(handle.db);
    const queries = dataset.queries.filter((query) => dataset.qrels.has(query.id)).map((query) => query.text);
    const search = async (query: string, method: object) => {
      const t0 = performance.now();
      const response = await app.inject({
        method: 'POST',
        url: '/api/public/documents/search',
        headers: tenant.headers,
        payload: { query, top_k: 10, categories: [], search_method: method },
      });
      if (response.statusCode !== 200) throw new Error(response.body);
      return performance.now() - t0;
    };
    await search(queries[0]!, {});
    while (container.knowledge.bm25?.heldVersion(tenant.companyId) == null)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const [held] = container.knowledge.searchIndexStats();
    console.log(`${held!.chunks} chunks held`);
    for (let round = 0; round < Number(values.rounds); round++)
      for (const [label, method] of [
        ['full text only', { enable_docstoresearch: false }],
        ['all lanes (fused)', {}],
      ] as const) {
        const times: number[] = [];
        for (const query of queries) times.push(await search(query, method));
        times.sort((a, b) => a - b);
        console.log(
          `round ${round} ${label.padEnd(20)} p50 ${percentile(times, 50).toFixed(2)} ms   p95 ${percentile(times, 95).toFixed(2)} ms`,
        );
      }
  } finally {
    await app.close();
    await container.close();
    await handle.close();
    await database.drop();
  }
}

await main();
