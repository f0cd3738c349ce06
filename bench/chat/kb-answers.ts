/**
 * The built-in `builtin:kb` responder's answers, measured on question sets: `answerFromKnowledge`
 * is called directly (no server, no database) with the passages a search would hand it.
 *
 *   npx tsx bench/chat/kb-answers.ts [--list]
 *
 * Sets: ARCD (Arabic reading comprehension; the rule was tuned on its train split, the test
 * split is reported apart as held out), Cranfield (English aeronautics abstracts with judged
 * relevant documents, no answer spans) and a hand-made English help centre (below). For each
 * question the passages are its gold passage plus the three other passages of the set that BM25
 * ranks highest for it (the hardest distractors, and the ones the knowledge search would return
 * next), in the search's order and, to check that the rule does not lean on that order, shuffled.
 * "Gold removed" asks the same question with the distractors only: the knowledge base no longer
 * holds the answer, so any answer is a false one. Off-topic questions get the four passages that
 * share most words with them.
 *
 * Answered correctly: ARCD, the sentences hold the answer span; Cranfield and the help centre,
 * they cite the gold document. Times are per call of the responder, with the passages' length.
 *
 * `--list` prints the hand-made set's questions that were missed or answered wrongly.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  answerFromKnowledge,
  normalizeArabic,
  type KbAnswer,
  type KbPassage,
} from '../../src/modules/chat/chat.kb-responder.js';
import { loadDataset } from '../retrieval/datasets.js';

const { values } = parseArgs({ options: { list: { type: 'boolean', default: false } } });

const DATASETS = process.env.DATASETS_DIR ?? path.resolve(import.meta.dirname, '../../../shared/datasets');
const DISTRACTORS = 3;

interface Doc {
  id: string;
  title: string;
  text: string;
}

interface Question {
  id: string;
  text: string;
  /** The passage that answers it; null for a question the knowledge base does not cover. */
  gold: string | null;
  /** Documents that must not serve as distractors (every document judged relevant). */
  relevant: ReadonlySet<string>;
  /** Whether a found answer is the right one. */
  correct(answer: KbAnswer): boolean;
}

interface QuestionSet {
  name: string;
  docs: Doc[];
  questions: Question[];
}

const cites = (id: string) => (answer: KbAnswer) => answer.citations.some((citation) => citation.document_id === id);

/** Text as compared for answer spans: the responder's Arabic normalisation, punctuation as spaces. */
function comparable(text: string): string {
  return normalizeArabic(text.normalize('NFKC').toLowerCase())
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

async function arcd(split: 'train' | 'test'): Promise<QuestionSet> {
  type Squad = {
    data: {
      title: string;
      paragraphs: { context: string; qas: { id: string; question: string; answers: { text: string }[] }[] }[];
    }[];
  };
  const data = JSON.parse(await readFile(path.join(DATASETS, 'arcd', `arcd-${split}.json`), 'utf8')) as Squad;
  const docs: Doc[] = [];
  const questions: Question[] = [];
  data.data.forEach((article, a) =>
    article.paragraphs.forEach((paragraph, p) => {
      const id = `${a}-${p}`;
      docs.push({ id, title: article.title, text: paragraph.context });
      for (const qa of paragraph.qas) {
        const spans = qa.answers.map((answer) => comparable(answer.text));
        questions.push({
          id: qa.id,
          text: qa.question,
          gold: id,
          relevant: new Set([id]),
          correct: (answer) => spans.some((span) => comparable(answer.sentences.join(' ')).includes(span)),
        });
      }
    }),
  );
  return { name: `ARCD ${split} (ar)`, docs, questions };
}

/**
 * Cranfield's text is all lower case, which no sentence splitter reads as sentences; sentence
 * starts are capitalised so that the responder sees the sentences an ordinary document has.
 */
function sentenceCase(text: string): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/(^|[.?!] )([a-z])/g, (_, boundary: string, letter: string) => boundary + letter.toUpperCase());
}

