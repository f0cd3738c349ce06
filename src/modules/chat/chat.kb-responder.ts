/**
 * The built-in `builtin:kb` responder: answers from the knowledge base with no language model.
 * It picks the best-supported sentences of the retrieved chunks (weighted overlap of the
 * question's content words, Arabic and English normalised and lightly stemmed, with the chunk the
 * sentence stands in), cites the chunks they came from, and says so when nothing relevant was
 * found. FAQ-shaped text is understood: a question line that matches lends its score to the answer
 * after it (the title to the first sentence, a document's alternative questions to every one). A
 * question's word counts as present through its support-domain equivalents (knowledge's lexicon).
 * Whether anything was found is decided by a logistic model of the best sentence's evidence
 * (ANSWER_RULES), which counts against a sentence that lacks the kind of answer the question asks
 * for (a number, a place…: chat.answer-types.ts) and for one whose passage holds the question's
 * words close together (a sliding window). Measured by bench/chat/kb-answers.ts and
 * bench/answers/run.ts; the trade-off of right against false answers by bench/answers/curve.ts.
 */
import { contentTerms, expandTerms, normalizeArabic } from '../knowledge/index.js';
import { answerTypeOf } from './chat.answer-types.js';
import { languageOf, passageLanguage, questionLanguage, type Language } from './chat.kb-language.js';
import type { Citation } from './chat.tables.js';

export interface KbPassage {
  chunk_id: string;
  document_id: string;
  title: string;
  collection_id: string | null;
  text: string;
  score: number;
  /** The document's alternative questions (FAQ mode), when it has some. */
  questions?: string[];
  /** The document's language (ISO 639-1), as the search reports it; told from the text when absent. */
  language?: string | null;
}

export { languageOf, questionLanguage, type Language };

export interface KbAnswer {
  /** The answer as sentences, in the order they should be shown. */
  sentences: string[];
  citations: Citation[];
  /** True when the knowledge base supported an answer. */
  found: boolean;
  language: Language;
}

const MAX_SENTENCES = 3;

/** The rule's settings (bench/chat/kb-answers.ts and bench/answers measure them). */
export interface AnswerRules {
  /** Support a sentence needs to count. */
  minSupport: number;
  /** Share of a sentence's support that is its own coverage of the question (the rest: its passage's). */
  ownShare: number;
  /** A term no passage holds weighs at most this times the heaviest term they hold. */
  absentCap: number;
  /** Sentences this close to the best one are shown with it. */
  nearBest: number;
  /** The found decision: a logistic model of the best sentence's evidence (bench/answers/calibrate.ts). */
  confidence: { bias: number; weights: Record<keyof AnswerEvidence, number> };
}

export const ANSWER_RULES: AnswerRules = {
  minSupport: 0.45,
  ownShare: 0.5,
  absentCap: 0.7,
  nearBest: 0.75,
  // Fitted by bench/answers/calibrate.ts; the bias set for few false answers (docs/decisions.md).
  confidence: {
    bias: -2.35,
    weights: {
      support: 0.476,
      own: 0.593,
      context: 0.36,
      share: 1.552,
      pairs: 0.282,
      margin: 1.174,
      inverseTerms: -2.398,
      untyped: -1.152,
      window: 1.345,
    },
  },
};

export { contentTerms, normalizeArabic };

const segmenters = new Map<string, Intl.Segmenter>();
function splitSentences(text: string, language: Language): string[] {
  let segmenter = segmenters.get(language);
  if (!segmenter) {
    segmenter = new Intl.Segmenter(language, { granularity: 'sentence' });
    segmenters.set(language, segmenter);
  }
  const sentences: string[] = [];
  for (const line of text.split(/\n+/)) {
    for (const { segment } of segmenter.segment(line)) {
      const sentence = segment.replace(/\s+/g, ' ').trim();
      if (sentence) sentences.push(sentence);
    }
  }
  return sentences;
}

const isQuestion = (sentence: string) => /[?؟]\s*$/.test(sentence);
/** FAQ labels such as "Q:", "A:", "س:", "ج:" are dropped from answers. */
const stripLabel = (sentence: string) => sentence.replace(/^(?:q|a|question|answer|س|ج|سؤال|جواب)\s*[:：\-–]\s*/i, '');

