/**
 * The event loop's share of writing a large document's chunks (`replaceChunks`): one statement
 * of a few array parameters per 1,000 chunks, against the baseline of the same run — the former
 * statement of a row per chunk (each text sent three times, thousands of placeholders compiled
 * by Kysely), kept below as it was. Measured as the loop's busy time
 * (performance.eventLoopUtilization) and wall time, alternating the two, same database.
 *
 *   npx tsx bench/knowledge/chunk-insert.ts [--chunks 2000] [--rounds 5] [--dims 384]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createDatabase, type Executor } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { insertDocument } from '../../src/modules/knowledge/knowledge.repo.js';
import {
  bumpCorpus,
  deleteChunks,
  replaceChunks,
  type NewChunk,
} from '../../src/modules/knowledge/knowledge.tasks.repo.js';
import { benchDatabase } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    chunks: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
    dims: { type: 'string', default: '384' },
  },
});
const CHUNKS = Number(values.chunks);
const ROUNDS = Number(values.rounds);
const DIMS = Number(values.dims);

type Doc = Parameters<typeof replaceChunks>[1];

/** The former statement: a row of values per chunk, the text inside the tsvector expression twice more. */
async function rowPerChunk(executor: Executor, document: Doc, chunks: NewChunk[], language: string, config: string) {
  await deleteChunks(executor, document.company_id, document.id);
  for (let start = 0; start < chunks.length; start += 500) {
    const batch = chunks.slice(start, start + 500);
    await executor
      .insertInto('kb_chunks')
      .values(
        batch.map((chunk) => {
          const heading = [document.title, ...document.questions].join('\n');
          const tsv = sql<string>`to_tsvector(${config}::regconfig, ${heading} || ' ' || ${chunk.text})`;
          return {
            company_id: document.company_id,
            document_id: document.id,
            collection_id: document.collection_id,
            categories: document.categories,
            document_created_at: document.created_at,
            ordinal: chunk.ordinal,
            text: chunk.text,
            language,
            tsv,
            token_count: sql<number>`(select coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0) from unnest(${tsv}) u)`,
            embedding: chunk.embedding
              ? Buffer.from(chunk.embedding.buffer, chunk.embedding.byteOffset, chunk.embedding.byteLength)
              : null,
            embedding_model: chunk.embedding ? 'bench-model' : null,
          };
        }),
      )
      .execute();
  }
  await sql`
    insert into kb_postings (company_id, lexeme, chunk_id, tf, dl)
    select c.company_id, u.lexeme, c.id, coalesce(array_length(u.positions, 1), 1), c.token_count
    from kb_chunks c, unnest(c.tsv) u
    where c.company_id = ${document.company_id} and c.document_id = ${document.id}
    order by u.lexeme`.execute(executor);
  await bumpCorpus(executor, document.company_id, chunks.length, 0);
}

const words = 'refund parcel warranty battery charger account password invoice delivery return exchange'.split(' ');
const chunks: NewChunk[] = Array.from({ length: CHUNKS }, (_, ordinal) => ({
  ordinal,
  text: Array.from({ length: 120 }, (_, i) => words[(ordinal * 7 + i * 3) % words.length]).join(' ') + ` ${ordinal}.`,
  embedding: Float32Array.from({ length: DIMS }, (_, i) => Math.sin(ordinal + i)),
}));

const database = await benchDatabase();
const handle = createDatabase(database.url, 2);
try {
  await migrateToLatest(handle.db);
  const company = await sql<{ id: string }>`insert into companies (name) values ('Bench') returning id`.execute(
    handle.db,
  );
  const companyId = company.rows[0]!.id;
  const row = await insertDocument(handle.db, {
    company_id: companyId,
    collection_id: null,
    title: 'Manual',
    categories: [],
    source_type: 'article',
    source_url: null,
    file_name: null,
    mime_type: null,
    size_bytes: 0,
    source_bytes: null,
    content: '',
    created_by: null,
  });
  const document: Doc = { ...row, questions: [], categories: [], created_at: row.created_at };
  const arms = {
    'row per chunk (baseline)': (trx: Executor) => rowPerChunk(trx, document, chunks, 'en', 'english'),
    'array parameters': (trx: Executor) => replaceChunks(trx, document, chunks, 'en', 'english', 'bench-model'),
  };
  const results: Record<string, { busy: number[]; wall: number[] }> = {};
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const [name, run] of Object.entries(arms)) {
      const elu = performance.eventLoopUtilization();
      const start = performance.now();
      await handle.db.transaction().execute((trx) => run(trx));
      const wall = performance.now() - start;
      const busy = performance.eventLoopUtilization(elu).active;
      if (round === 0) continue; // a first round warms both
      (results[name] ??= { busy: [], wall: [] }).busy.push(busy);
      results[name].wall.push(wall);
    }
  }
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
  console.log(
    `${CHUNKS} chunks of ~${chunks[0]!.text.length} characters, ${DIMS}-dimension vectors, ${ROUNDS} rounds (medians)`,
  );
  console.log('| statement | event loop busy | wall | busy / baseline |');
  console.log('|---|---|---|---|');
  const base = median(results['row per chunk (baseline)']!.busy);
  for (const [name, { busy, wall }] of Object.entries(results))
    console.log(
      `| ${name} | ${median(busy).toFixed(0)} ms | ${median(wall).toFixed(0)} ms | ${(median(busy) / base).toFixed(2)} |`,
    );
} finally {
  await handle.close();
  await database.drop();
}