async function cranfield(): Promise<QuestionSet> {
  const dataset = await loadDataset('cranfield');
  const docs = dataset.corpus
    .filter((doc) => doc.text)
    .map((doc) => ({ id: doc.id, title: sentenceCase(doc.title), text: sentenceCase(doc.text) }));
  const index = bm25(docs);
  const questions: Question[] = [];
  for (const query of dataset.queries) {
    const relevant = new Set(dataset.qrels.get(query.id)?.keys() ?? []);
    // The relevant document the search ranks first is the one a chat turn would most likely get.
    const gold = index(query.text, query.id).find((id) => relevant.has(id));
    if (gold) questions.push({ id: query.id, text: sentenceCase(query.text), gold, relevant, correct: cites(gold) });
  }
  return { name: 'Cranfield (en)', docs, questions };
}

/**
 * Hand-made for this bench (not from a dataset): a small help centre as shops write them, most
 * articles in prose, some as Q/A pairs, and customers' questions as they type them, many worded
 * unlike the article that answers them. Written before the rule was tuned and not changed after.
 */
const HELP_CENTRE: Doc[] = [
  {
    id: 'refunds',
    title: 'Refund policy',
    text: 'Refunds are issued to the original card within 5 business days once we receive the returned item. If you paid with store credit, the refund is added to your account instantly. Refunds by bank transfer reach your account within 10 business days.',
  },
  {
    id: 'returns',
    title: 'Returns',
    text: 'You can return most items within 30 days of delivery for a full refund. Items must be unused and in their original packaging. Sale items and gift cards cannot be returned. To start a return, open the order in your account and choose Return item.',
  },
  {
    id: 'delivery-times',
    title: 'Delivery times',
    text: 'Standard shipping takes 3 to 5 business days within the country. Express shipping delivers the next business day for orders placed before 2 pm. We ship to all GCC countries; orders to addresses outside the GCC are not supported yet.',
  },
  {
    id: 'shipping-costs',
    title: 'Shipping costs',
    text: 'Standard shipping is free on orders over 200 SAR; below that it costs 15 SAR. Express shipping costs 30 SAR whatever the order value.',
  },
  {
    id: 'tracking',
    title: 'Tracking your order',
    text: "Once your order leaves our warehouse we email you a tracking number. You can follow the parcel from the Orders page or on the courier's website. Tracking details may take up to 24 hours to update after dispatch.",
  },
  {
    id: 'cancel',
    title: 'Cancelling an order',
    text: 'Q: Can I cancel my order?\nA: You can cancel an order free of charge until it has been dispatched. Open the order and press Cancel order. Once dispatched, an order can no longer be cancelled, but you can return it after delivery.',
  },
  {
    id: 'password',
    title: 'Resetting your password',
    text: 'To reset your password, click Forgot password on the sign-in page and enter your email address. We send a reset link that stays valid for one hour. If the email does not arrive, check your spam folder.',
  },
  {
    id: 'two-factor',
    title: 'Two-factor authentication',
    text: 'Q: How do I turn on two-factor authentication?\nA: Go to Settings, then Security, and enable Two-factor authentication. Scan the QR code with an authenticator app such as Google Authenticator. Keep your backup codes somewhere safe in case you lose your phone.',
  },
  {
    id: 'invoices',
    title: 'Invoices',
    text: 'An invoice is created automatically for every order and includes VAT. You can download invoices as PDF files from the Billing section of your account. If you need the invoice under a company name or VAT number, add them in Billing details before placing the order.',
  },
  {
    id: 'payment',
    title: 'Payment methods',
    text: 'We accept Visa, Mastercard, American Express, Apple Pay and mada cards. Cash on delivery is available for orders under 1,000 SAR in Saudi Arabia. Payments are processed securely and we never store your full card number.',
  },
  {
    id: 'profile',
    title: 'Your profile',
    text: 'You can change your email address, phone number and name on the Profile page. A confirmation link is sent to the new email address before the change takes effect.',
  },
  {
    id: 'delete-account',
    title: 'Deleting your account',
    text: 'Q: How do I delete my account?\nA: Send a deletion request from Settings > Privacy. We delete your account and personal data within 30 days; invoices are kept for as long as tax law requires.',
  },
  {
    id: 'plans',
    title: 'Subscription plans',
    text: 'You can upgrade or downgrade your subscription plan at any time from the Billing page. Upgrades take effect immediately and are charged pro rata. Downgrades apply from the start of the next billing cycle.',
  },
  {
    id: 'gift-cards',
    title: 'Gift cards',
    text: 'Gift cards are valid for 3 years from the date of purchase and can be used online or in our stores. A gift card cannot be exchanged for cash. Lost gift cards can be replaced if you still have the purchase receipt.',
  },
  {
    id: 'warranty',
    title: 'Warranty and damaged items',
    text: 'All electronics come with a two-year manufacturer warranty. If your item arrived damaged, contact us within 7 days with a photo of the damage and we will send a replacement at no cost.',
  },
  {
    id: 'support',
    title: 'Contacting support',
    text: 'Our support team is available Sunday to Thursday, 9 am to 6 pm Riyadh time, by chat and by email at support@example.com.',
  },
];

