/**
 * The built-in `builtin:kb` responder: answers from the knowledge base with no language model.
 * It picks the best-supported sentences of the retrieved chunks (weighted overlap of the
 * question's content words, Arabic and English normalised and lightly stemmed, with the chunk the
 * sentence stands in), cites the chunks they came from, and says so when nothing relevant was
 * found. FAQ-shaped text is understood: a question line that matches lends its score to the answer
 * after it. The rule is measured by bench/chat/kb-answers.ts.
 */
import type { Citation } from './chat.tables.js';

export interface KbPassage {
  chunk_id: string;
  document_id: string;
  title: string;
  collection_id: string | null;
  text: string;
  score: number;
}

export type Language = 'en' | 'ar';

export interface KbAnswer {
  /** The answer as sentences, in the order they should be shown. */
  sentences: string[];
  citations: Citation[];
  /** True when the knowledge base supported an answer. */
  found: boolean;
  language: Language;
}

const MAX_SENTENCES = 3;
/**
 * Support a sentence needs to count: the mean of the weighted share of the question's content
 * words found in the sentence and in its whole chunk (title included).
 */
const MIN_SUPPORT = 0.55;
/** Sentences this close to the best one are shown with it. */
const NEAR_BEST = 0.75;

const ARABIC_VARIANTS = /[\u064B-\u065F\u0670\u0640أإآٱىة]/g;
const ARABIC_FORMS: Record<string, string> = { أ: 'ا', إ: 'ا', آ: 'ا', ٱ: 'ا', ى: 'ي', ة: 'ه' };

/** Arabic letters in one form: no diacritics or tatweel, one alef, alef maksura as yeh, teh marbuta as heh. */
export function normalizeArabic(text: string): string {
  return text.replace(ARABIC_VARIANTS, (letter) => ARABIC_FORMS[letter] ?? '');
}

const EN_STOP = new Set(
  (
    'a an the and or but if then than so of to in on at by for with from about into over after before is are was were be been being am ' +
    'do does did doing have has had having i me my we our you your he she it its they them their this that these those what which who whom ' +
    'whose when where why how can could should would will shall may might must not no yes there here please tell know want need get ' +
    'any some all just also very much many more most own same such only too again further once as up down out off im ive dont'
  ).split(' '),
);
const AR_STOP = new Set(
  (
    'في من على الى إلى عن مع هل ما ماذا متى اين أين كيف لماذا كم هذا هذه ذلك تلك هو هي هم هن انا أنا نحن انت أنت انتم أنتم التي الذي ' +
    'الذين او أو ثم قد لا لم لن ان أن إن كان كانت يكون تكون كل بعض اي أي عند لدي لدى لكم لك لي به بها فيه فيها منه منها عليه عليها ' +
    'يمكن يمكنني يمكنك اريد أريد ممكن رجاء من فضلك'
  )
    .split(' ')
    .map(normalizeArabic),
);

const ARABIC = /[\u0600-\u06FF]/;

const AR_PREFIXES = ['وال', 'بال', 'كال', 'فال', 'لل', 'ال'];
const AR_SUFFIXES = ['هما', 'كما', 'ها', 'هم', 'كم', 'نا', 'ات', 'ون', 'ين', 'ان', 'ه', 'ي'];

function stemArabic(word: string): string {
  let stem = word;
  for (const prefix of AR_PREFIXES) {
    if (stem.startsWith(prefix) && stem.length - prefix.length >= 2) {
      stem = stem.slice(prefix.length);
      break;
    }
  }
  if (stem.length > 3 && /^[وف]/.test(stem)) stem = stem.slice(1);
  for (const suffix of AR_SUFFIXES) {
    if (stem.endsWith(suffix) && stem.length - suffix.length >= 3) return stem.slice(0, -suffix.length);
  }
  return stem;
}

/**
 * "invoice" and "invoices", "issue" and "issued" meet on one stem; short words keep their e, so
 * that "care" and "car" or "rate" and "rat" stay apart.
 */
const withoutFinalE = (stem: string) => (stem.length > 4 && stem.endsWith('e') ? stem.slice(0, -1) : stem);

const EN_SUFFIXES = [
  ['ies', 'y'],
  ['ing', ''],
  ['ed', ''],
  ['es', ''],
  ['s', ''],
] as const;

function stemEnglish(word: string): string {
  if (word.length <= 3) return word;
  for (const [suffix, replacement] of EN_SUFFIXES) {
    if (!word.endsWith(suffix) || word.length - suffix.length < 3 || word.endsWith('ss')) continue;
    // "-es" after a hissing sound ("boxes", "addresses"); elsewhere the e is the word's own ("invoices").
    if (suffix === 'es' && !/(?:[xz]|ch|sh|ss)es$/.test(word)) continue;
    let stem = word.slice(0, -suffix.length) + replacement;
    // "shipped" and "shipping" come to "ship", "billing" keeps its double l.
    if ((suffix === 'ing' || suffix === 'ed') && stem.length > 3 && /([^aeioulsz])\1$/.test(stem))
      stem = stem.slice(0, -1);
    return withoutFinalE(stem);
  }
  return withoutFinalE(word);
}

