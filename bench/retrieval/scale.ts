/**
 * Search at 100k and 1M chunks, and what a large knowledge base adds to a turn's first token.
 *
 *   npx tsx bench/retrieval/scale.ts [--queries 200] [--copies 7,70] [--turns 200] [--postings-up-to 7] [--docstore-sql]
 *
 * Seeds a company of a dedicated database with SQL: SciFact's 5,183 abstracts chunked as the
 * ingestion chunks them (~14.5k chunks), with the same tsvectors, token counts and postings the
 * ingestion writes (bench/retrieval/seed.ts), then copied with generate_series (new ids, same
 * text; every copy in one statement per table, triggers off) to each size of `--copies`
 * (×7 ≈ 89k chunks, ×70 ≈ 1M). Postings (the SQL lane's table) are written only
 * up to `--postings-up-to` copies: the in-process index reads the chunks, and 70M posting rows
 * would take the seeding past the bench's time (the SQL lane is measured at the smaller size).
 *
 * At each size, two instances on that database: the full-text lane in SQL
 * (SEARCH_INDEX_MAX_CHUNKS=0) and from the in-process BM25 index (default). For each,
 * POST /documents/search with the SciFact queries: full text only, and all lanes (fused; no
 * embedder here); p50/p95, with GET /collections as the baseline. Then the index's build time
 * and bytes, the process's RSS. With `--docstore-sql`, a third arm: the in-process index with
 * the docstore lane's titles scanned in SQL as before the title index (the baseline of
 * knowledge.title-index.ts), its fused results checked equal to the title index's.
 *
 * First token: a `builtin:kb` agent of the large company and one of a company with a one-article
 * knowledge base, on one instance listening on a port, streamed turns alternating between the
 * two (which goes first alternates): p50/p95 of each and of the paired difference (target:
 * difference p50 < 5 ms).
 *
 * Uses BENCH_DATABASE_URL, else a fresh database on the local PostgreSQL (dropped afterwards).
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createDatabase, type Db } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { startInProcess } from '../lib/in-process.js';
import { Bm25Index } from '../../src/modules/knowledge/knowledge.bm25-index.js';
import { readAllChunks } from '../../src/modules/knowledge/knowledge.index.repo.js';
import { queryConfigs } from '../../src/modules/knowledge/knowledge.retrieval.js';
import { queryLexemes } from '../../src/modules/knowledge/knowledge.search.repo.js';
import { chatSetup, type ChatSetup } from '../../test/helpers/chat.js';
import { benchDatabase, percentile } from '../lib/harness.js';
import { loadDataset } from './datasets.js';
import { seedDataset, setCorpusStats } from './seed.js';

const { values } = parseArgs({
  options: {
    queries: { type: 'string', default: '200' },
    copies: { type: 'string', default: '7,70' },
    turns: { type: 'string', default: '200' },
    'postings-up-to': { type: 'string', default: '7' },
    /** The size (copies) at which the first token is measured. */
    'first-token-at': { type: 'string', default: '7' },
    /**
     * The lane alone, in memory, on the largest size's chunks each added this many times (new
     * ids, statistics scaled): 1M chunks without seeding them in PostgreSQL (0: skipped).
     */
    'memory-scale': { type: 'string', default: '10' },
    /** Also the in-process index with the docstore lane's titles found in SQL (the baseline). */
    'docstore-sql': { type: 'boolean', default: false },
  },
});

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95) };
};
const line = (label: string, xs: number[]) => {
  const { p50, p95 } = stats(xs);
  return `${label.padEnd(52)} p50 ${p50.toFixed(2).padStart(7)} ms   p95 ${p95.toFixed(2).padStart(7)} ms`;
};

/**
 * Copies the base documents and chunks until the company holds `copies` times them: every copy
 * at once, one statement per table (documents, chunks, and the postings copied from the base
 * chunks' — a copy's text is the base's), with the triggers off (the change log and the list
 * notifications of a bulk load nobody listens to; foreign keys hold by construction). The corpus
 * statistics are set once at the end.
 */