const HELP_QUESTIONS: [question: string, article: string | null][] = [
  ['How long do refunds take?', 'refunds'],
  ['When will I get my money back?', 'refunds'],
  ['I sent the item back, when is the refund issued?', 'refunds'],
  ['How long does a refund by bank transfer take?', 'refunds'],
  ['Can I return a sale item?', 'returns'],
  ['What is your return policy?', 'returns'],
  ['How many days do I have to send something back?', 'returns'],
  ['How do I start a return?', 'returns'],
  ['How long does delivery take?', 'delivery-times'],
  ['Do you ship outside the GCC?', 'delivery-times'],
  ['How fast is express shipping?', 'delivery-times'],
  ['How much does shipping cost?', 'shipping-costs'],
  ['Is shipping free?', 'shipping-costs'],
  ['What is the minimum order for free shipping?', 'shipping-costs'],
  ['Where is my order?', 'tracking'],
  ['How can I track my parcel?', 'tracking'],
  ['My tracking number is not updating', 'tracking'],
  ['Can I cancel my order?', 'cancel'],
  ['How do I cancel an order that was already dispatched?', 'cancel'],
  ['I want to cancel my purchase', 'cancel'],
  ['I forgot my password', 'password'],
  ['How do I reset my password?', 'password'],
  ['The password reset email never arrived', 'password'],
  ['How do I enable two-factor authentication?', 'two-factor'],
  ['I lost my phone, how do I sign in with my backup codes?', 'two-factor'],
  ['Can I use Google Authenticator?', 'two-factor'],
  ['Where can I download my invoice?', 'invoices'],
  ['Do your invoices include VAT?', 'invoices'],
  ['Can I get an invoice with my company name?', 'invoices'],
  ['Which payment methods do you accept?', 'payment'],
  ['Can I pay cash on delivery?', 'payment'],
  ['Do you take Apple Pay?', 'payment'],
  ['How do I change my email address?', 'profile'],
  ['Can I update my phone number?', 'profile'],
  ['How can I close my account?', 'delete-account'],
  ['Do you delete my personal data?', 'delete-account'],
  ['How do I upgrade my plan?', 'plans'],
  ['When does a downgrade take effect?', 'plans'],
  ['Do gift cards expire?', 'gift-cards'],
  ['Can I exchange a gift card for cash?', 'gift-cards'],
  ['My item arrived broken, what should I do?', 'warranty'],
  ['How long is the warranty on electronics?', 'warranty'],
  ['What are your customer service hours?', 'support'],
  ['How can I contact support?', 'support'],
  ['What is the weather in Riyadh tomorrow?', null],
  ['Who won the football match last night?', null],
  ['Can you recommend a recipe for chicken biryani?', null],
  ['What is the capital of Japan?', null],
  ['Are you hiring software engineers?', null],
  ['What is your share price?', null],
  ['Do you sell used cars?', null],
  ['How do I renew my passport?', null],
  ['What time does the pharmacy open?', null],
  ['Can you translate this sentence into French?', null],
  ['How many calories are in a banana?', null],
  ['Is there a student discount?', null],
  ['Do you install air conditioners?', null],
  ['Where is your nearest store in Cairo?', null],
  ['Can I pay my electricity bill here?', null],
  ['What is the meaning of life?', null],
];

