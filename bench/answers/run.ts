/**
 * Answer quality of the offline `builtin:kb` responder end to end, on the development set of
 * bench/answers/help-centre.ts: every article is uploaded through the API and ingested by the
 * service's own pipeline, then each question is searched as a chat turn searches
 * (`knowledge.search`, top 4, all lanes; no embedder on this machine) and answered by
 * `answerFromKnowledge` from those passages.
 *
 *   npx tsx bench/answers/run.ts [--list] [--split dev|held-out|all] [--set dev|fresh]
 *
 * `--set fresh` runs the second held-out set (bench/answers/fresh-set.ts: a fitness-club help
 * centre written without consulting the lexicon) instead of help-centre.ts.
 *
 * Per split and kind: right fact (found and the answer holds the question's fact), found,
 * retrieval (the question's article among the 4 passages), and false answers on unanswerable
 * questions; the time of search + answer per question. Uses BENCH_DATABASE_URL, else a fresh
 * database on the local PostgreSQL (dropped afterwards).
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { answerFromKnowledge } from '../../src/modules/chat/chat.kb-responder.js';
import { comparable } from './comparable.js';
import { createTenant } from '../../test/helpers/factories.js';
import { benchDatabase } from '../lib/harness.js';
import * as devSet from './help-centre.js';
import type { Kind, Question } from './help-centre.js';
import { FRESH_ARTICLES, FRESH_QUESTIONS, FRESH_UNANSWERABLE } from './fresh-set.js';

const { values } = parseArgs({
  options: {
    list: { type: 'boolean', default: false },
    split: { type: 'string', default: 'all' },
    set: { type: 'string', default: 'dev' },
  },
});
const fresh = values.set === 'fresh';
const ARTICLES = fresh ? FRESH_ARTICLES : devSet.ARTICLES;
const QUESTIONS = fresh ? FRESH_QUESTIONS : devSet.QUESTIONS;
const UNANSWERABLE = fresh ? FRESH_UNANSWERABLE : devSet.UNANSWERABLE;

const percent = (part: number, whole: number) => (whole ? `${((100 * part) / whole).toFixed(1)} %` : '–');

async function main() {
  const database = await benchDatabase();
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
  });
  const container = createContainer({ config, databaseUrl: database.url, log: pino({ level: 'silent' }) });
  const app = await buildApp(container);
  await container.start();
  try {
    const tenant = await createTenant(container, 'developer');
    const articleOf = new Map<string, string>();
    for (const article of ARTICLES) {
      const response = await app.inject({
        method: 'POST',
        url: '/api/public/documents/upload/article',
        headers: tenant.headers,
        payload: { document_title: article.title, content: article.text },
      });
      if (response.statusCode !== 202) throw new Error(`upload ${article.id}: ${response.statusCode} ${response.body}`);
      articleOf.set(response.json().document_id, article.id);
    }
    for (;;) {
      const stats = (
        await app.inject({ method: 'GET', url: '/api/public/documents/stats', headers: tenant.headers })
      ).json();
      if (stats.by_status.pending + stats.by_status.processing === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const splitOf = (question: Question) =>
      question.split ?? ARTICLES.find((article) => article.id === question.article)!.split;
    const ask = async (question: Question) => {
      const started = performance.now();
      const { results } = await container.knowledge.search(tenant.companyId, { query: question.text, topK: 4 });
      const answer = answerFromKnowledge(question.text, results);
      const ms = performance.now() - started;
      const said = comparable(answer.sentences.join(' '));
      return {
        ms,
        found: answer.found,
        retrieved: results.some((result) => articleOf.get(result.document_id) === question.article),
        right: answer.found && question.facts.some((fact) => said.includes(comparable(fact))),
        said: answer.sentences.join(' '),
      };
    };
    const all = [...QUESTIONS, ...UNANSWERABLE];
    // Warm-up: the in-process index is built and every word known before the timed pass.
    for (const question of all) await ask(question);
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const question of all) await ask(question);
    const splits = (
      values.split === 'all' ? (['dev', 'held-out'] as const) : [values.split as 'dev' | 'held-out']
    ).filter((split) => all.some((question) => splitOf(question) === split));
    const times: number[] = [];
    console.log(
      '| split | kind | language | questions | right fact | found | article retrieved (top 4) | false answers |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    const misses: string[] = [];
    for (const split of splits)
      for (const kind of ['lexical', 'reworded', 'unanswerable'] as Kind[])
        for (const language of ['en', 'ar'] as const) {
          const set = all.filter(
            (question) =>
              question.kind === kind &&
              splitOf(question) === split &&
              (/[\u0600-\u06FF]/.test(question.text) ? 'ar' : 'en') === language,
          );
          if (!set.length) continue;
          let right = 0;
          let found = 0;
          let retrieved = 0;
          for (const question of set) {
            const result = await ask(question);
            times.push(result.ms);
            if (result.right) right++;
            if (result.found) found++;
            if (result.retrieved) retrieved++;
            if (kind === 'unanswerable' ? result.found : !result.right)
              misses.push(
                `[${split} ${kind}] ${question.text} → ${result.found ? result.said : '(not found)'}${kind !== 'unanswerable' && !result.retrieved ? ' [article not retrieved]' : ''}`,
              );
          }
          console.log(
            kind === 'unanswerable'
              ? `| ${split} | ${kind} | ${language} | ${set.length} | – | – | – | ${percent(found, set.length)} |`
              : `| ${split} | ${kind} | ${language} | ${set.length} | ${percent(right, set.length)} | ${percent(found, set.length)} | ${percent(retrieved, set.length)} | – |`,
          );
        }
    // Totals per split and kind, both languages.
    for (const split of splits) {
      const summary = (['lexical', 'reworded'] as Kind[]).map((kind) => {
        const set = all.filter((question) => question.kind === kind && splitOf(question) === split);
        return { kind, set };
      });
      const parts: string[] = [];
      let rightAll = 0;
      let countAll = 0;
      for (const { kind, set } of summary) {
        let right = 0;
        for (const question of set) if ((await ask(question)).right) right++;
        rightAll += right;
        countAll += set.length;
        parts.push(`${kind} ${percent(right, set.length)} of ${set.length}`);
      }
      const unanswerable = all.filter((question) => question.kind === 'unanswerable' && splitOf(question) === split);
      let falseAnswers = 0;
      for (const question of unanswerable) if ((await ask(question)).found) falseAnswers++;
      console.log(
        `${split}: right fact ${parts.join(', ')}, overall ${percent(rightAll, countAll)}; false answers ${percent(falseAnswers, unanswerable.length)} of ${unanswerable.length}`,
      );
    }
    times.sort((a, b) => a - b);
    console.log(
      `search + answer per question: p50 ${times[Math.floor(times.length / 2)]!.toFixed(2)} ms, p90 ${times[Math.floor(times.length * 0.9)]!.toFixed(2)} ms`,
    );
    // What the expansion adds to a turn's search + answer: each question without and with it,
    // alternated (and which goes first alternated), 5 rounds; median of the paired differences.
    const timeOne = async (question: Question, expand: boolean) => {
      const started = performance.now();
      const { results } = await container.knowledge.search(tenant.companyId, { query: question.text, topK: 4, expand });
      answerFromKnowledge(question.text, results);
      return performance.now() - started;
    };
    const without: number[] = [];
    const withExpansion: number[] = [];
    const differences: number[] = [];
    for (let round = 0; round < 5; round++)
      for (const [index, question] of all.entries()) {
        const first = (round + index) % 2 === 0;
        const a = await timeOne(question, !first);
        const b = await timeOne(question, first);
        const [off, on] = first ? [a, b] : [b, a];
        without.push(off);
        withExpansion.push(on);
        differences.push(on - off);
      }
    const median = (list: number[]) => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)]!;
    console.log(
      `expansion: search + answer p50 ${median(without).toFixed(3)} ms without, ${median(withExpansion).toFixed(3)} ms with; median paired difference ${median(differences).toFixed(3)} ms (${differences.length} pairs)`,
    );
    if (values.list) console.log(misses.map((miss) => `  ${miss}`).join('\n'));
  } finally {
    await app.close();
    await container.close();
    await database.drop();
  }
}

await main();