async function growTo(db: Db, companyId: string, copies: number, withPostings: boolean) {
  const have = await sql<{
    n: number;
  }>`select count(*)::int as n from kb_documents where company_id = ${companyId}`.execute(db);
  const base = await sql<{
    n: number;
  }>`select count(*)::int as n from kb_documents where company_id = ${companyId} and title not like '% (copy %'`.execute(
    db,
  );
  const current = Math.round(have.rows[0]!.n / base.rows[0]!.n);
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    if (withPostings) {
      // Postings of every chunk held so far that has none (the base, or copies grown without them).
      await sql`insert into kb_postings (company_id, lexeme, chunk_id, tf, dl)
        select c.company_id, u.lexeme, c.id, coalesce(array_length(u.positions, 1), 1), c.token_count
        from kb_chunks c, unnest(c.tsv) u
        where c.company_id = ${companyId}
          and not exists (select 1 from kb_postings p where p.company_id = c.company_id and p.chunk_id = c.id)`.execute(
        trx,
      );
    }
    if (copies <= current) return;
    await sql`create temp table copy_docs on commit drop as
      select d.id as old_id, gen_random_uuid() as new_id, g.copy
      from kb_documents d, generate_series(${current + 1}::int, ${copies}::int) g(copy)
      where d.company_id = ${companyId} and d.title not like '% (copy %'`.execute(trx);
    await sql`create temp table copy_chunks on commit drop as
      select c.id as old_id, gen_random_uuid() as new_id, m.new_id as document_id
      from kb_chunks c join copy_docs m on m.old_id = c.document_id`.execute(trx);
    await sql`insert into kb_documents (id, company_id, title, categories, source_type, content, content_tsv, language,
                                        status, chunk_count, embedding_status, created_by, completed_at)
      select m.new_id, d.company_id, d.title || ' (copy ' || m.copy || ')', d.categories, d.source_type, d.content,
             d.content_tsv, d.language, d.status, d.chunk_count, d.embedding_status, d.created_by, now()
      from kb_documents d join copy_docs m on m.old_id = d.id`.execute(trx);
    await sql`insert into kb_chunks (id, company_id, document_id, collection_id, categories, document_created_at, ordinal,
                                     text, language, tsv, token_count)
      select m.new_id, c.company_id, m.document_id, c.collection_id, c.categories, now(), c.ordinal, c.text, c.language,
             c.tsv, c.token_count
      from kb_chunks c join copy_chunks m on m.old_id = c.id`.execute(trx);
    if (withPostings)
      await sql`insert into kb_postings (company_id, lexeme, chunk_id, tf, dl)
        select p.company_id, p.lexeme, m.new_id, p.tf, p.dl
        from kb_postings p join copy_chunks m on m.old_id = p.chunk_id
        where p.company_id = ${companyId}`.execute(trx);
  });
  await setCorpusStats(db, companyId);
  await sql`vacuum analyze kb_chunks`.execute(db);
  await sql`vacuum analyze kb_postings`.execute(db);
  await sql`vacuum analyze kb_documents`.execute(db);
}

type Instance = Awaited<ReturnType<typeof startInProcess>>;

async function searchTimes(target: Instance, headers: Record<string, string>, queries: string[], lanes: object) {
  const times: number[] = [];
  for (const query of queries) {
    const t0 = performance.now();
    const response = await target.app.inject({
      method: 'POST',
      url: '/api/public/documents/search',
      headers,
      payload: { query, top_k: 10, categories: [], search_method: lanes },
    });
    times.push(performance.now() - t0);
    if (response.statusCode !== 200) throw new Error(response.body);
  }
  return times;
}

/**
 * The docstore lane's titles from the title index against the SQL title scan (the title index
 * turned off on the same instance), query by query alternating which goes first: fused and
 * docstore-only p50/p95 of each, and every answer of the two compared (same results, scores, ranks).
 */