/** Stands among a question's terms for "a number" when the question asks how long, how many, when… */
const NUMBER = '#number';
const ASKS_NUMBER =
  /\b(?:how (?:long|many|much|often|soon)|when)\b|(?<!\p{L})(?:كم|متي|combien|quand|wie (?:lange|viele?|oft)|wann|wieviel|cu[aá]nt[oa]s?|cu[aá]ndo|quant[oa]s?|quando)(?!\p{L})/iu;
/**
 * Words that only frame such a question ("how long does it take", "when will it arrive"): they
 * name no topic, and an answer need not repeat them.
 */
const FRAMING =
  /\b(?:how (?:long|often|soon)|when)\b|(?<!\p{L})(?:combien de temps|quand|wie lange|wie oft|wann|cu[aá]nto tiempo|cu[aá]ndo|quanto tempo|quando)(?!\p{L})/iu;
const FRAMING_WORDS: Record<Language, string> = {
  en: 'long often soon take takes took taken taking arrive arrives arrived arriving',
  ar: '',
  fr: 'temps longtemps faut prend prendre durée arrive arriver arrivera',
  de: 'lange dauert dauern dauerte oft ankommen kommt kommen',
  es: 'tiempo tarda tardan tardar demora demoran llega llegan llegar',
  pt: 'tempo demora demoram demorar leva levam levar chega chegam chegar',
  it: 'tempo ci vuole vogliono impiega richiede arriva arrivano arrivare',
};
const FRAMING_TERMS = new Set(
  (Object.entries(FRAMING_WORDS) as [Language, string][]).flatMap(([language, list]) => contentTerms(list, language)),
);
/** Number words, for answers that spell their numbers out. */
const NUMBER_WORDS: Record<Language, string> = {
  en: 'one two three four five six seven eight nine ten eleven twelve twenty thirty hundred thousand million',
  ar: 'واحد اثنان اثنين اثني ثلاث ثلاثة أربع أربعة خمس خمسة ست ستة سبع سبعة ثماني ثمانية تسع تسعة عشر عشرة عشرون عشرين مئة مائة ألف مليون',
  fr: 'un une deux trois quatre cinq six sept huit neuf dix onze douze quinze vingt trente cent mille million',
  de: 'ein eine eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf zwanzig dreißig hundert tausend million',
  es: 'uno una dos tres cuatro cinco seis siete ocho nueve diez once doce quince veinte treinta cien mil millón',
  pt: 'um uma dois duas três quatro cinco seis sete oito nove dez onze doze quinze vinte trinta cem mil milhão',
  it: 'uno una due tre quattro cinque sei sette otto nove dieci undici dodici quindici venti trenta cento mille milione',
};
const NUMBER_TERMS = new Set(
  (Object.entries(NUMBER_WORDS) as [Language, string][]).flatMap(([language, list]) =>
    list.split(' ').flatMap((word) => (contentTerms(word, language).length ? contentTerms(word, language) : [word])),
  ),
);
function hasNumber(text: string, terms: ReadonlySet<string>): boolean {
  if (/\p{Nd}/u.test(text)) return true;
  for (const term of NUMBER_TERMS) if (terms.has(term)) return true;
  return false;
}

/**
 * The terms a sentence must hold: the question's content words, less the words that only frame a
 * question for a quantity, plus NUMBER for such a question (its answer holds a number). None when
 * the question names nothing to look for.
 */
function questionTerms(query: string, language: Language): string[] {
  let terms = [...new Set(contentTerms(query, language))];
  if (FRAMING.test(query)) terms = terms.filter((term) => !FRAMING_TERMS.has(term));
  if (terms.length > 0 && ASKS_NUMBER.test(normalizeArabic(query))) terms.push(NUMBER);
  return terms;
}

interface Sentence {
  text: string;
  terms: Set<string>;
  /** Its terms in order. */
  sequence: string[];
}

interface Candidate {
  passage: number;
  position: number;
  text: string;
  support: number;
  /** Its own coverage of the question (or its FAQ question line's), and its passage's. */
  own: number;
  context: number;
  /** Unweighted share of the question's terms it holds, and of their neighbouring pairs it holds close together. */
  share: number;
  pairs: number;
  /** Whether it holds the answer type the question expects (false when the question expects none). */
  typed: boolean;
  /** The sliding window's coverage of the question around it (windowScores). */
  window: number;
}

/**
 * MCTest's sliding window (Richardson, Burges and Renshaw, 2013), per sentence: the best
 * IDF-weighted coverage of the question by a run of the passage's terms (as many as the question
 * has, plus WINDOW_SLACK) that overlaps the sentence. It sees a question's words that an answer
 * spreads over two neighbouring sentences, and how close together they stand.
 */
