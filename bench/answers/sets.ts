/**
 * Question sets the answer benches share, with passages as a search would hand them and no
 * database: each question gets its gold passage plus the three other passages BM25 ranks highest
 * for it, and again without the gold passage (any answer then is a false one).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { normalizeArabic, type KbPassage } from '../../src/modules/chat/chat.kb-responder.js';
import { comparable as factText } from './comparable.js';
import { FRESH_ARTICLES, FRESH_QUESTIONS, FRESH_UNANSWERABLE } from './fresh-set.js';
import { ARTICLES, QUESTIONS, UNANSWERABLE, type Article, type Question } from './help-centre.js';

const DATASETS = process.env.DATASETS_DIR ?? path.resolve(import.meta.dirname, '../../../shared/datasets');

export interface Doc {
  id: string;
  title: string;
  text: string;
}

export interface Case {
  query: string;
  /** Gold + 3 nearest, in BM25 order (null: the question has no gold). */
  withGold: KbPassage[] | null;
  /** The 3 (or 4, without gold) nearest others. */
  without: KbPassage[];
  /** Whether an answer's sentences are right. */
  right(sentences: string[]): boolean;
}

const comparable = (text: string) =>
  normalizeArabic(text.normalize('NFKC').toLowerCase())
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
const words = (text: string) =>
  comparable(text)
    .split(' ')
    .filter((word) => word.length > 1);

/** Okapi BM25 (k1 1.2, b 0.75) on unstemmed words, every document id best first. */
export function bm25(docs: Doc[]): (query: string) => string[] {
  const counts = docs.map((doc) => {
    const terms = words(`${doc.title} ${doc.text}`);
    const tf = new Map<string, number>();
    for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + 1);
    return { id: doc.id, tf, length: terms.length };
  });
  const df = new Map<string, number>();
  for (const { tf } of counts) for (const term of tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  const average = counts.reduce((sum, doc) => sum + doc.length, 0) / counts.length;
  return (query) => {
    const terms = [...new Set(words(query))];
    return counts
      .map(({ id, tf, length }) => ({
        id,
        score: terms.reduce((sum, term) => {
          const f = tf.get(term) ?? 0;
          const idf = Math.log(1 + (counts.length - (df.get(term) ?? 0) + 0.5) / ((df.get(term) ?? 0) + 0.5));
          return sum + (f === 0 ? 0 : (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * length) / average)));
        }, 0),
      }))
      .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
      .map((doc) => doc.id);
  };
}

function cases(docs: Doc[], questions: { text: string; gold: string | null; right: Case['right'] }[]): Case[] {
  const index = bm25(docs);
  const byId = new Map(docs.map((doc) => [doc.id, doc]));
  const passages = (ids: string[]): KbPassage[] =>
    ids.map((id) => {
      const doc = byId.get(id)!;
      return { chunk_id: id, document_id: id, title: doc.title, collection_id: null, text: doc.text, score: 1 };
    });
  return questions.map((question) => {
    const ranking = index(question.text);
    const others = ranking.filter((id) => id !== question.gold);
    return {
      query: question.text,
      withGold: question.gold
        ? passages(ranking.filter((id) => id === question.gold || others.slice(0, 3).includes(id)))
        : null,
      without: passages(others.slice(0, question.gold ? 3 : 4)),
      right: question.right,
    };
  });
}

/** ARCD (Arabic reading comprehension): right = the sentences hold an answer span. */
export function arcdCases(split: 'train' | 'test'): Case[] {
  type Squad = {
    data: {
      title: string;
      paragraphs: { context: string; qas: { question: string; answers: { text: string }[] }[] }[];
    }[];
  };
  const data = JSON.parse(readFileSync(path.join(DATASETS, 'arcd', `arcd-${split}.json`), 'utf8')) as Squad;
  const docs: Doc[] = [];
  const questions: Parameters<typeof cases>[1] = [];
  data.data.forEach((article, a) =>
    article.paragraphs.forEach((paragraph, p) => {
      const id = `${a}-${p}`;
      docs.push({ id, title: article.title, text: paragraph.context.replace(/\s+/g, ' ').trim() });
      for (const qa of paragraph.qas) {
        const spans = qa.answers.map((answer) => comparable(answer.text));
        questions.push({
          text: qa.question,
          gold: id,
          right: (sentences) => spans.some((span) => comparable(sentences.join(' ')).includes(span)),
        });
      }
    }),
  );
  return cases(docs, questions);
}

/** The development set of help-centre.ts, one split: right = the sentences hold the question's fact. */
export function helpCentreCases(split: 'dev' | 'held-out'): Case[] {
  const questions = [...QUESTIONS, ...UNANSWERABLE].filter(
    (question) => (question.split ?? ARTICLES.find((article) => article.id === question.article)!.split) === split,
  );
  return factCases(ARTICLES, questions);
}

/** The fresh held-out set of fresh-set.ts (a fitness-club help centre); never tuned on. */
export function freshCases(): Case[] {
  return factCases(FRESH_ARTICLES, [...FRESH_QUESTIONS, ...FRESH_UNANSWERABLE]);
}

function factCases(articles: Article[], questions: Question[]): Case[] {
  return cases(
    articles,
    questions.map((question) => ({
      text: question.text,
      gold: question.article,
      right: (sentences) => question.facts.some((fact) => factText(sentences.join(' ')).includes(factText(fact))),
    })),
  );
}
