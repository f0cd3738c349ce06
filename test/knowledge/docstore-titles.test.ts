/**
 * The docstore lane of a large knowledge base with its titles from the in-process title index
 * (knowledge.title-index.ts) against the same lane scanning the titles in SQL: on a SciFact
 * sample with titles near the similarity threshold, a long document whose phrases cross chunk
 * boundaries, filters by collection, category and date, and another company holding the same
 * titles, the same documents, scores and representative chunks for every query and filter; the
 * index's title matches equal to pg_trgm's; and on a second instance, a retitled document found
 * by its new title once the notification arrives, a deleted one never returned.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../../bench/retrieval/datasets.js';
import { queryConfigs } from '../../src/modules/knowledge/knowledge.retrieval.js';
import * as searchRepo from '../../src/modules/knowledge/knowledge.search.repo.js';
import type { LaneFilters } from '../../src/modules/knowledge/knowledge.search.types.js';
import * as indexRepo from '../../src/modules/knowledge/knowledge.index.repo.js';
import { createTrigramReader, TitleIndex, type TitleRow } from '../../src/modules/knowledge/knowledge.title-index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant, type TestTenant } from '../helpers/factories.js';
import { createCollection, laneFilterCases, uploadArticle, waitForTask } from './helpers.js';

// Every company's full-text lane (and so its titles) held in memory from the first search.
const ENV = { EMBEDDINGS_PROVIDER: 'none', SEARCH_MEMORY_MAX_CHUNKS: '0' };

let a: TestApp;
let b: TestApp;
let tenant: TestTenant;
let other: TestTenant;
let collectionId: string;
const own: string[] = [];
const others: string[] = [];
let queries: string[] = [];
let phrases: string[] = [];

/** Sentences of made-up words: each phrase of a sentence's last word and the next one's first word crosses a sentence. */
const WORDS = ['amber', 'basil', 'cobalt', 'dune', 'ember', 'fjord', 'garnet', 'harbor', 'indigo', 'juniper'];
function longText(): { text: string; crossing: string[] } {
  const sentences: string[] = [];
  const crossing: string[] = [];
  for (let i = 0; i < 40; i++) {
    const w = (k: number) => `${WORDS[(i + k) % WORDS.length]}${i}`;
    sentences.push(`The ${w(0)} survey recorded ${w(1)} readings near the ${w(2)} station at dawn ${w(3)}.`);
    if (i > 0) crossing.push(`${WORDS[(i - 1 + 3) % WORDS.length]}${i - 1} the ${w(0)}`);
  }
  return { text: sentences.join(' '), crossing };
}

async function ingest(t: TestApp, upload: { task_id: string }, headers: Record<string, string>) {
  expect((await waitForTask(t, headers, upload.task_id)).status).toBe('completed');
}

