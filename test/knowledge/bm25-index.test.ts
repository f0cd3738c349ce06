/**
 * The in-process BM25 index of large knowledge bases against the SQL lane it stands in for: on
 * a SciFact sample ingested through the service, the same hits and scores for every query and
 * filter; across two instances under concurrent writes (a document added on one is found on the
 * other once the notification arrives, a deleted one is never returned, and once the writes
 * settle the index equals SQL again); and after a build whose database connection dies midway
 * or that throws while reading its chunks (SQL answers meanwhile).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../../bench/retrieval/datasets.js';
import { Bm25Index } from '../../src/modules/knowledge/knowledge.bm25-index.js';
import { createBm25Lanes } from '../../src/modules/knowledge/knowledge.bm25-lanes.js';
import * as indexRepo from '../../src/modules/knowledge/knowledge.index.repo.js';
import { queryConfigs } from '../../src/modules/knowledge/knowledge.retrieval.js';
import * as searchRepo from '../../src/modules/knowledge/knowledge.search.repo.js';
import type { LaneFilters, LaneHit } from '../../src/modules/knowledge/knowledge.search.types.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant, type TestTenant } from '../helpers/factories.js';
import { createCollection, laneFilterCases, uploadArticle, waitForTask } from './helpers.js';

// Both instances hold every company's full-text lane in a BM25 index (no small-KB index).
const ENV = { EMBEDDINGS_PROVIDER: 'none', SEARCH_MEMORY_MAX_CHUNKS: '0' };
const DOCUMENTS = 80;

let a: TestApp;
let b: TestApp;
let tenant: TestTenant;
let collectionId: string;
let queries: string[] = [];
const ids: string[] = [];

beforeAll(async () => {
  a = await createTestApp(ENV);
  b = await createTestApp(ENV);
  tenant = await createTenant(a.container, 'developer');
  collectionId = await createCollection(a.app, tenant, 'Half');
  const dataset = await loadDataset('scifact');
  // The queries of the sample's judged documents, and others.
  const sample = dataset.corpus.slice(0, DOCUMENTS);
  queries = dataset.queries.slice(0, 40).map((query) => query.text);
  for (const [i, doc] of sample.entries()) {
    const upload = await uploadArticle(a.app, tenant.headers, {
      document_title: doc.title,
      content: doc.text,
      categories: i % 3 === 0 ? ['third'] : [],
      ...(i % 2 === 0 ? { collection_id: collectionId } : {}),
    });
    ids.push(upload.document_id);
    await a.container.knowledge.ingest(upload.document_id.replace(/^doc_/, ''));
  }
  queries.push(...sample.slice(0, 10).map((doc) => doc.title));
}, 240_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const FILTERS = laneFilterCases(() => collectionId);

/**
 * Same hits, same order, same scores. PostgreSQL sums a chunk's terms in no set order, so equal
 * scores may differ in the last bits: those ties are compared in chunk-id order, and when the
 * lane is full the hits tied with the last one kept (which of them made the cut) are left out.
 */
function expectSameHits(mine: LaneHit[], theirs: LaneHit[], depth: number, label: string) {
  const tied = (x: number, y: number) => Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
  const canonical = (hits: LaneHit[]) => {
    const sorted = [...hits].sort((x, y) =>
      tied(x.score, y.score) ? x.chunk_id.localeCompare(y.chunk_id) : y.score - x.score,
    );
    const last = sorted[sorted.length - 1];
    return sorted.length === depth && last ? sorted.filter((hit) => !tied(hit.score, last.score)) : sorted;
  };
  expect(mine.length, label).toBe(theirs.length);
  const m = canonical(mine);
  const t = canonical(theirs);
  expect(
    m.map((hit) => hit.chunk_id),
    label,
  ).toEqual(t.map((hit) => hit.chunk_id));
  m.forEach((hit, i) => expect(hit.score, `${label} ${i}`).toBeCloseTo(t[i]!.score, 9));
}