const WINDOW_SLACK = 8;
function windowScores(
  sentences: Sentence[],
  queryTerms: string[],
  weight: ReadonlyMap<string, number>,
  standsFor: ReadonlyMap<string, string[]>,
): number[] {
  const tokens: { sentence: number; matches: string[] }[] = [];
  sentences.forEach((sentence, index) => {
    for (const term of sentence.sequence) tokens.push({ sentence: index, matches: standsFor.get(term) ?? [] });
  });
  const total = queryTerms.reduce((sum, term) => sum + (weight.get(term) ?? 0), 0) || 1;
  const size = Math.min(tokens.length, queryTerms.length + WINDOW_SLACK);
  const best = sentences.map(() => 0);
  // The window slides one term at a time; the weight of the question's terms it holds is kept
  // up to date from the term that enters and the one that leaves.
  const inWindow = new Map<string, number>();
  let held = 0;
  const enter = (index: number, step: 1 | -1) => {
    for (const term of tokens[index]!.matches) {
      const count = (inWindow.get(term) ?? 0) + step;
      inWindow.set(term, count);
      if (count === (step === 1 ? 1 : 0)) held += step * (weight.get(term) ?? 0);
    }
  };
  for (let end = 0; end < tokens.length; end++) {
    enter(end, 1);
    if (end >= size) enter(end - size, -1);
    if (end < size - 1) continue;
    const score = held / total;
    for (let sentence = tokens[end - size + 1]!.sentence; sentence <= tokens[end]!.sentence; sentence++)
      best[sentence] = Math.max(best[sentence]!, score);
  }
  return best;
}

/**
 * Share of the question's neighbouring term pairs that stand within three words of each other in
 * a sentence (word order is evidence that the sentence says what the question asks).
 */
function closePairs(queryTerms: string[], sequence: string[]): number {
  if (queryTerms.length < 2) return 0;
  const at = new Map<string, number[]>();
  sequence.forEach((term, index) => at.set(term, [...(at.get(term) ?? []), index]));
  let close = 0;
  for (let i = 1; i < queryTerms.length; i++) {
    const a = at.get(queryTerms[i - 1]!);
    const b = at.get(queryTerms[i]!);
    if (a && b && a.some((x) => b.some((y) => x !== y && Math.abs(x - y) <= 3))) close++;
  }
  return close / (queryTerms.length - 1);
}

/** Whether a sentence's terms hold a question's term, itself or one of its equivalents. */
type Holds = (terms: ReadonlySet<string>, term: string) => boolean;

/** Arabic one-letter proclitics (bi-, li-, ka-) the light stemmer keeps: "بضمان" holds "ضمان". */
const PROCLITICS = ['ب', 'ل', 'ك'];
const ARABIC_TERM = /^[\u0600-\u06FF]{3,}$/;

interface Matching {
  holds: Holds;
  /** The question's terms a single sentence term stands for (itself, with a proclitic, or a one-word equivalent). */
  standsFor: ReadonlyMap<string, string[]>;
}

function matching(queryTerms: string[]): Matching {
  const terms = queryTerms.filter((term) => term !== NUMBER);
  const { alternatives } = expandTerms(terms);
  const holdsTerm = (held: ReadonlySet<string>, term: string) =>
    held.has(term) || (ARABIC_TERM.test(term) && PROCLITICS.some((letter) => held.has(letter + term)));
  const holds: Holds = (held, term) =>
    holdsTerm(held, term) ||
    (alternatives.get(term)?.some((sequence) => sequence.every((part) => holdsTerm(held, part))) ?? false);
  const standsFor = new Map<string, string[]>();
  const add = (word: string, term: string) => {
    const list = standsFor.get(word) ?? [];
    if (!list.includes(term)) standsFor.set(word, [...list, term]);
  };
  for (const term of terms) {
    const forms = [term, ...(alternatives.get(term) ?? []).filter((sequence) => sequence.length === 1).flat()];
    for (const form of forms) {
      add(form, term);
      if (ARABIC_TERM.test(form)) for (const letter of PROCLITICS) add(letter + form, term);
    }
  }
  return { holds, standsFor };
}

/**
 * Every answer sentence with its support: the mean of its own coverage of the question (or that
 * of the FAQ question line before it, if higher) and its passage's coverage (all its sentences
 * and its title). Coverage is the IDF-weighted share of the question's terms (a term counts as
 * present when one of its support-domain equivalents is), the IDF taken over the retrieved
 * sentences.
 */