beforeAll(async () => {
  a = await createTestApp(ENV);
  b = await createTestApp(ENV);
  tenant = await createTenant(a.container, 'developer');
  other = await createTenant(a.container, 'developer');
  collectionId = await createCollection(a.app, tenant, 'Half');
  const dataset = await loadDataset('scifact');
  const sample = dataset.corpus.slice(0, 30);
  for (const [i, doc] of sample.entries()) {
    const upload = await uploadArticle(a.app, tenant.headers, {
      document_title: doc.title,
      content: doc.text,
      categories: i % 3 === 0 ? ['third'] : [],
      ...(i % 2 === 0 ? { collection_id: collectionId } : {}),
    });
    own.push(upload.document_id);
    await ingest(a, upload, tenant.headers);
  }
  // Another company with the same titles (and texts): never part of the first company's answers.
  for (const doc of sample.slice(0, 8)) {
    const upload = await uploadArticle(a.app, other.headers, { document_title: doc.title, content: doc.text });
    others.push(upload.document_id);
    await ingest(a, upload, other.headers);
  }
  const long = longText();
  const upload = await uploadArticle(a.app, tenant.headers, {
    document_title: 'Field survey of the coastal stations',
    content: long.text,
    categories: ['third'],
  });
  own.push(upload.document_id);
  await ingest(a, upload, tenant.headers);
  phrases = long.crossing;

  // Titles near the threshold: prefixes and one-letter edits of the sample's titles, kept when
  // pg_trgm puts them within 0.1 of it.
  const variants: string[] = [];
  for (const doc of sample.slice(0, 12)) {
    const title = doc.title.slice(0, 64);
    for (let cut = 8; cut < title.length; cut += 5) variants.push(title.slice(0, cut));
    for (let at = 2; at < title.length; at += 7) variants.push(title.slice(0, at) + 'q' + title.slice(at + 1));
  }
  const near = await sql<{ q: string }>`
    select distinct v.q from unnest(${variants}::text[]) v(q)
    where exists (select 1 from kb_documents d where d.company_id = ${tenant.companyId}
                  and abs(similarity(d.title, v.q) - 0.6) < 0.1)`.execute(a.container.db);
  queries = [
    ...near.rows.map((row) => row.q),
    ...sample.slice(0, 10).map((doc) => doc.title.slice(0, 64)),
    ...dataset.queries.slice(0, 20).map((query) => query.text),
    'Field survey of the coastal station',
    'in the',
    'cells',
    'a',
  ];
}, 300_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const FILTERS = laneFilterCases(() => collectionId, true);

async function docstoreLane(query: string, filters: LaneFilters, titleIds: string[] | null) {
  const lanes = await searchRepo.textLanes(a.container.db, {
    companyId: tenant.companyId,
    query,
    configs: queryConfigs(query),
    filters,
    depth: 50,
    fulltext: null,
    docstore: true,
    detailRank: 0,
    titleIds,
  });
  return lanes.docstore!;
}

/** pg_trgm's answer: the company's documents whose title is similar to the query (`%`, threshold 0.6). */
async function sqlTitles(companyId: string, query: string): Promise<string[]> {
  const result = await sql<{ id: string }>`
    select id from kb_documents where company_id = ${companyId} and similarity(title, ${query}) >= 0.6`.execute(
    a.container.db,
  );
  return result.rows.map((row) => row.id).sort();
}

async function heldTitles() {
  const lanes = b.container.knowledge.bm25!;
  const warm = await b.app.inject({
    method: 'POST',
    url: '/api/public/documents/search',
    headers: tenant.headers,
    payload: { query: 'warm', top_k: 1, categories: [], search_method: {} },
  });
  expect(warm.statusCode).toBe(200);
  await expect.poll(() => lanes.heldVersion(tenant.companyId), { timeout: 30_000 }).not.toBeNull();
  return (query: string) => lanes.titleMatches(tenant.companyId, query);
}

describe('title index', () => {
  it("equals pg_trgm's similarity ≥ 0.6 on titles of a small vocabulary, every share near the threshold", async () => {
    // Titles and queries drawn from twelve words: trigrams shared in every proportion, the
    // rarest ones no rarer than the rest, so a title near the threshold may share few of them.
    const vocabulary = [
      'alpha',
      'beta',
      'gamma',
      'delta',
      'omega',
      'sigma',
      'theta',
      'kappa',
      'lambda',
      'zeta',
      'eta',
      'rho',
      'Café',
      'naïve',
      'ΣΊΣΥΦΟΣ',
      'استرداد',
      'فلوسي',
      'Straße',
      'x-ray',
      'İstanbul',
      'e\u0301té',
    ];
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const phrase = (words: number) =>
      Array.from({ length: words }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ');
    const titles = Array.from({ length: 600 }, () => phrase(1 + Math.floor(random() * 6)));
    const read = createTrigramReader((pieces) => indexRepo.textTrigrams(a.container.db, pieces));
    // This database reads ASCII as the process does: ASCII titles' trigrams made here, as in a build.
    expect(await read.asciiReadHere()).toBe(true);
    const rows = await sql<{ id: string; title: string; trigrams: string[] }>`
      select gen_random_uuid()::text as id, t as title, show_trgm(t) as trigrams from unnest(${titles}::text[]) t`.execute(
      a.container.db,
    );
    const built: TitleRow[] = rows.rows.map((row, i) => ({
      ...row,
      trigrams: i % 2 === 0 && ![...row.title].some((char) => char.charCodeAt(0) > 0x7f) ? null : row.trigrams,
    }));
    const index = new TitleIndex();
    index.add(built.slice(0, 400));
    // Some replaced (the old slots dead), the rest added after.
    index.replace(rows.rows.slice(0, 50).map((row) => ({ ...row, trigrams: row.trigrams.slice(0, 3) })));
    index.replace(built.slice(0, 50));
    index.add(built.slice(400));
    const queries = [...new Set(Array.from({ length: 150 }, () => phrase(1 + Math.floor(random() * 5))))];
    const expected = await sql<{ q: string; ids: string[] }>`
      select v.q, coalesce(array_agg(r.id order by r.id) filter (where similarity(r.title, v.q) >= 0.6), '{}') as ids
      from unnest(${queries}::text[]) v(q) cross join jsonb_to_recordset(${JSON.stringify(rows.rows)}::jsonb) r(id text, title text)
      group by v.q`.execute(a.container.db);
    let matched = 0;
    for (const { q, ids } of expected.rows) {
      expect([...index.matches(await read(q))!].sort(), q).toEqual(ids);
      matched += ids.length;
    }
    expect(matched).toBeGreaterThan(200);
  });
});

describe('trigram reader', () => {
  it('asks PostgreSQL for every piece of a query when it reads ASCII otherwise (another locale)', async () => {
    const asked: string[][] = [];
    const read = createTrigramReader(async (pieces) => {
      asked.push(pieces);
      return pieces.map((piece) => [`<${piece.toLowerCase()}>`]);
    });
    expect(await read.asciiReadHere()).toBe(false);
    expect(await read('Hello  world Hello')).toEqual(['<hello>', '<world>']);
    expect(asked.at(-1)).toEqual(['Hello', 'world']);
    // Remembered: not asked again.
    expect(await read('world')).toEqual(['<world>']);
    expect(asked).toHaveLength(2);
  });
});

describe('docstore lane with the title index', () => {
  it("finds exactly pg_trgm's titles, never another company's, and leaves other queries to SQL", async () => {
    const matches = await heldTitles();
    const similarities = await sql<{ s: number }>`
      select similarity(d.title, v.q) as s from kb_documents d, unnest(${queries}::text[]) v(q)
      where d.company_id = ${tenant.companyId} and abs(similarity(d.title, v.q) - 0.6) < 0.1`.execute(a.container.db);
    // The corpus straddles the threshold on both sides.
    expect(similarities.rows.filter((row) => row.s >= 0.6 && row.s < 0.7).length).toBeGreaterThan(3);
    expect(similarities.rows.filter((row) => row.s < 0.6 && row.s > 0.5).length).toBeGreaterThan(3);
    let found = 0;
    for (const query of queries) {
      const mine = await matches(query);
      expect(mine, query).not.toBeNull();
      expect([...mine!].sort(), query).toEqual(await sqlTitles(tenant.companyId, query));
      for (const id of others) expect(mine).not.toContain(id.replace(/^doc_/, ''));
      found += mine!.length;
    }
    expect(found).toBeGreaterThan(20);
    // Pieces beyond ASCII are read by PostgreSQL: the same answer.
    for (const query of ['Café au lait — naïve', 'Évolution of an HIV glycan–dépendent', 'استرداد الأموال'])
      expect([...(await matches(query))!].sort(), query).toEqual(await sqlTitles(tenant.companyId, query));
  }, 120_000);

  it('answers every query and filter as the title scan does: documents, scores, representative chunks', async () => {
    const matches = await heldTitles();
    let compared = 0;
    for (const query of [...queries, ...phrases.slice(0, 12)]) {
      for (const [name, filters] of FILTERS) {
        const scanned = await docstoreLane(query, filters(), null);
        const indexed = await docstoreLane(query, filters(), await matches(query));
        expect(indexed, `${query} (${name})`).toEqual(scanned);
        compared += scanned.length;
      }
    }
    expect(compared).toBeGreaterThan(100);
    // Phrases crossing chunk boundaries are found (the phrase half is unchanged) with their chunk.
    expect((await docstoreLane(phrases[20]!, {}, await matches(phrases[20]!))).length).toBe(1);
  }, 180_000);

  it('follows a retitled document on another instance and never returns a deleted one', async () => {
    const matches = await heldTitles();
    const target = own[3]!;
    const updated = await a.app.inject({
      method: 'PUT',
      url: `/api/public/documents/${target}`,
      headers: tenant.headers,
      payload: { document_title: 'Zymurgical quasiparticles in superconducting vats' },
    });
    expect(updated.statusCode).toBe(200);
    await ingest(a, updated.json(), tenant.headers);
    await expect
      .poll(() => matches('Zymurgical quasiparticles in superconducting vat'), { timeout: 10_000 })
      .toEqual([target.replace(/^doc_/, '')]);

    const victim = own[4]!;
    const removed = await a.app.inject({
      method: 'DELETE',
      url: `/api/public/documents/${victim}`,
      headers: tenant.headers,
    });
    expect(removed.statusCode).toBeLessThan(300);
    for (const query of queries.slice(0, 30)) {
      const response = await b.app.inject({
        method: 'POST',
        url: '/api/public/documents/search',
        headers: tenant.headers,
        payload: { query, top_k: 50, categories: [], search_method: { enable_fulltextsearch: false } },
      });
      expect(response.statusCode).toBe(200);
      const documents = response.json().results.map((result: { document_id: string }) => result.document_id);
      expect(documents).not.toContain(victim);
    }
    // Settled: the same answers as the scan again.
    await expect
      .poll(() => matches('Zymurgical quasiparticles in superconducting vat'), { timeout: 10_000 })
      .toHaveLength(1);
    for (const query of queries.slice(0, 20))
      expect(await docstoreLane(query, {}, await matches(query)), query).toEqual(await docstoreLane(query, {}, null));
  }, 120_000);
});
