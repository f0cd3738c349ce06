/**
 * Calibrates the built-in responder's found decision: a logistic regression of "the best-supported
 * sentence is a right answer" on its evidence (support, own and passage coverage, share of the
 * question's terms, close pairs, margin over the other passages, 1 / terms, a missing answer type,
 * the sliding window's coverage: the keys of ANSWER_RULES.confidence.weights), fitted on ARCD's
 * train split and the development split of bench/answers (with their gold passage: right or not;
 * without it: never right). ARCD test and the held-out split are not used here.
 *
 *   npx tsx bench/answers/calibrate.ts
 *
 * Prints the coefficients for ANSWER_RULES.confidence in src/modules/chat/chat.kb-responder.ts.
 * The fitted bias is the model's; the shipped bias is set from the trade-off curve
 * (bench/answers/curve.ts).
 */
import { ANSWER_RULES, answerEvidence, type AnswerEvidence } from '../../src/modules/chat/chat.kb-responder.js';
import { arcdCases, helpCentreCases, type Case } from './sets.js';

const KEYS = Object.keys(ANSWER_RULES.confidence.weights) as (keyof AnswerEvidence)[];

function examples(cases: Case[], weight: number): { x: number[]; y: number; w: number }[] {
  const out: { x: number[]; y: number; w: number }[] = [];
  for (const item of cases) {
    for (const [passages, gold] of [
      [item.withGold, true],
      [item.without, false],
    ] as const) {
      if (!passages) continue;
      const found = answerEvidence(item.query, passages);
      if (!found) continue;
      out.push({
        x: KEYS.map((key) => found.evidence[key]),
        y: gold && item.right([found.text]) ? 1 : 0,
        w: weight,
      });
    }
  }
  return out;
}

const arcd = examples(arcdCases('train'), 1);
const help = examples(helpCentreCases('dev'), arcd.length / 100 / 3);
const data = [...arcd, ...help];
// Gradient descent on the weighted log-loss with a little L2.
let bias = 0;
const w = KEYS.map(() => 0);
const rate = 0.5;
const total = data.reduce((sum, row) => sum + row.w, 0);
for (let step = 0; step < 4000; step++) {
  let gb = 0;
  const gw = KEYS.map(() => 0);
  for (const { x, y, w: weight } of data) {
    const z = bias + x.reduce((sum, value, i) => sum + value * w[i]!, 0);
    const error = (1 / (1 + Math.exp(-z)) - y) * weight;
    gb += error;
    x.forEach((value, i) => (gw[i]! += error * value));
  }
  bias -= (rate * gb) / total;
  w.forEach((_, i) => (w[i]! -= rate * (gw[i]! / total + 0.001 * w[i]!)));
}
console.log(`${data.length} examples (${arcd.length} ARCD train, ${help.length} help-centre dev)`);
console.log(
  JSON.stringify({
    bias: Number(bias.toFixed(3)),
    weights: Object.fromEntries(KEYS.map((key, i) => [key, Number(w[i]!.toFixed(3))])),
  }),
);
