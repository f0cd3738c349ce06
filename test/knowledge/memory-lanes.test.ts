/**
 * The in-process text lanes against the SQL lanes they stand in for, on a real knowledge base
 * ingested through the API: the same lexemes, hits, scores and details for every query and
 * filter; PostgreSQL's own ts_rank, similarity and tsvector text checked piece by piece; and the
 * index dropped when another instance changes the company's knowledge.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLexicon, plainWords } from '../../src/modules/knowledge/knowledge.lexicon.js';
import { queryConfigs } from '../../src/modules/knowledge/knowledge.retrieval.js';
import * as searchRepo from '../../src/modules/knowledge/knowledge.search.repo.js';
import type { LaneFilters, LaneHit, TextLanes } from '../../src/modules/knowledge/knowledge.search.repo.js';
import { TextIndex } from '../../src/modules/knowledge/knowledge.text-index.js';
import {
  parseTsvector,
  trigrams,
  trigramSimilarity,
  tsRankOr,
} from '../../src/modules/knowledge/knowledge.text-scoring.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant, type TestTenant } from '../helpers/factories.js';
import { createCollection, uploadArticle, waitForTask } from './helpers.js';

let t: TestApp;
let tenant: TestTenant;
let collectionId: string;
const documents: Record<string, string> = {};

const ARTICLES: { key: string; title: string; content: string; categories?: string[]; inCollection?: boolean }[] = [
  {
    key: 'refund',
    title: 'Refund policy',
    content:
      'How do I get a refund for my order? Refunds are issued to the original card within 5 business days. Store credit is instant. A refund for an order placed in a store is paid in the store.',
    categories: ['billing'],
    inCollection: true,
  },
  {
    key: 'refund2',
    title: 'Refunds for gift cards',
    content:
      'Gift cards cannot be refunded. A refund for my order with a gift card goes back to the gift card balance.',
    categories: ['billing'],
  },
  {
    key: 'shipping',
    title: 'Shipping and delivery',
    content:
      'We ship to all GCC countries. Express shipping takes two days and costs 30 SAR. Standard delivery takes five days.',
    categories: ['logistics'],
    inCollection: true,
  },
  {
    key: 'password',
    title: 'Reset your password',
    content:
      'Open the sign-in page and choose "Forgot password". We send a link by e-mail; the link is valid for one hour. The password must have 12 characters.',
    inCollection: true,
  },
  {
    key: 'invoice',
    title: 'Invoices and VAT',
    content:
      'Every order has an invoice in your account. Invoices show VAT at 15%. Ask for a corrected invoice within 30 days of the order.',
    categories: ['billing'],
  },
  {
    key: 'long',
    title: 'Warranty terms for electronics and appliances',
    content: Array.from(
      { length: 60 },
      (_, i) =>
        `Section ${i + 1}. The warranty covers defects in materials and workmanship for ${i + 1} months when the product is used as intended. Damage from accidents is not covered; the warranty card and the receipt are needed for a claim.`,
    ).join('\n\n'),
    categories: ['support'],
  },
  {
    key: 'arabic',
    title: 'سياسة الاسترجاع',
    content:
      'كيف أسترجع المبلغ؟ يعاد المبلغ إلى البطاقة الأصلية خلال خمسة أيام عمل. الاسترجاع متاح خلال ثلاثين يوما من الشراء.',
  },
  {
    key: 'arabic2',
    title: 'الشحن والتوصيل',
    content: 'نشحن إلى جميع دول الخليج. الشحن السريع يستغرق يومين ويكلف ثلاثين ريالا.',
  },
];

const QUERIES = [
  'How do I get a refund for my order?',
  'refund for my order',
  'Refund policy',
  'refnd polcy',
  'shipping',
  'How long does express shipping take?',
  'the warranty covers defects in materials and workmanship',
  'warranty card and the receipt',
  'Warranty terms for electronics',
  'password link valid',
  'invoice VAT 15',
  'what is it',
  'the of and',
  'Shipping and delivery',
  'كيف أسترجع المبلغ؟',
  'الشحن السريع',
  'سياسة الاسترجاع',
  'refund الاسترجاع',
  'nothing matches xylophone',
  'Section 12 months',
];

const FILTERS: [string, () => LaneFilters][] = [
  ['no filter', () => ({})],
  ['collection', () => ({ collectionIds: [collectionId] })],
  ['categories', () => ({ categories: ['billing', 'support'] })],
  ['dates', () => ({ startDate: new Date(Date.now() - 3_600_000), endDate: new Date(Date.now() + 3_600_000) })],
  ['empty date range', () => ({ endDate: new Date('2000-01-01') })],
];

beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
  tenant = await createTenant(t.container, 'developer');
  collectionId = await createCollection(t.app, tenant, 'Help centre');
  for (const article of ARTICLES) {
    const upload = await uploadArticle(t.app, tenant.headers, {
      document_title: article.title,
      content: article.content,
      categories: article.categories ?? [],
      ...(article.inCollection ? { collection_id: collectionId } : {}),
    });
    expect((await waitForTask(t, tenant.headers, upload.task_id)).status).toBe('completed');
    documents[article.key] = upload.document_id.replace(/^doc_/, '');
  }
});
afterAll(async () => t?.close());

/**
 * The two answers agree: the same hits with the same scores (to rounding; PostgreSQL sums a
 * chunk's terms in no set order, so equal scores may differ in the last bit and tie differently),
 * in the same order once ties are put in chunk-id order; details as the database holds them.
 */