const WORD = /[\p{L}\p{N}]+(?:['’]\p{L}+)*/gu;

/** Content words of a text, normalised and stemmed. */
export function contentTerms(text: string): string[] {
  // Arabic diacritics are marks, not letters: they go before the split so that they do not cut words.
  const words = normalizeArabic(text.normalize('NFKC').toLowerCase()).match(WORD) ?? [];
  const terms: string[] = [];
  for (const raw of words) {
    if (ARABIC.test(raw)) {
      if (raw.length >= 2 && !AR_STOP.has(raw)) terms.push(stemArabic(raw));
    } else {
      const word = raw.replace(/['’]/g, '');
      if (!EN_STOP.has(word) && (word.length >= 2 || /\d/.test(word))) terms.push(stemEnglish(word));
    }
  }
  return terms;
}

export function languageOf(text: string): Language {
  let arabic = 0;
  let latin = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x0600 && code <= 0x06ff) arabic++;
    else if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) latin++;
  }
  return arabic > latin ? 'ar' : 'en';
}

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
const ASKS_NUMBER = /\b(?:how (?:long|many|much|often|soon)|when)\b|(?<!\p{L})(?:كم|متي)(?!\p{L})/iu;
/** Words that only frame such a question ("how long does it take"): they name no topic. */
const FRAMING = /\bhow (?:long|often|soon)\b/i;
const FRAMING_TERMS = new Set(contentTerms('long often soon take takes took taken taking'));
/** Number words, for answers that spell their numbers out. */
const NUMBER_TERMS = new Set(
  contentTerms(
    'one two three four five six seven eight nine ten eleven twelve twenty thirty hundred thousand million ' +
      'واحد اثنان اثنين اثني ثلاث ثلاثة أربع أربعة خمس خمسة ست ستة سبع سبعة ثماني ثمانية تسع تسعة عشر عشرة عشرون عشرين مئة مائة ألف مليون',
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
function questionTerms(query: string): string[] {
  let terms = [...new Set(contentTerms(query))];
  if (FRAMING.test(query)) terms = terms.filter((term) => !FRAMING_TERMS.has(term));
  if (terms.length > 0 && ASKS_NUMBER.test(normalizeArabic(query))) terms.push(NUMBER);
  return terms;
}

interface Sentence {
  text: string;
  terms: Set<string>;
}

interface Candidate {
  passage: number;
  position: number;
  text: string;
  support: number;
}

/**
 * Every answer sentence with its support: the mean of its own coverage of the question (or that
 * of the FAQ question line before it, if higher) and its passage's coverage (all its sentences
 * and its title). Coverage is the IDF-weighted share of the question's terms, the IDF taken over
 * the retrieved sentences: a term absent from all of them weighs most, as the evidence that the
 * passages may be about something else.
 */
function candidates(queryTerms: string[], passages: KbPassage[], split: Sentence[][]): Candidate[] {
  const all = split.flat();
  const weight = new Map(
    queryTerms.map((term) => {
      const df = all.filter((sentence) => sentence.terms.has(term)).length;
      return [term, Math.log(1 + (all.length + 1) / (df + 1))];
    }),
  );
  const total = queryTerms.reduce((sum, term) => sum + (weight.get(term) ?? 0), 0);
  const coverage = (has: (term: string) => boolean) =>
    queryTerms.reduce((sum, term) => sum + (has(term) ? (weight.get(term) ?? 0) : 0), 0) / total;

  const found: Candidate[] = [];
  split.forEach((sentences, passage) => {
    const title = new Set(contentTerms((passages[passage] as KbPassage).title));
    const context = coverage((term) => title.has(term) || sentences.some((sentence) => sentence.terms.has(term)));
    let question = 0;
    sentences.forEach((sentence, position) => {
      const own = coverage((term) => sentence.terms.has(term));
      if (isQuestion(sentence.text)) {
        question = Math.max(question, own);
        return;
      }
      const text = stripLabel(sentence.text);
      if (text.length >= 2) found.push({ passage, position, text, support: (Math.max(own, question) + context) / 2 });
      question = 0;
    });
  });
  return found;
}

export function answerFromKnowledge(query: string, passages: KbPassage[]): KbAnswer {
  const language = languageOf(query);
  const queryTerms = questionTerms(query);
  const empty: KbAnswer = { sentences: [], citations: [], found: false, language };
  if (queryTerms.length === 0 || passages.length === 0) return empty;

  const asksNumber = queryTerms.includes(NUMBER);
  const split = passages.map((passage) =>
    splitSentences(passage.text, languageOf(passage.text)).map((text): Sentence => {
      const terms = new Set(contentTerms(text));
      if (asksNumber && hasNumber(text, terms)) terms.add(NUMBER);
      return { text, terms };
    }),
  );
  const scored = candidates(queryTerms, passages, split);
  const best = Math.max(0, ...scored.map((candidate) => candidate.support));
  if (best < MIN_SUPPORT) return empty;
  const seen = new Set<string>();
  const chosen = scored
    .filter((candidate) => candidate.support >= Math.max(MIN_SUPPORT, best * NEAR_BEST))
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

const PHRASES = {
  en: {
    notFound: "I couldn't find an answer to that in our knowledge base.",
    offer: 'Would you like me to connect you with a member of our team?',
    escalated: "I'm handing this conversation to a member of our team; they will get back to you.",
    sources: 'Sources',
  },
  ar: {
    notFound: 'لم أجد إجابة عن سؤالك في قاعدة المعرفة لدينا.',
    offer: 'هل تريد أن أحولك إلى أحد أعضاء فريقنا؟',
    escalated: 'سأحوّل هذه المحادثة إلى أحد أعضاء فريقنا، وسيتواصلون معك قريباً.',
    sources: 'المصادر',
  },
} as const;

export function phrases(language: Language) {
  return PHRASES[language];
}

/** The user asks for a person rather than an answer. */
export function asksForHuman(query: string): boolean {
  return (
    /\b(human|real person|representative|live agent|speak to (an? )?(agent|person|someone)|talk to (an? )?(agent|person|someone))\b/i.test(
      query,
    ) || /(موظف|شخص حقيقي|خدمة العملاء|ممثل)/.test(query)
  );
}
