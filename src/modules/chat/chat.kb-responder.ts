/**
 * The built-in `builtin:kb` responder: answers from the knowledge base with no language model.
 * It picks the best-supported sentences of the retrieved chunks (weighted overlap of the
 * question's content words, Arabic and English normalised and lightly stemmed), cites the chunks
 * they came from, and says so when nothing relevant was found. FAQ-shaped text is understood: a
 * question line that matches lends its score to the answer after it.
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
/** Share of the question's weighted content words a sentence must contain to count. */
const MIN_COVERAGE = 0.5;

const EN_STOP = new Set(
  ('a an the and or but if then than so of to in on at by for with from about into over after before is are was were be been being am ' +
    'do does did doing have has had having i me my we our you your he she it its they them their this that these those what which who whom ' +
    'whose when where why how can could should would will shall may might must not no yes there here please tell know want need get ' +
    'any some all just also very much many more most own same such only too again further once as up down out off im ive dont').split(' '),
);
const AR_STOP = new Set(
  ('في من على الى إلى عن مع هل ما ماذا متى اين أين كيف لماذا كم هذا هذه ذلك تلك هو هي هم هن انا أنا نحن انت أنت انتم أنتم التي الذي ' +
    'الذين او أو ثم قد لا لم لن ان أن إن كان كانت يكون تكون كل بعض اي أي عند لدي لدى لكم لك لي به بها فيه فيها منه منها عليه عليها ' +
    'يمكن يمكنني يمكنك اريد أريد ممكن رجاء من فضلك').split(' ').map(normalizeArabic),
);

function normalizeArabic(word: string): string {
  return word
    .replace(/[\u064B-\u065F\u0670\u0640]/g, '')
    .replace(/[أإآٱ]/g, 'ا')
    .replace(/ى/g, 'ي')
    .replace(/ة/g, 'ه');
}

const ARABIC = /[\u0600-\u06FF]/;

function stemArabic(word: string): string {
  let stem = word;
  for (const prefix of ['وال', 'بال', 'كال', 'فال', 'لل', 'ال']) {
    if (stem.startsWith(prefix) && stem.length - prefix.length >= 2) {
      stem = stem.slice(prefix.length);
      break;
    }
  }
  if (stem.length > 3 && /^[وف]/.test(stem)) stem = stem.slice(1);
  for (const suffix of ['هما', 'كما', 'ها', 'هم', 'كم', 'نا', 'ات', 'ون', 'ين', 'ان', 'ه', 'ي']) {
    if (stem.endsWith(suffix) && stem.length - suffix.length >= 3) return stem.slice(0, -suffix.length);
  }
  return stem;
}

function stemEnglish(word: string): string {
  if (word.length <= 3) return word;
  for (const [suffix, replacement] of [['ies', 'y'], ['ing', ''], ['ed', ''], ['es', ''], ['s', '']] as const) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3 && !word.endsWith('ss')) return word.slice(0, -suffix.length) + replacement;
  }
  return word;
}

/** Content words of a text, normalised and stemmed. */
export function contentTerms(text: string): string[] {
  const words = text.normalize('NFKC').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const terms: string[] = [];
  for (const raw of words) {
    if (ARABIC.test(raw)) {
      const word = normalizeArabic(raw);
      if (AR_STOP.has(word) || word.length < 2) continue;
      terms.push(stemArabic(word));
    } else {
      const word = raw.replace(/'/g, '');
      if (EN_STOP.has(word) || (word.length < 2 && !/\d/.test(word))) continue;
      terms.push(stemEnglish(word));
    }
  }
  return terms;
}

export function languageOf(text: string): Language {
  const arabic = (text.match(/[\u0600-\u06FF]/g) ?? []).length;
  const latin = (text.match(/[A-Za-z]/g) ?? []).length;
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

interface Candidate {
  passage: number;
  position: number;
  text: string;
  coverage: number;
}

export function answerFromKnowledge(query: string, passages: KbPassage[]): KbAnswer {
  const language = languageOf(query);
  const queryTerms = [...new Set(contentTerms(query))];
  const empty: KbAnswer = { sentences: [], citations: [], found: false, language };
  if (queryTerms.length === 0 || passages.length === 0) return empty;

  const split = passages.map((passage) => splitSentences(passage.text, languageOf(passage.text)).map((text) => ({ text, terms: new Set(contentTerms(text)) })));
  const all = split.flat();
  // Rarer words weigh more: a term present in every sentence says little about any of them.
  const weight = new Map(queryTerms.map((term) => {
    const df = all.filter((sentence) => sentence.terms.has(term)).length;
    return [term, Math.log(1 + (all.length + 1) / (df + 1))];
  }));
  const total = queryTerms.reduce((sum, term) => sum + (weight.get(term) ?? 0), 0);

  const candidates: Candidate[] = [];
  split.forEach((sentences, passage) => {
    let inherited = 0;
    sentences.forEach((sentence, position) => {
      const own = queryTerms.reduce((sum, term) => sum + (sentence.terms.has(term) ? (weight.get(term) ?? 0) : 0), 0) / total;
      if (isQuestion(sentence.text)) {
        inherited = Math.max(inherited, own);
        return;
      }
      const text = stripLabel(sentence.text);
      if (text.length >= 2) candidates.push({ passage, position, text, coverage: Math.max(own, inherited) });
      inherited = 0;
    });
  });

  const best = Math.max(0, ...candidates.map((candidate) => candidate.coverage));
  if (best < MIN_COVERAGE) return empty;
  const seen = new Set<string>();
  const chosen = candidates
    .filter((candidate) => candidate.coverage >= Math.max(MIN_COVERAGE, best * 0.75))
    .sort((a, b) => b.coverage - a.coverage || a.passage - b.passage || a.position - b.position)
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
  return /\b(human|real person|representative|live agent|speak to (an? )?(agent|person|someone)|talk to (an? )?(agent|person|someone))\b/i.test(query) ||
    /(موظف|شخص حقيقي|خدمة العملاء|ممثل)/.test(query);
}