async function sqlLane(query: string, filters: LaneFilters, depth: number) {
  const lanes = await searchRepo.textLanes(a.container.db, {
    companyId: tenant.companyId,
    query,
    configs: queryConfigs(query),
    filters,
    depth,
    fulltext: 'bm25',
    docstore: false,
    detailRank: 0,
  });
  return lanes.fulltext!;
}

async function builtIndex(): Promise<Bm25Index> {
  let index: Bm25Index | null = null;
  await indexRepo.readAllChunks(
    a.container.db,
    tenant.companyId,
    50,
    (corpus) => (index = new Bm25Index(corpus)),
    async (rows) => rows.forEach((row) => index!.add(row)),
  );
  return index!;
}

/** The search of instance `t` through the API: the document ids of its results. */
async function searchDocuments(t: TestApp, query: string): Promise<string[]> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/public/documents/search',
    headers: tenant.headers,
    payload: { query, top_k: 10, categories: [], search_method: { enable_docstoresearch: false } },
  });
  expect(response.statusCode).toBe(200);
  return response.json().results.map((result: { document_id: string }) => result.document_id);
}

async function dbVersion(): Promise<number> {
  return (await indexRepo.corpusState(a.container.db, tenant.companyId)).version;
}

describe('BM25 index', () => {
  it('ranks and scores every query and filter exactly as the SQL lane does, at every depth', async () => {
    const index = await builtIndex();
    let compared = 0;
    for (const query of queries) {
      const lexemes = await searchRepo.queryLexemes(a.container.db, query, queryConfigs(query));
      for (const [name, filters] of FILTERS) {
        for (const depth of [1, 10, 50]) {
          const fromSql = await sqlLane(query, filters(), depth);
          expectSameHits(index.search(lexemes, filters(), depth), fromSql, depth, `${query} (${name}, ${depth})`);
          compared += fromSql.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(2000);
  }, 120_000);

  it('stays exact after removing and re-adding chunks in place', async () => {
    const index = await builtIndex();
    const victim = ids[5]!.replace(/^doc_/, '');
    const chunks = await sql<{ id: string }>`select id from kb_chunks where document_id = ${victim}`.execute(
      a.container.db,
    );
    const slots = index.slotsOf(chunks.rows.map((row) => row.id));
    expect(slots.length).toBe(chunks.rows.length);
    index.remove(slots, await index.countRemoved(slots));
    // The same chunks back in new slots, with the statistics unchanged: the same answers as before.
    const changes = await indexRepo.changesSince(a.container.db, tenant.companyId, index.version - 1, 100_000);
    expect(changes.kind).not.toBe('rebuild');
    const rows = await sql<Parameters<Bm25Index['add']>[0]>`
      select id, token_count, collection_id, categories, document_created_at, tsv::text as tsv
      from kb_chunks where document_id = ${victim}`.execute(a.container.db);
    for (const row of rows.rows) index.add(row);
    for (const query of queries.slice(0, 15)) {
      const lexemes = await searchRepo.queryLexemes(a.container.db, query, queryConfigs(query));
      expectSameHits(index.search(lexemes, {}, 50), await sqlLane(query, {}, 50), 50, query);
    }
  }, 60_000);
});

describe('BM25 index across two instances', () => {
  it('finds on one instance what another added, never returns what it deleted, and settles exact', async () => {
    const lanes = b.container.knowledge.bm25!;
    await searchDocuments(b, queries[0]!);
    await expect.poll(() => lanes.heldVersion(tenant.companyId), { timeout: 30_000 }).not.toBeNull();

    // A adds a document with a word no other holds: B finds it once the notification arrives.
    const added = await uploadArticle(a.app, tenant.headers, {
      document_title: 'Zymurgical quasiparticles',
      content: 'Zymurgical quasiparticles ferment in superconducting vats.',
    });
    expect((await waitForTask(a, tenant.headers, added.task_id)).status).toBe('completed');
    await expect
      .poll(() => searchDocuments(b, 'zymurgical quasiparticles'), { timeout: 10_000 })
      .toContain(added.document_id);

    // Concurrent writes on A (ingestions and deletions) while B searches: a document deleted
    // before a search starts is never in its results.
    const deleted = new Set<string>();
    const writes = (async () => {
      for (let i = 0; i < 6; i++) {
        const upload = await uploadArticle(a.app, tenant.headers, {
          document_title: `Concurrent article ${i}`,
          content: `${queries[i]} Zymurgical quasiparticles, concurrent article ${i}.`,
        });
        const victim = ids[10 + i]!;
        const [, response] = await Promise.all([
          waitForTask(a, tenant.headers, upload.task_id),
          a.app.inject({ method: 'DELETE', url: `/api/public/documents/${victim}`, headers: tenant.headers }),
        ]);
        expect(response.statusCode).toBe(200);
        deleted.add(victim);
      }
    })();
    let searches = 0;
    let done = false;
    void writes.finally(() => (done = true));
    while (!done) {
      for (const query of [queries[searches % 6]!, 'zymurgical quasiparticles']) {
        const gone = new Set(deleted);
        const found = await searchDocuments(b, query);
        for (const id of found) expect(gone.has(id), `${id} deleted before the search`).toBe(false);
        searches++;
      }
    }
    await writes;
    expect(searches).toBeGreaterThan(0);

    // Once B has applied every change, its index answers exactly as SQL does.
    const version = await dbVersion();
    await expect.poll(() => lanes.heldVersion(tenant.companyId), { timeout: 15_000 }).toBe(version);
    for (const query of [...queries.slice(0, 12), 'zymurgical quasiparticles']) {
      const lexemes = await searchRepo.queryLexemes(a.container.db, query, queryConfigs(query));
      const fromIndex = lanes.search(tenant.companyId, lexemes, {}, 50);
      expectSameHits(fromIndex!, await sqlLane(query, {}, 50), 50, query);
    }
    // The index's memory is reported per company.
    const metrics = (await b.app.inject({ method: 'GET', url: '/metrics' })).body;
    const bytes = new RegExp(`switchboard_search_index_bytes\\{company="${tenant.companyId}"\\} (\\d+)`).exec(metrics);
    expect(Number(bytes?.[1])).toBeGreaterThan(0);
    const found = await searchDocuments(b, 'zymurgical quasiparticles concurrent article');
    for (const id of deleted) expect(found).not.toContain(id);
    expect(found.length).toBeGreaterThan(0);
  }, 120_000);

  it('answers the route with all lanes from the index as the SQL lane does, details included', async () => {
    const sqlOnly = await createTestApp({ ...ENV, SEARCH_INDEX_MAX_CHUNKS: '0' });
    try {
      const lanes = b.container.knowledge.bm25!;
      await searchDocuments(b, queries[1]!);
      await expect.poll(() => lanes.heldVersion(tenant.companyId), { timeout: 30_000 }).toBe(await dbVersion());
      const search = async (t: TestApp, query: string) => {
        const response = await t.app.inject({
          method: 'POST',
          url: '/api/public/documents/search',
          headers: tenant.headers,
          payload: { query, top_k: 8, categories: [], search_method: {} },
        });
        expect(response.statusCode).toBe(200);
        type Result = { chunk_id: string; document_id: string; title: string; text: string; score: number };
        const results = response.json().results as Result[];
        return new Map(results.map((r) => [r.chunk_id, r]));
      };
      let docstoreHits = 0;
      // Claims, and titles (the docstore lane's exact phrases and similar titles).
      for (const query of [...queries.slice(20, 28), ...queries.slice(-4)]) {
        const mine = await search(b, query);
        const theirs = await search(sqlOnly, query);
        expect([...mine.keys()].sort(), query).toEqual([...theirs.keys()].sort());
        for (const [id, result] of mine) {
          const other = theirs.get(id)!;
          expect(result.score, query).toBeCloseTo(other.score, 9);
          expect([result.document_id, result.title, result.text]).toEqual([other.document_id, other.title, other.text]);
          expect(result.text.length).toBeGreaterThan(0);
          if ('docstore' in (result as unknown as { scores: object }).scores) docstoreHits++;
        }
      }
      expect(docstoreHits).toBeGreaterThan(0);
    } finally {
      await sqlOnly.close();
    }
  }, 120_000);

  it('leaves searches in SQL while a build throws midway, and builds exact afterwards', async () => {
    let pages = 0;
    let failures = 0;
    const lanes = createBm25Lanes({
      db: a.container.db,
      minChunks: 0,
      maxChunks: 1_000_000,
      budgetBytes: 1 << 30,
      isEnabled: () => true,
      log: { warn: () => void failures++ },
      retryDelayMs: 50,
      // The first two builds throw with their snapshot taken and their cursor open.
      beforePage: async () => {
        pages++;
        if (failures < 2) throw new Error('build interrupted');
      },
    });
    try {
      expect(lanes.search(tenant.companyId, ['cell'], {}, 10)).toBeNull();
      await expect.poll(() => failures, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
      // A half-built index is never used: the lane answers nothing (the search runs in SQL) …
      expect(lanes.search(tenant.companyId, ['cell'], {}, 10)).toBeNull();
      const route = await searchDocuments(a, queries[0]!);
      expect(route.length).toBeGreaterThan(0);
      // … and the build after the failures is exact at the current version.
      await expect.poll(() => lanes.heldVersion(tenant.companyId), { timeout: 30_000 }).toBe(await dbVersion());
      expect(failures).toBe(2);
      expect(pages).toBeGreaterThanOrEqual(3);
      for (const query of queries.slice(0, 10)) {
        const lexemes = await searchRepo.queryLexemes(a.container.db, query, queryConfigs(query));
        expectSameHits(lanes.search(tenant.companyId, lexemes, {}, 50)!, await sqlLane(query, {}, 50), 50, query);
      }
    } finally {
      lanes.close();
    }
  }, 120_000);

  it('stays exact when the connection of a build dies midway', async () => {
    let pause: (() => void) | null = null;
    let paused: (() => void) | null = null;
    const pausedOnce = new Promise<void>((resolve) => (paused = resolve));
    let pages = 0;
    const lanes = createBm25Lanes({
      db: a.container.db,
      minChunks: 0,
      maxChunks: 1_000_000,
      budgetBytes: 1 << 30,
      isEnabled: () => true,
      log: { warn: () => undefined },
      retryDelayMs: 50,
      // The first build stops at its first page (its cursor open), until the test lets it go on.
      beforePage: async () => {
        if (pages++ === 0) {
          paused!();
          await new Promise<void>((resolve) => (pause = resolve));
        }
      },
    });
    try {
      expect(lanes.search(tenant.companyId, ['cell'], {}, 10)).toBeNull();
      await pausedOnce;
      // The build's backend is killed while it holds the snapshot, and the knowledge changes meanwhile.
      const killed = await sql<{ ok: boolean }>`
        select pg_terminate_backend(pid) as ok from pg_stat_activity
        where query like '%bm25_chunks%' and pid <> pg_backend_pid() and datname = current_database()`.execute(
        a.container.db,
      );
      expect(killed.rows.some((row) => row.ok)).toBe(true);
      const victim = ids[30]!;
      expect(
        (await a.app.inject({ method: 'DELETE', url: `/api/public/documents/${victim}`, headers: tenant.headers }))
          .statusCode,
      ).toBe(200);
      lanes.changed(tenant.companyId);
      pause!();
      // Until a build succeeds, the lane answers nothing (the search stays in SQL) …
      expect(lanes.heldVersion(tenant.companyId)).toBeNull();
      // … then the next build is exact at the current version.
      await expect.poll(() => lanes.heldVersion(tenant.companyId), { timeout: 30_000 }).toBe(await dbVersion());
      const victimChunks = await sql<{
        n: number;
      }>`select count(*)::int as n from kb_chunks where document_id = ${victim.replace(/^doc_/, '')}`.execute(
        a.container.db,
      );
      expect(victimChunks.rows[0]!.n).toBe(0);
      for (const query of queries.slice(0, 10)) {
        const lexemes = await searchRepo.queryLexemes(a.container.db, query, queryConfigs(query));
        expectSameHits(lanes.search(tenant.companyId, lexemes, {}, 50)!, await sqlLane(query, {}, 50), 50, query);
      }
    } finally {
      lanes.close();
    }
  }, 120_000);
});