async function titleArms(target: Instance, headers: Record<string, string>, queries: string[], label: string) {
  const bm25 = target.container.knowledge.bm25!;
  const fromIndex = bm25.titleMatches;
  const fromSql = async () => null;
  const methods: [string, object][] = [
    ['all lanes (fused)', {}],
    ['docstore only', { enable_fulltextsearch: false, enable_vectorsearch: false }],
  ];
  for (const [name, method] of methods) {
    const times = { index: [] as number[], sql: [] as number[] };
    let differ = 0;
    for (const [i, query] of queries.entries()) {
      const bodies: Record<string, string> = {};
      for (const arm of i % 2 === 0 ? (['index', 'sql'] as const) : (['sql', 'index'] as const)) {
        bm25.titleMatches = arm === 'index' ? fromIndex : fromSql;
        const t0 = performance.now();
        const response = await target.app.inject({
          method: 'POST',
          url: '/api/public/documents/search',
          headers,
          payload: { query, top_k: 10, categories: [], search_method: method },
        });
        times[arm].push(performance.now() - t0);
        if (response.statusCode !== 200) throw new Error(response.body);
        bodies[arm] = JSON.stringify(response.json().results);
      }
      if (bodies.index !== bodies.sql) differ++;
    }
    bm25.titleMatches = fromIndex;
    console.log(line(`[${label}] search, ${name}, titles in SQL`, times.sql));
    console.log(line(`[${label}] search, ${name}, title index`, times.index));
    console.log(`[${label}] ${name}: ${differ} of ${queries.length} answers differ between the two`);
  }
}

async function firstToken(base: string, token: string, agentKey: string, query: string): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(`${base}/api/v1/chat/agent/stream`, {
    method: 'POST',
    headers: { 'x-api-token': token, accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ agent_key: agentKey, query }),
  });
  if (!response.ok || !response.body) throw new Error(`stream: ${response.status}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let first = -1;
  let all = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const text = decoder.decode(value, { stream: true });
    all += text;
    if (first < 0 && text.includes('event: agent_text_chunk')) first = performance.now() - t0;
  }
  if (first < 0) throw new Error(`stream without a token: ${all.slice(-300)}`);
  return first;
}

/** First token of builtin:kb turns: the large company vs a one-article company, paired, on one listening instance. */
async function firstTokenRound(databaseUrl: string, large: ChatSetup, queries: string[]) {
  const server = await startInProcess(databaseUrl, {});
  try {
    const address = await server.app.listen({ port: 0, host: '127.0.0.1' });
    const small = await chatSetup(server.app, server.container, { model: 'builtin:kb' });
    const upload = await server.container.knowledge.uploadArticle(
      { userId: small.tenant.userId, companyId: small.tenant.companyId, role: 'owner' },
      {
        document_title: 'Delivery times',
        content:
          'Standard delivery takes three to five working days. Express delivery arrives the next working day when ordered before noon.',
      },
    );
    await server.container.knowledge.ingest(upload.document_id.slice(4));
    const turns = Number(values.turns);
    const pairs: { large: number; small: number }[] = [];
    const ask = (setup: ChatSetup, query: string) =>
      firstToken(address, setup.token['x-api-token'], setup.agentKey, query);
    // Warm: the index built, the lexicon taught every query's words.
    await ask(large, queries[0]!);
    while (server.container.knowledge.bm25?.heldVersion(large.tenant.companyId) == null)
      await new Promise((resolve) => setTimeout(resolve, 100));
    for (const query of queries.slice(0, turns)) await ask(large, query);
    for (let i = 0; i < turns; i++) {
      const query = queries[i % queries.length]!;
      if (i % 2 === 0) {
        const l = await ask(large, query);
        pairs.push({ large: l, small: await ask(small, query) });
      } else {
        const s = await ask(small, query);
        pairs.push({ large: await ask(large, query), small: s });
      }
    }
    console.log(`\n--- first token, builtin:kb, ${turns} turns alternating (paired)`);
    console.log(
      line(
        'one-article knowledge base',
        pairs.map((p) => p.small),
      ),
    );
    console.log(
      line(
        'large knowledge base',
        pairs.map((p) => p.large),
      ),
    );
    console.log(
      line(
        'paired difference (large − small)',
        pairs.map((p) => p.large - p.small),
      ),
    );
  } finally {
    await server.close();
  }
}

/** The in-process lane alone on the company's chunks each added `factor` times (new ids). */
async function laneInMemory(db: Db, companyId: string, factor: number, queries: string[]) {
  let index: Bm25Index | null = null;
  const t0 = performance.now();
  await readAllChunks(
    db,
    companyId,
    5000,
    (corpus) =>
      (index = new Bm25Index({
        chunk_count: corpus.chunk_count * factor,
        token_total: corpus.token_total * factor,
        version: corpus.version,
      })),
    async (rows) => {
      for (let copy = 0; copy < factor; copy++)
        for (const row of rows) index!.add(copy === 0 ? row : { ...row, id: randomUUID() });
    },
  );
  const built = index! as Bm25Index;
  built.trim();
  const seconds = (performance.now() - t0) / 1000;
  const lexemes: string[][] = [];
  for (const query of queries) lexemes.push(await queryLexemes(db, query, queryConfigs(query)));
  for (const words of lexemes) built.search(words, {}, 50);
  const times: number[] = [];
  for (const words of lexemes) {
    const t = performance.now();
    built.search(words, {}, 50);
    times.push(performance.now() - t);
  }
  console.log(
    `\n=== the full-text lane alone, in memory, ${built.size} chunks (each chunk ×${factor}): built in ${seconds.toFixed(0)} s, ${(built.bytes / 2 ** 20).toFixed(0)} MiB; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
  );
  console.log(line('index.search, top 50', times));
}

