/**
 * The found decision's trade-off curve: right answers against false answers as the bias of
 * ANSWER_RULES.confidence moves (weights unchanged), on the database-free sets of sets.ts —
 * each question with its gold passage plus the three passages BM25 ranks next, and again without
 * the gold (any answer then is false). Sets: ARCD train and test, the development set's two
 * splits (help-centre.ts), the fresh held-out set (fresh-set.ts).
 *
 *   npx tsx bench/answers/curve.ts [--biases -1.5,-2,-2.5,-3,-3.5]
 *
 * Per set and bias: right = found and the answer holds the span or fact (answerable questions,
 * gold present); gold removed = false answers to the same questions without their gold passage;
 * unanswerable = false answers to the questions no article answers (help-centre sets only).
 * The passages are not the knowledge search's (bench/answers/run.ts measures that end to end).
 */
import { parseArgs } from 'node:util';
import { ANSWER_RULES, answerFromKnowledge, type AnswerRules } from '../../src/modules/chat/chat.kb-responder.js';
import { arcdCases, freshCases, helpCentreCases, type Case } from './sets.js';

const { values } = parseArgs({ options: { biases: { type: 'string', default: '-1.5,-2,-2.35,-2.5,-3,-3.5,-4' } } });
const biases = values.biases.split(',').map(Number);
if (biases.some((bias) => !Number.isFinite(bias))) throw new Error(`--biases: numbers expected, got ${values.biases}`);

const percent = (part: number, whole: number) => (whole ? `${((100 * part) / whole).toFixed(1)} %` : '–');

function point(cases: Case[], rules: AnswerRules) {
  let answerable = 0;
  let right = 0;
  let goldRemoved = 0;
  let unanswerable = 0;
  let falseUnanswerable = 0;
  for (const item of cases) {
    const found = answerFromKnowledge(item.query, item.without, rules).found;
    if (item.withGold) {
      answerable++;
      const answer = answerFromKnowledge(item.query, item.withGold, rules);
      if (answer.found && item.right(answer.sentences)) right++;
      if (found) goldRemoved++;
    } else {
      unanswerable++;
      if (found) falseUnanswerable++;
    }
  }
  return (
    `${percent(right, answerable)} / ${percent(goldRemoved, answerable)}` +
    (unanswerable ? ` / ${falseUnanswerable} of ${unanswerable}` : '')
  );
}

const sets: [string, Case[]][] = [
  ['ARCD train', arcdCases('train')],
  ['ARCD test', arcdCases('test')],
  ['help dev split', helpCentreCases('dev')],
  ['help held-out split', helpCentreCases('held-out')],
  ['fresh set', freshCases()],
];
console.log(
  'Right / false with the gold removed (/ false on unanswerable questions), per bias of the found decision.\n',
);
console.log(`| bias | ${sets.map(([name]) => name).join(' | ')} |`);
console.log(`|---|${sets.map(() => '---').join('|')}|`);
for (const bias of biases) {
  const rules: AnswerRules = { ...ANSWER_RULES, confidence: { ...ANSWER_RULES.confidence, bias } };
  const mark = bias === ANSWER_RULES.confidence.bias ? ' (set)' : '';
  console.log(`| ${bias}${mark} | ${sets.map(([, cases]) => point(cases, rules)).join(' | ')} |`);
}