function candidates(
  queryTerms: string[],
  type: ReturnType<typeof answerTypeOf>,
  passages: KbPassage[],
  split: Sentence[][],
  { holds, standsFor }: Matching,
  rules: AnswerRules,
): Candidate[] {
  const all = split.flat();
  const counted = queryTerms.map((term) => {
    const df = all.filter((sentence) => holds(sentence.terms, term)).length;
    return { term, df, weight: Math.log(1 + (all.length + 1) / (df + 1)) };
  });
  const heaviestPresent = Math.max(0, ...counted.filter(({ df }) => df > 0).map(({ weight }) => weight));
  const weight = new Map(
    counted.map(({ term, df, weight }) => [
      term,
      df === 0 && heaviestPresent > 0 ? Math.min(weight, heaviestPresent * rules.absentCap) : weight,
    ]),
  );
  const coverageOf = (terms: string[], has: (term: string) => boolean) => {
    const total = terms.reduce((sum, term) => sum + (weight.get(term) ?? 0), 0);
    return total ? terms.reduce((sum, term) => sum + (has(term) ? (weight.get(term) ?? 0) : 0), 0) / total : 1;
  };
  const coverage = (has: (term: string) => boolean) => coverageOf(queryTerms, has);

  const found: Candidate[] = [];
  split.forEach((sentences, passage) => {
    const titleText = (passages[passage] as KbPassage).title;
    const language = passageLanguage(passages[passage] as KbPassage);
    const titleTerms = contentTerms(titleText, language);
    const title = new Set(titleTerms);
    // The document's own questions read as question lines of every sentence of the passage.
    const asked = ((passages[passage] as KbPassage).questions ?? []).map((text): Sentence => {
      const sequence = contentTerms(text, language);
      return { text, terms: new Set(sequence), sequence };
    });
    const askedBest = asked.reduce<{ line: Sentence | null; own: number }>(
      (best, line) => {
        const own = coverage((term) => holds(line.terms, term));
        return own > best.own ? { line, own } : best;
      },
      { line: null, own: 0 },
    );
    const context = coverage(
      (term) =>
        holds(title, term) ||
        asked.some((line) => holds(line.terms, term)) ||
        sentences.some((sentence) => holds(sentence.terms, term)),
    );
    // The title reads as the question its first sentence answers, as an FAQ's question line does.
    let question: Sentence | null = { text: titleText, terms: title, sequence: titleTerms };
    let questionOwn = coverage((term) => holds(title, term));
    const windows = windowScores(
      sentences,
      queryTerms.filter((term) => term !== NUMBER),
      weight,
      standsFor,
    );
    sentences.forEach((sentence, position) => {
      const own = coverage((term) => holds(sentence.terms, term));
      if (isQuestion(sentence.text)) {
        if (own >= questionOwn) [question, questionOwn] = [sentence, own];
        return;
      }
      if (askedBest.own > questionOwn) [question, questionOwn] = [askedBest.line, askedBest.own];
      const evidence = questionOwn > own && question ? question : sentence;
      const text = stripLabel(sentence.text);
      if (text.length >= 2)
        found.push({
          passage,
          position,
          text,
          support: rules.ownShare * Math.max(own, questionOwn) + (1 - rules.ownShare) * context,
          own: Math.max(own, questionOwn),
          context,
          share: queryTerms.filter((term) => holds(evidence.terms, term)).length / queryTerms.length,
          pairs: closePairs(queryTerms, evidence.sequence),
          typed: type?.holds(text) ?? false,
          window: windows[position]!,
        });
      question = null;
      questionOwn = 0;
    });
  });
  return found;
}

/** The evidence the found decision weighs, of the best-supported sentence. */
export interface AnswerEvidence {
  support: number;
  own: number;
  context: number;
  share: number;
  pairs: number;
  /** Its passage's coverage less the best coverage of another passage. */
  margin: number;
  /** 1 / the number of the question's terms. */
  inverseTerms: number;
  /** 1 when the question expects an answer type (chat.answer-types.ts) the sentence does not hold. */
  untyped: number;
  /** Its sliding window's IDF-weighted coverage of the question (MCTest's lexical baseline). */
  window: number;
}