async function main() {
  const database = await benchDatabase();
  const handle = createDatabase(database.url, 4);
  const db = handle.db;
  await migrateToLatest(db);
  const sizes = values.copies!.split(',').map(Number);
  const postingsUpTo = Number(values['postings-up-to']);
  const seeder = await startInProcess(database.url, { SEARCH_INDEX_MAX_CHUNKS: '0' });
  const large = await chatSetup(seeder.app, seeder.container, { model: 'builtin:kb' });
  const tenant = large.tenant;
  const headers = tenant.headers;
  const dataset = await loadDataset('scifact');
  const queries = dataset.queries.slice(0, Number(values.queries)).map((query) => query.text);
  try {
    let t0 = performance.now();
    await seedDataset(db, tenant.companyId, tenant.userId, dataset);
    console.log(`seeded SciFact in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    for (const copies of sizes) {
      t0 = performance.now();
      const postings = copies <= postingsUpTo;
      await growTo(db, tenant.companyId, copies, postings);
      const chunks = (
        await sql<{
          n: number;
        }>`select chunk_count::int as n from kb_corpus_stats where company_id = ${tenant.companyId}`.execute(db)
      ).rows[0]!.n;
      console.log(
        `\n=== ${chunks} chunks (×${copies}; grown in ${((performance.now() - t0) / 1000).toFixed(0)} s; postings table ${postings ? 'written' : 'not written'})`,
      );
      const arms: [string, Record<string, string>][] = [['in-process index', {}]];
      if (postings) arms.unshift(['SQL', { SEARCH_INDEX_MAX_CHUNKS: '0' }]);
      for (const [label, env] of arms) {
        const target = await startInProcess(database.url, env);
        try {
          const built = performance.now();
          if (label !== 'SQL') {
            await searchTimes(target, headers, queries.slice(0, 1), {});
            while (target.container.knowledge.bm25?.heldVersion(tenant.companyId) == null)
              await new Promise((resolve) => setTimeout(resolve, 100));
            const [held] = target.container.knowledge.searchIndexStats();
            console.log(
              `index built in ${((performance.now() - built) / 1000).toFixed(1)} s: ${held!.chunks} chunks, ${(held!.bytes / 2 ** 20).toFixed(0)} MiB; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
            );
          }
          // A pass that warms the caches (and teaches the lexicon every query's words).
          await searchTimes(target, headers, queries, {});
          await searchTimes(target, headers, queries, { enable_docstoresearch: false });
          const baseline: number[] = [];
          for (const _ of queries.slice(0, 100)) {
            const t = performance.now();
            await target.app.inject({ method: 'GET', url: '/api/public/collections', headers });
            baseline.push(performance.now() - t);
          }
          console.log(line(`[${label}] baseline GET /collections`, baseline));
          console.log(
            line(
              `[${label}] search, full text only`,
              await searchTimes(target, headers, queries, { enable_docstoresearch: false }),
            ),
          );
          console.log(line(`[${label}] search, all lanes (fused)`, await searchTimes(target, headers, queries, {})));
          if (label !== 'SQL' && values['docstore-sql']) await titleArms(target, headers, queries, label);
        } finally {
          await target.close();
        }
      }
      if (copies === Number(values['first-token-at'])) await firstTokenRound(database.url, large, queries);
    }
    const factor = Number(values['memory-scale']);
    if (factor > 0) {
      await laneInMemory(db, tenant.companyId, 1, queries);
      await laneInMemory(db, tenant.companyId, factor, queries);
    }
  } finally {
    await seeder.close();
    await handle.close();
    await database.drop();
  }
}

await main();