function helpCentre(): QuestionSet {
  const questions = HELP_QUESTIONS.map(([text, article], index): Question => ({
    id: `faq-${index + 1}`,
    text,
    gold: article,
    relevant: new Set(article ? [article] : []),
    correct: article ? cites(article) : () => false,
  }));
  return { name: 'Help centre (en, hand-made)', docs: HELP_CENTRE, questions };
}

/** A seeded generator (mulberry32) so that every run draws the same shuffles. */
function random(seed: string): () => number {
  let state = [...seed].reduce((hash, char) => Math.imul(hash ^ char.charCodeAt(0), 16777619), 2166136261);
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], seed: string): T[] {
  const next = random(seed);
  const shuffled = [...items];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j] as T, shuffled[i] as T];
  }
  return shuffled;
}

/** Words for the bench's own ranking, unstemmed: the passages must not change with the responder's rule. */
function words(text: string): string[] {
  return comparable(text)
    .split(' ')
    .filter((word) => word.length > 1);
}

/**
 * Okapi BM25 (k1 1.2, b 0.75) over titles and texts, as the knowledge search's full-text lane
 * ranks chunks. Returns every document id, best first; ties (e.g. no shared word) in a seeded order.
 */
function bm25(docs: Doc[]): (query: string, seed: string) => string[] {
  const counts = docs.map((doc) => {
    const terms = words(`${doc.title} ${doc.text}`);
    const tf = new Map<string, number>();
    for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + 1);
    return { id: doc.id, tf, length: terms.length };
  });
  const df = new Map<string, number>();
  for (const { tf } of counts) for (const term of tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  const averageLength = counts.reduce((sum, doc) => sum + doc.length, 0) / counts.length;
  return (query, seed) => {
    const terms = [...new Set(words(query))];
    const scored = shuffle(counts, seed).map(({ id, tf, length }) => ({
      id,
      score: terms.reduce((sum, term) => {
        const f = tf.get(term) ?? 0;
        const n = df.get(term) ?? 0;
        const idf = Math.log(1 + (counts.length - n + 0.5) / (n + 0.5));
        return sum + (f === 0 ? 0 : (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * length) / averageLength)));
      }, 0),
    }));
    return scored.sort((a, b) => b.score - a.score).map((doc) => doc.id);
  };
}

type Order = 'search order' | 'shuffled';

interface Tally {
  questions: number;
  correct: number;
  found: number;
  goldRemoved: number;
  falseWithoutGold: number;
  offTopic: number;
  falseOffTopic: number;
  /** Time of each call, and the length of the passages' text it was given. */
  micros: number[];
  characters: number[];
  misses: string[];
}

function timed(query: string, passages: KbPassage[], tally: Tally): KbAnswer {
  const start = performance.now();
  const answer = answerFromKnowledge(query, passages);
  tally.micros.push((performance.now() - start) * 1000);
  tally.characters.push(passages.reduce((sum, passage) => sum + passage.text.length, 0));
  return answer;
}

