/**
 * A query's lexemes from the lexicon's remembered pieces (the words between white space, each
 * read alone by PostgreSQL once) against PostgreSQL reading the query whole: the same distinct
 * lexemes for every query of SciFact, Cranfield and ARCD (samples) and for hard cases (hyphens, decimals,
 * addresses, apostrophes); queries the parser reads by context (paths, tags) are left to it; a
 * query whose pieces are known needs no database.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { loadDataset } from '../../bench/retrieval/datasets.js';
import type { Executor } from '../../src/db/database.js';
import { createLexicon, spacedTokens } from '../../src/modules/knowledge/knowledge.lexicon.js';
import { queryConfigs } from '../../src/modules/knowledge/knowledge.retrieval.js';
import { queryLexemes } from '../../src/modules/knowledge/knowledge.search.repo.js';

const HARD = [
  'well-known e-mail foo@bar.com http://x.org/a?b=1 3.5% 1,000,000 -5 +7 v1.2.3 co-operate re-enter',
  "don't o'clock it's the customer's order",
  'a -b c- -d- 1e10 0.5e-3 IL28B.rs12979860 x.y.z',
  'Müller-Lüdenscheid 北京 東京 abc_def a.b.c. U.S.A. T-lymphotropic type-I-associated',
  '&amp; &nbsp; x&y (HAM/TSP) 10^5 ≥90% ±2 α-synuclein',
  'مرحبا، كيف يمكنني استرجاع المبلغ؟ شكرا.',
  'aerodynamic\nheating   and\texternal loads .',
];

let db: Kysely<unknown>;
let queries: string[] = [];

beforeAll(async () => {
  db = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: inject('databaseUrl') }) }) });
  // Cranfield whole, the first SciFact and ARCD queries (the round trips of the rest add little).
  for (const [name, count] of [
    ['scifact', 500],
    ['cranfield', 225],
    ['arcd', 200],
  ] as const)
    queries.push(...(await loadDataset(name)).queries.slice(0, count).map((query) => query.text));
  queries = [...queries, ...HARD];
});
afterAll(async () => {
  await db?.destroy();
});

describe('query lexemes from remembered pieces', () => {
  it('reads every test-collection query as PostgreSQL reads it whole', async () => {
    const lexicon = createLexicon(db as unknown as Executor);
    let read = 0;
    for (const query of queries) {
      const configs = queryConfigs(query);
      const mine = await lexicon.lexemes(query, configs);
      if (mine === null) continue;
      read++;
      const whole = await queryLexemes(db as unknown as Executor, query, configs);
      expect([...mine].sort(), query).toEqual([...whole].sort());
    }
    // Nearly every query is read from pieces (paths such as "HAM/TSP" inside a piece are fine).
    expect(read).toBeGreaterThan(queries.length * 0.99);
    for (const query of HARD) expect(spacedTokens(query), query).not.toBeNull();
  }, 120_000);

  it('leaves to PostgreSQL what its parser reads by context', () => {
    for (const query of [
      'see ~/notes',
      'a ~1.15 ratio',
      'the /boat-tail/ shape',
      'two .. dots',
      'a <b class="x y">tag</b>',
    ])
      expect(spacedTokens(query), query).toBeNull();
    expect(spacedTokens('x'.repeat(101))).toBeNull();
  });

  it('answers known pieces without the database', async () => {
    const own = new Kysely({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: inject('databaseUrl') }) }),
    });
    const lexicon = createLexicon(own as unknown as Executor);
    const query = 'How do refunds work for well-known e-mail orders?';
    const first = await lexicon.lexemes(query, ['english']);
    await own.destroy();
    // The pool is gone: a second reading that asked PostgreSQL would fail.
    const again = await lexicon.lexemes('well-known refunds work How do', ['english']);
    expect(first).toEqual(expect.arrayContaining(['refund', 'well-known', 'e-mail', 'order']));
    expect([...again!].sort()).toEqual(['known', 'refund', 'well', 'well-known', 'work']);
    await expect(lexicon.lexemes('an unknown piece', ['english'])).rejects.toThrow();
  });
});