function evidence(top: Candidate, scored: Candidate[], terms: number, typed: boolean): AnswerEvidence {
  const others = scored.filter((candidate) => candidate.passage !== top.passage).map((candidate) => candidate.context);
  return {
    support: top.support,
    own: top.own,
    context: top.context,
    share: top.share,
    pairs: top.pairs,
    margin: top.context - Math.max(0, ...others),
    inverseTerms: 1 / terms,
    untyped: typed && !top.typed ? 1 : 0,
    window: top.window,
  };
}

/** The logistic score (log-odds) that the best sentence answers the question; an answer needs ≥ 0. */
function confidence(x: AnswerEvidence, rules: AnswerRules): number {
  const { bias, weights } = rules.confidence;
  return bias + (Object.keys(weights) as (keyof AnswerEvidence)[]).reduce((sum, key) => sum + weights[key] * x[key], 0);
}

/** The evidence of the best-supported sentence for `query` (null: no candidate), for the bench's calibration. */
export function answerEvidence(query: string, passages: KbPassage[], rules = ANSWER_RULES) {
  const found = scoreSentences(query, inLanguage(questionLanguage(query, passages), passages), rules);
  return found && { text: found.top.text, evidence: found.evidence };
}

/** Every candidate sentence scored, the best-supported one (the first of equals) and its evidence. */
function scoreSentences(query: string, passages: KbPassage[], rules: AnswerRules) {
  const queryTerms = questionTerms(query, languageOf(query));
  if (queryTerms.length === 0 || passages.length === 0) return null;
  const split = splitPassages(passages, queryTerms.includes(NUMBER));
  const type = answerTypeOf(query);
  const scored = candidates(queryTerms, type, passages, split, matching(queryTerms), rules);
  const top = scored.reduce<Candidate | null>((a, b) => (a && a.support >= b.support ? a : b), null);
  return top && { scored, top, evidence: evidence(top, scored, queryTerms.length, type !== null) };
}

function splitPassages(passages: KbPassage[], asksNumber: boolean): Sentence[][] {
  return passages.map((passage) => {
    const language = passageLanguage(passage);
    return splitSentences(passage.text, language).map((text): Sentence => {
      const sequence = contentTerms(text, language);
      const terms = new Set(sequence);
      if (asksNumber && hasNumber(text, terms)) terms.add(NUMBER);
      return { text, terms, sequence };
    });
  });
}

/**
 * The passages in the question's language when there are some (no answer from another language's
 * article when one in the customer's answers: Spanish and Portuguese articles share many words),
 * else all of them.
 */
function inLanguage(language: Language, passages: KbPassage[]): KbPassage[] {
  const own = passages.filter((passage) => passageLanguage(passage) === language);
  return own.length ? own : passages;
}

/** `history`: the customer's earlier messages of the conversation, oldest first (they tell its language). */
export function answerFromKnowledge(
  query: string,
  retrieved: KbPassage[],
  rules = ANSWER_RULES,
  history: readonly string[] = [],
): KbAnswer {
  const language = questionLanguage(query, retrieved, history);
  const passages = inLanguage(language, retrieved);
  const empty: KbAnswer = { sentences: [], citations: [], found: false, language };
  const found = scoreSentences(query, passages, rules);
  if (!found || found.top.support < rules.minSupport || confidence(found.evidence, rules) < 0) return empty;
  const { scored, top } = found;
  const seen = new Set<string>();
  const chosen = scored
    .filter((candidate) => candidate.support >= Math.max(rules.minSupport, top.support * rules.nearBest))
    .sort((a, b) => b.support - a.support || a.passage - b.passage || a.position - b.position)
    .filter((candidate) => {
      const key = candidate.text.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, MAX_SENTENCES)
    .sort((a, b) => a.passage - b.passage || a.position - b.position);

  const cited = [...new Set(chosen.map((candidate) => candidate.passage))];
  const citations = cited.map((index): Citation => {
    const passage = passages[index] as KbPassage;
    return {
      chunk_id: passage.chunk_id,
      document_id: passage.document_id,
      title: passage.title,
      collection_id: passage.collection_id,
      score: passage.score,
      text: passage.text.length > 500 ? `${passage.text.slice(0, 499)}…` : passage.text,
    };
  });
  return { sentences: chosen.map((candidate) => candidate.text), citations, found: true, language };
}

/** The responder's own sentences (not found, the offer of a person, hand-off, sources) in each language. */
export { phrases } from './chat.kb-phrases.js';

/** The user asks for a person rather than an answer. */
export { asksForHuman } from './chat.asks-for-person.js';