async function expectSameLanes(memory: TextLanes, sqlLanes: TextLanes, label: string) {
  const tied = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
  const canonical = (hits: LaneHit[]) =>
    [...hits].sort((a, b) => (tied(a.score, b.score) ? a.chunk_id.localeCompare(b.chunk_id) : b.score - a.score));
  for (const lane of ['fulltext', 'docstore'] as const) {
    const mine = canonical(memory[lane] ?? []);
    const theirs = canonical(sqlLanes[lane] ?? []);
    expect(
      mine.map((hit) => hit.chunk_id),
      `${label}: ${lane}`,
    ).toEqual(theirs.map((hit) => hit.chunk_id));
    mine.forEach((hit, i) => expect(hit.score, `${label}: ${lane} score ${i}`).toBeCloseTo(theirs[i]!.score, 9));
  }
  const ids = [...new Set(memory.details.map((row) => row.id))];
  const stored = await searchRepo.chunkDetails(t.container.db, tenant.companyId, ids);
  const byId = (rows: TextLanes['details']) =>
    [...new Map(rows.map((row) => [row.id, row])).values()].sort((a, b) => a.id.localeCompare(b.id));
  expect(byId(memory.details), `${label}: details`).toEqual(byId(stored));
  // Details of every hit (SQL brings those of each lane's top hits and the rest is looked up).
  const hits = [...(memory.fulltext ?? []), ...(memory.docstore ?? [])].map((hit) => hit.chunk_id);
  expect(ids.sort(), `${label}: details`).toEqual([...new Set(hits)].sort());
}

