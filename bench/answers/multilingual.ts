/**
 * The offline `builtin:kb` responder in English, French, German, Spanish and Portuguese, on the
 * held-out set of bench/answers/multilingual-set.ts: the same six help-centre articles in each
 * language, uploaded through the API and ingested by the service; each question searched as a
 * chat turn searches (`knowledge.search`, top 4, no embedder) and answered by
 * `answerFromKnowledge`. Per language: right fact (found, and the answer holds the question's
 * fact), found, the in-language article among the 4 passages, false answers to unanswerable
 * questions, and fallbacks — an answer citing another language's article, or a reply whose
 * language (its framing and "not found" sentences) is not the question's.
 *
 *   npx tsx bench/answers/multilingual.ts [--list]
 */
import { parseArgs } from 'node:util';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { startInProcess } from '../lib/in-process.js';
import { answerFromKnowledge } from '../../src/modules/chat/chat.kb-responder.js';
import { createTenant } from '../../test/helpers/factories.js';
import { benchDatabase } from '../lib/harness.js';
import { comparable } from './comparable.js';
import {
  MULTILINGUAL_ARTICLES,
  MULTILINGUAL_LANGUAGES,
  MULTILINGUAL_QUESTIONS,
  MULTILINGUAL_UNANSWERABLE,
} from './multilingual-set.js';

const { values } = parseArgs({ options: { list: { type: 'boolean', default: false } } });
const percent = (part: number, whole: number) => (whole ? `${((100 * part) / whole).toFixed(1)} %` : '–');

async function main() {
  const database = await benchDatabase();
  const handle = createDatabase(database.url, 2);
  await migrateToLatest(handle.db);
  await handle.close();
  const { container, app } = await startInProcess(database.url, { RUN_WORKERS: 'true' });
  try {
    const tenant = await createTenant(container, 'developer');
    const articleOf = new Map<string, (typeof MULTILINGUAL_ARTICLES)[number]>();
    for (const article of MULTILINGUAL_ARTICLES) {
      const response = await app.inject({
        method: 'POST',
        url: '/api/public/documents/upload/article',
        headers: tenant.headers,
        payload: { document_title: article.title, content: article.text },
      });
      if (response.statusCode !== 202) throw new Error(`upload ${article.id}: ${response.statusCode} ${response.body}`);
      articleOf.set(response.json().document_id, article);
    }
    for (;;) {
      const stats = (
        await app.inject({ method: 'GET', url: '/api/public/documents/stats', headers: tenant.headers })
      ).json();
      if (stats.by_status.pending + stats.by_status.processing === 0) {
        console.log(`documents by language: ${JSON.stringify(stats.by_language)}`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const misses: string[] = [];
    console.log(
      '| language | questions | right fact (lexical) | right fact (reworded) | right fact (all) | in-language article in top 4 | fallbacks | false answers (unanswerable) |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    const overall: Record<string, number> = {};
    for (const lang of MULTILINGUAL_LANGUAGES) {
      const questions = MULTILINGUAL_QUESTIONS.filter((question) => question.lang === lang);
      const unanswerable = MULTILINGUAL_UNANSWERABLE.filter((question) => question.lang === lang);
      const right = { lexical: 0, reworded: 0 };
      let retrieved = 0;
      let fallbacks = 0;
      let falseAnswers = 0;
      for (const question of [...questions, ...unanswerable]) {
        const { results } = await container.knowledge.search(tenant.companyId, { query: question.text, topK: 4 });
        const answer = answerFromKnowledge(question.text, results);
        const cited = answer.citations.map((citation) => articleOf.get(citation.document_id)!);
        const fallback = answer.language !== lang || cited.some((article) => article.lang !== lang);
        if (fallback) fallbacks++;
        const said = comparable(answer.sentences.join(' '));
        if (question.kind === 'unanswerable') {
          if (answer.found) {
            falseAnswers++;
            misses.push(`[${lang} unanswerable] ${question.text} → ${answer.sentences.join(' ')}`);
          }
          continue;
        }
        if (results.some((result) => articleOf.get(result.document_id)?.id === question.article)) retrieved++;
        const ok = answer.found && question.facts.some((fact) => said.includes(comparable(fact)));
        if (ok) right[question.kind as 'lexical' | 'reworded']++;
        else
          misses.push(
            `[${lang} ${question.kind}] ${question.text} → ${answer.found ? answer.sentences.join(' ') : '(not found)'}${fallback ? ' [fallback]' : ''}`,
          );
      }
      const half = questions.length / 2;
      overall[lang] = (100 * (right.lexical + right.reworded)) / questions.length;
      console.log(
        `| ${lang} | ${questions.length} + ${unanswerable.length} | ${percent(right.lexical, half)} | ${percent(right.reworded, half)} | ${percent(right.lexical + right.reworded, questions.length)} | ${percent(retrieved, questions.length)} | ${fallbacks} of ${questions.length + unanswerable.length} | ${falseAnswers} of ${unanswerable.length} |`,
      );
    }
    const gaps = MULTILINGUAL_LANGUAGES.filter((lang) => lang !== 'en').map(
      (lang) => `${lang} ${(overall[lang]! - overall.en!).toFixed(1)}`,
    );
    console.log(`right fact against English (points): ${gaps.join(', ')}`);
    if (values.list) console.log(misses.map((miss) => `  ${miss}`).join('\n'));
  } finally {
    await app.close();
    await container.close();
    await database.drop();
  }
}

await main();