/** Passages as the search returns them: text with its whitespace collapsed, as chunks are stored. */
function toPassages(ids: string[], byId: Map<string, Doc>, order: Order, seed: string): KbPassage[] {
  const passages = ids.map((id, rank): KbPassage => {
    const doc = byId.get(id) as Doc;
    const score = order === 'search order' ? 1 / (61 + rank) : 0;
    return {
      chunk_id: id,
      document_id: id,
      title: doc.title,
      collection_id: null,
      text: doc.text.replace(/\s+/g, ' ').trim(),
      score,
    };
  });
  return order === 'search order' ? passages : shuffle(passages, seed);
}

function evaluate(set: QuestionSet, order: Order): Tally {
  const index = bm25(set.docs);
  const byId = new Map(set.docs.map((doc) => [doc.id, doc]));
  const tally: Tally = {
    questions: 0,
    correct: 0,
    found: 0,
    goldRemoved: 0,
    falseWithoutGold: 0,
    offTopic: 0,
    falseOffTopic: 0,
    micros: [],
    characters: [],
    misses: [],
  };
  for (const question of set.questions) {
    const ranking = index(question.text, question.id);
    const distractors = ranking.filter((id) => !question.relevant.has(id)).slice(0, DISTRACTORS);
    if (!question.gold) {
      tally.offTopic++;
      const answer = timed(
        question.text,
        toPassages(ranking.slice(0, DISTRACTORS + 1), byId, order, question.id),
        tally,
      );
      if (answer.found) {
        tally.falseOffTopic++;
        tally.misses.push(`off-topic, answered: ${question.text} → ${answer.sentences.join(' ')}`);
      }
      continue;
    }
    const gold = question.gold;
    const withGold = ranking.filter((id) => id === gold || distractors.includes(id));
    const answer = timed(question.text, toPassages(withGold, byId, order, question.id), tally);
    tally.questions++;
    if (answer.found) tally.found++;
    if (answer.found && question.correct(answer)) tally.correct++;
    else
      tally.misses.push(
        `${answer.found ? 'wrong' : 'not found'}: ${question.text}${answer.found ? ` → ${answer.sentences.join(' ')}` : ''}`,
      );
    tally.goldRemoved++;
    if (timed(question.text, toPassages(distractors, byId, order, question.id), tally).found) tally.falseWithoutGold++;
  }
  return tally;
}

const percent = (part: number, whole: number) => (whole ? `${((100 * part) / whole).toFixed(1)} %` : '–');
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

function row(name: string, tally: Tally): string {
  const micros = [...tally.micros].sort((a, b) => a - b);
  const p99 = micros[Math.min(micros.length - 1, Math.floor(0.99 * micros.length))] ?? 0;
  const wrong = tally.found - tally.correct;
  const offTopic = tally.offTopic ? `${percent(tally.falseOffTopic, tally.offTopic)} of ${tally.offTopic}` : '–';
  return (
    `| ${name} | ${tally.questions} | ${percent(tally.correct, tally.questions)} | ${percent(tally.found, tally.questions)} | ${percent(wrong, tally.found)} | ` +
    `${percent(tally.falseWithoutGold, tally.goldRemoved)} | ${offTopic} | ${mean(tally.micros).toFixed(0)} / ${p99.toFixed(0)} | ${mean(tally.characters).toFixed(0)} |`
  );
}

async function main() {
  const sets = [await arcd('train'), await arcd('test'), await cranfield(), helpCentre()];
  // One untimed pass first, so that the times are not the compiler's or the segmenters' start-up.
  for (const set of sets) evaluate(set, 'shuffled');
  for (const order of ['search order', 'shuffled'] as const) {
    console.log(`\nPassages: gold + ${DISTRACTORS} BM25-nearest others, ${order}.\n`);
    console.log(
      '| set | questions | answered correctly | found | wrong when found | false answers, gold removed | false answers, off-topic questions | µs per call, mean / p99 | characters per call |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const set of sets) {
      const tally = evaluate(set, order);
      console.log(row(set.name, tally));
      if (values.list && set.docs === HELP_CENTRE && order === 'search order')
        console.log(tally.misses.map((miss) => `    ${miss}`).join('\n'));
    }
  }
}

await main();