describe('in-process text lanes', () => {
  it('answer every query and filter exactly as the SQL lanes do', async () => {
    const db = t.container.db;
    const snapshot = await searchRepo.textIndexSnapshot(db, tenant.companyId, 1000);
    expect(snapshot).not.toBeNull();
    const index = await TextIndex.build(snapshot!);
    const lexicon = createLexicon(db);
    let compared = 0;
    for (const query of QUERIES) {
      const configs = queryConfigs(query);
      const words = plainWords(query);
      expect(words, query).not.toBeNull();
      await lexicon.learn(configs.flatMap((config) => words!.map((word): [string, string] => [config, word])));
      const lexed = lexicon.lex(query, configs);
      expect(lexed, query).not.toBeNull();
      const expected = await searchRepo.queryLexemes(db, query, configs);
      expect([...lexed!.lexemes].sort(), `${query}: lexemes`).toEqual([...expected].sort());
      for (const [name, filters] of FILTERS) {
        const input = {
          companyId: tenant.companyId,
          query,
          configs,
          filters: filters(),
          depth: 50,
          fulltext: 'bm25' as const,
          docstore: true,
          detailRank: 4,
        };
        const fromSql = await searchRepo.textLanes(db, input);
        const fromMemory = index.search({ ...input, fulltext: true, lexed: lexed! });
        await expectSameLanes(fromMemory, fromSql, `${query} (${name})`);
        compared += (fromSql.fulltext?.length ?? 0) + (fromSql.docstore?.length ?? 0);
      }
    }
    // The comparison is not vacuous: both lanes found things.
    expect(compared).toBeGreaterThan(200);
    const phrase = index.search({
      query: QUERIES[6]!,
      lexed: lexicon.lex(QUERIES[6]!, ['english'])!,
      filters: {},
      depth: 50,
      fulltext: false,
      docstore: true,
    });
    expect(phrase.docstore?.[0]?.score).toBe(1);
  });

  it('reads a query word by word as PostgreSQL reads it whole, and leaves uncertain ones to it', async () => {
    const db = t.container.db;
    const lexicon = createLexicon(db);
    const queries = [
      'The cats ate the rats; then the dogs (and birds) left!',
      'Refunds: "original card", 5 business days.',
      'Café crème and Über naïve résumé',
      'kölsch STRASSE straße',
      'v2 2nd 3rd abc123 12345',
      'مرحبا، كيف يمكنني استرجاع المبلغ؟ شكرا.',
      'what is the of and a',
    ];
    for (const query of queries) {
      const configs = queryConfigs(query);
      const words = plainWords(query)!;
      expect(words, query).not.toBeNull();
      await lexicon.learn(configs.flatMap((config) => words.map((word): [string, string] => [config, word])));
      const lexed = lexicon.lex(query, configs)!;
      expect([...lexed.lexemes].sort(), query).toEqual([...(await searchRepo.queryLexemes(db, query, configs))].sort());
      // The phrase: the same lexemes at the same distances as phraseto_tsquery's.
      for (const [k, config] of configs.entries()) {
        const result = await sql<{
          q: string;
        }>`select phraseto_tsquery(${config}::regconfig, ${query})::text as q`.execute(db);
        const steps = lexed.phrases[k]!;
        const printed = steps
          .map((step, i) => `${i ? ` <${step.distance === 1 ? '-' : step.distance}> ` : ''}'${step.lexeme}'`)
          .join('');
        expect(printed, `${query} (${config})`).toBe(result.rows[0]!.q);
      }
    }
    for (const uncertain of ["it's", 'e-mail', '3.5 kg', 'foo.bar', 'a@b.c', 'x/y', 'naïve\u0301', '.start', 'end..']) {
      expect(plainWords(uncertain), uncertain).toBeNull();
    }
    // An unknown word sends the query to SQL once, and is known for the next one.
    expect(lexicon.lex('zebras quickly', ['english'])).toBeNull();
    await expect.poll(() => lexicon.lex('zebras quickly', ['english'])).not.toBeNull();
  });

  it('reproduces ts_rank, pg_trgm similarity and the tsvector text of PostgreSQL', async () => {
    const db = t.container.db;
    const texts = [
      "O'Brien's back\\slash guide: it's 'quoted' twice twice twice",
      'refund refund refund order',
      'الشحن السريع السريع',
      'a b c',
    ];
    for (const text of texts) {
      const result = await sql<{ tsv: string; lexeme: string; positions: number[] }>`
        select to_tsvector('simple', ${text})::text as tsv, u.lexeme, u.positions::int[] as positions
        from unnest(to_tsvector('simple', ${text})) u`.execute(db);
      const parsed = parseTsvector(result.rows[0]!.tsv);
      expect(new Map(result.rows.map((row) => [row.lexeme, row.positions])), text).toEqual(parsed);
      const lexemes = [...parsed.keys()].slice(0, 3);
      const rank = await sql<{ r: number }>`
        select ts_rank(to_tsvector('simple', ${text}), ${lexemes.map((l) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`).join(' | ')}::tsquery)::float8 as r`.execute(
        db,
      );
      expect(
        tsRankOr((lexeme) => parsed.get(lexeme), lexemes),
        text,
      ).toBe(rank.rows[0]!.r);
    }
    const pairs = [
      ['Refund policy', 'refund policy'],
      ['Refund policy', 'refnd polcy'],
      ['Shipping and delivery', 'shipping'],
      ['Café Über-Größe 2024', 'cafe uber groesse'],
      ['Café Über-Größe 2024', 'CAFÉ über größe'],
      ['سياسة الاسترجاع', 'سياسة'],
      ["O'Brien's back\\slash guide", "o'brien back slash"],
      ['', 'anything'],
      ['!!!', '???'],
    ];
    for (const [a, b] of pairs) {
      const result = await sql<{ s: number }>`select similarity(${a}, ${b})::float8 as s`.execute(db);
      expect(trigramSimilarity(trigrams(a!), trigrams(b!)), `${a} ~ ${b}`).toBe(result.rows[0]!.s);
    }
  });
});

describe('held knowledge bases', () => {
  const search = (query: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/public/documents/search',
      headers: tenant.headers,
      payload: { query, search_method: {}, categories: [] },
    });

  it('are built after the first search, and dropped when another instance changes the company', async () => {
    const memory = t.container.knowledge.memory!;
    expect((await search('Refund policy')).statusCode).toBe(200);
    await expect.poll(() => memory.isHeld(tenant.companyId, 'Refund policy'), { timeout: 10_000 }).toBe(true);
    const before = (await search('Refund policy')).json();
    expect(before.results[0]).toMatchObject({ document_id: `doc_${documents.refund}`, title: 'Refund policy' });

    // Another instance renames the document with plain SQL: its notification reaches this one.
    await sql`update kb_documents set title = 'Money back guarantee' where id = ${documents.refund}`.execute(
      t.container.db,
    );
    await expect.poll(() => memory.isHeld(tenant.companyId), { timeout: 5_000 }).toBe(false);
    await expect.poll(() => memory.isHeld(tenant.companyId, 'Money back guarantee'), { timeout: 10_000 }).toBe(true);
    const after = (await search('Money back guarantee')).json();
    const renamed = after.results.find(
      (result: { document_id: string }) => result.document_id === `doc_${documents.refund}`,
    );
    expect(renamed).toMatchObject({ title: 'Money back guarantee', scores: { docstore: 1 } });

    // A document deleted through the API is gone from the next search on this instance.
    expect(
      (
        await t.app.inject({
          method: 'DELETE',
          url: `/api/public/documents/doc_${documents.refund2}`,
          headers: tenant.headers,
        })
      ).statusCode,
    ).toBe(200);
    const gone = (await search('Refunds for gift cards')).json();
    expect(gone.results.map((result: { document_id: string }) => result.document_id)).not.toContain(
      `doc_${documents.refund2}`,
    );
  });

  it.each(['1', '0'])('are not held past SEARCH_MEMORY_MAX_CHUNKS (here %s; none at all with 0)', async (max) => {
    const other = await createTestApp({ EMBEDDINGS_PROVIDER: 'none', SEARCH_MEMORY_MAX_CHUNKS: max });
    try {
      const response = await other.app.inject({
        method: 'POST',
        url: '/api/public/documents/search',
        headers: tenant.headers,
        payload: { query: 'shipping', search_method: {}, categories: [] },
      });
      expect(response.json().results[0].document_id).toBe(`doc_${documents.shipping}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(other.container.knowledge.memory?.isHeld(tenant.companyId) ?? false).toBe(false);
    } finally {
      await other.close();
    }
  });
});
