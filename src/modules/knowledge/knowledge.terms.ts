/**
 * Content words of a text as the answerer and the query expansion compare them: lower case, NFKC,
 * Arabic letters in one form, stop words out, stemmed (English by Porter2, as the search's
 * Snowball configuration stems it; Arabic lightly: article, conjunctions, prepositions and
 * attached pronouns). PostgreSQL's configurations stay the stemmers of the search itself; these
 * terms only decide, within a few passages, which words meet.
 */
import { stemmer as stemFrench } from '@orama/stemmers/french';
import { stemmer as stemGerman } from '@orama/stemmers/german';
import { stemmer as stemItalian } from '@orama/stemmers/italian';
import { stemmer as stemPortuguese } from '@orama/stemmers/portuguese';
import { stemmer as stemSpanish } from '@orama/stemmers/spanish';
import porter2 from 'wink-porter2-stemmer';

const ARABIC_VARIANTS = /[\u064B-\u065F\u0670\u0640أإآٱىة]/g;
const ARABIC_FORMS: Record<string, string> = { أ: 'ا', إ: 'ا', آ: 'ا', ٱ: 'ا', ى: 'ي', ة: 'ه' };

/** Arabic letters in one form: no diacritics or tatweel, one alef, alef maksura as yeh, teh marbuta as heh. */
export function normalizeArabic(text: string): string {
  return text.replace(ARABIC_VARIANTS, (letter) => ARABIC_FORMS[letter] ?? '');
}

/**
 * Letters customers often type one for another, folded for comparison only: ذ as ز and ظ as ض
 * ("بمازا" for "بماذا"), ؤ and ئ as their seat's hamza-less letter.
 */
const ARABIC_CONFUSIONS = /[ذظؤئ]/g;
const CONFUSED: Record<string, string> = { ذ: 'ز', ظ: 'ض', ؤ: 'و', ئ: 'ي' };
const foldArabic = (text: string) => normalizeArabic(text).replace(ARABIC_CONFUSIONS, (letter) => CONFUSED[letter]!);

const EN_STOP = new Set(
  (
    'a an the and or but if then than so of to in on at by for with from about into over after before is are was were be been being am ' +
    'do does did doing have has had having i me my we our you your he she it its they them their this that these those what which who whom ' +
    'whose when where why how can could should would will shall may might must not no yes there here please tell know want need get ' +
    'any anything something everything nothing anyone some all just also very much many more most own same such only too again further once as up down out off im ive dont'
  ).split(' '),
);
const AR_STOP = new Set(
  (
    'في من على الى إلى عن مع هل ما ماذا بماذا لماذا متى اين أين كيف كم هذا هذه ذلك تلك هو هي هم هن انا أنا نحن انت أنت انتم أنتم التي الذي ' +
    'الذين او أو ثم قد لا لم لن ان أن إن كان كانت يكون تكون كل بعض اي أي عند لدي لدى لكم لك لي به بها فيه فيها منه منها عليه عليها ' +
    'يمكن يمكنني يمكنك اريد أريد ممكن رجاء من فضلك'
  )
    .split(' ')
    .map(foldArabic),
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
    if (stem.endsWith(suffix) && stem.length - suffix.length >= 3) {
      stem = stem.slice(0, -suffix.length);
      // A teh marbuta before a pronoun is written ت ("كتلته" is "كتلة" + "ه").
      if (suffix.length <= 2 && suffix !== 'ات' && stem.length > 3 && stem.endsWith('ت')) stem = stem.slice(0, -1);
      return stem;
    }
  }
  return stem;
}

/**
 * English words are stemmed by Porter2, the Snowball English stemmer that PostgreSQL's `english`
 * configuration runs for the search (wink-porter2-stemmer), so that the answerer's words meet as
 * the search's do ("cancelled" and "cancel", "accountant" and "account"). Stems are kept for the
 * words seen, up to a bound.
 */
const stems = new Map<string, string>();
function stemEnglish(word: string): string {
  let stem = stems.get(word);
  if (stem === undefined) {
    stem = porter2(word);
    if (stems.size >= 50_000) stems.clear();
    stems.set(word, stem);
  }
  return stem;
}

/**
 * Stop words of the other Latin-script languages the answerer reads (function words, question
 * words, the verbs of asking), and their Snowball stemmers (@orama/stemmers: the algorithms of
 * PostgreSQL's french, german, spanish, portuguese and italian configurations).
 */
const LATIN: Record<'fr' | 'de' | 'es' | 'pt' | 'it', { stop: Set<string>; stem: (word: string) => string }> = {
  fr: {
    stem: stemFrench,
    stop: wordSet(
      'a à au aux avec ce ces cet cette ceci cela ça dans de des du elle elles en et est être eu il ils je j la le les leur leurs lui ma mais me mes moi mon ne nos notre nous on ou où par pas pour qu que quel quelle quels quelles qui quoi sa se ses si son sont sur ta te tes toi ton tu un une vos votre vous y c d l m n s t ai as avez avons ont suis es était sera peut peux puis pouvez dois doit faut comment combien quand pourquoi est-ce estce faire fait fais bonjour merci svp plaît plait il-y voudrais veux aimerais savoir dire besoin aussi très tout tous toute toutes',
    ),
  },
  de: {
    stem: stemGerman,
    stop: wordSet(
      'der die das den dem des ein eine einen einem einer eines und oder aber wenn dann als wie wo was wer wen wem wessen warum wann welche welcher welches wieviel wie viel ist sind war waren bin bist seid sein hat haben habe hast hatte kann kannst können könnt konnte muss musst müssen soll sollte darf dürfen will wollen möchte möchten würde ich du er sie es wir ihr mich mir dich dir uns euch ihn ihm ihnen mein meine meinen meinem meiner dein deine unser unsere ihr ihre ihren sein seine nicht kein keine keinen noch schon auch nur sehr zu zum zur im in an am auf aus bei mit nach von vor für über unter um durch bis ob dass hallo bitte danke gibt es man wird werden wurde mal denn doch ja nein',
    ),
  },
  es: {
    stem: stemSpanish,
    stop: wordSet(
      'el la los las un una unos unas y o pero si de del al a en con por para sin sobre entre que qué quien quién cual cuál cuales cuánto cuanto cuánta cuanta cuántos cuantos cuándo cuando cómo como dónde donde por qué porque es son está están estoy era fue ser estar hay he has ha hemos han puedo puede puedes pueden podría debo debe tengo tiene tienes tienen mi mis tu tus su sus nuestro nuestra yo tú él ella nosotros ustedes usted me te se nos le les lo no sí ya muy también más menos hola gracias favor quiero quisiera necesito saber este esta esto ese esa eso',
    ),
  },
  pt: {
    stem: stemPortuguese,
    stop: wordSet(
      'o a os as um uma uns umas e ou mas se de do da dos das ao aos à às em no na nos nas com por pelo pela para sem sobre que quê quem qual quais quanto quanta quantos quantas quando como onde porque por que é são está estão estou era foi ser estar há tem têm tenho posso pode podem poderia devo deve meu minha meus minhas seu sua seus suas nosso nossa eu tu ele ela nós vocês você me te se nos lhe lhes não sim já muito também mais menos olá oi obrigado obrigada favor quero queria preciso saber este esta isto esse essa isso',
    ),
  },
  it: {
    stem: stemItalian,
    stop: wordSet(
      'il lo la i gli le un uno una e o ma se di del dello della dei degli delle a al allo alla ai agli alle da dal dalla dai in nel nello nella nei negli nelle con su sul sulla per tra fra che chi cosa quale quali quanto quanta quanti quante quando come dove perché è sono sei siamo era stato essere ho hai ha abbiamo hanno posso puoi può possono potrei devo deve mio mia miei mie tuo tua suo sua nostro nostra io tu lui lei noi voi loro mi ti si ci vi gli ne non sì già molto anche più meno ciao grazie favore voglio vorrei devo sapere questo questa quello quella',
    ),
  },
};

function wordSet(list: string): Set<string> {
  return new Set(list.split(' ').map((word) => word.replace(/['’]/g, '')));
}

/** Languages the answerer reads: English, Arabic and these. */
export type TermLanguage = 'en' | 'ar' | keyof typeof LATIN;
export const TERM_LANGUAGES: readonly TermLanguage[] = ['en', 'ar', 'fr', 'de', 'es', 'pt', 'it'];

/** Letters that only some of the languages write. */
const MARKS: [RegExp, Partial<Record<TermLanguage, number>>][] = [
  [/[ßäöü]/g, { de: 2 }],
  [/[ñ¿¡]/g, { es: 3 }],
  [/[ãõ]/g, { pt: 3 }],
  [/ç/g, { fr: 1, pt: 1 }],
  [/[èêëîûœ]/g, { fr: 1.5 }],
  [/[ìò]/g, { it: 1.5 }],
  [/[áíóú]/g, { es: 1, pt: 1 }],
  [/[àù]/g, { fr: 1, it: 1 }],
  // Spellings of one language: Portuguese nh/lh before a vowel (minha, senha, trabalho; not
  // English un-/en-/in- + h) and -ção/-ções/-ões; Spanish -ción/-ciones; Italian -zione/-zioni, gli;
  // German -ung; French eau and -eux.
  [/(?<!(?:^|[^\p{L}])(?:un|en|in))(?<=\p{L})(?:nh|lh)(?=[aeiouáéíóúâêôãõ])/gu, { pt: 1.5 }],
  [/(?:çã|çõ|õe)/g, { pt: 1 }],
  [/ci[oó]n(?:es)?\b/g, { es: 1.5 }],
  [/zion[ei]\b|\bgli\b/g, { it: 1 }],
  [/ung\b/g, { de: 1 }],
  [/eau|eux\b/g, { fr: 1 }],
];

/** Of each stop word, the languages whose lists hold it (a word several share says less of each). */
const STOP_LANGUAGES = new Map<string, TermLanguage[]>();
for (const word of EN_STOP) STOP_LANGUAGES.set(word, ['en']);
for (const [language, { stop }] of Object.entries(LATIN) as [TermLanguage, { stop: Set<string> }][])
  for (const word of stop) STOP_LANGUAGES.set(word, [...(STOP_LANGUAGES.get(word) ?? []), language]);

/** How much a short text holds of each language's function words and letters. */
function languageScores(text: string): Record<TermLanguage, number> {
  const lower = text.normalize('NFC').toLowerCase();
  const tokens = lower.match(/\p{L}+/gu) ?? [];
  const score: Record<TermLanguage, number> = { en: 0, ar: 0, fr: 0, de: 0, es: 0, pt: 0, it: 0 };
  for (const token of tokens) {
    // A word of one language counts 1; one of several (Spanish and Portuguese "o", "que", "de")
    // is split between them, so that the words only one language has decide.
    const languages = STOP_LANGUAGES.get(token);
    if (languages) for (const language of languages) score[language] += 1 / languages.length;
  }
  for (const [pattern, weights] of MARKS) {
    const count = lower.match(pattern)?.length ?? 0;
    if (count)
      for (const [language, weight] of Object.entries(weights)) score[language as TermLanguage] += count * weight;
  }
  // French elisions (l'…, d'…, qu'…) and the contractions of the others.
  score.fr += (lower.match(/\b(?:l|d|qu|j|n|s|c)['’]\p{L}/gu)?.length ?? 0) * 1.5;
  return score;
}

/** What else tells a question's language: the customer's earlier messages, the language of the passages found. */
export interface LanguageHints {
  /** The customer's earlier messages of the conversation, oldest first. */
  history?: readonly string[];
  /** Languages of the passages found for the question (the matched articles'), best first. */
  passages?: readonly (string | null | undefined)[];
}

const isTermLanguage = (value: unknown): value is TermLanguage =>
  typeof value === 'string' && (TERM_LANGUAGES as readonly string[]).includes(value);

/**
 * The language of a short text (a customer's question), by its function words and the letters
 * only some languages write: script first (Arabic), then the Latin-script language whose stop
 * words and letters it holds most. When languages tie (a question of a few words that Spanish
 * and Portuguese share), the hints decide: the language the customer wrote in before, then the
 * language of the best passage found among those tied. English when nothing stands out.
 */
export function languageOfText(text: string, hints: LanguageHints = {}): TermLanguage {
  let arabic = 0;
  let latin = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x0600 && code <= 0x06ff) arabic++;
    else if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) || (code >= 0xc0 && code <= 0x24f))
      latin++;
  }
  if (arabic > latin) return 'ar';
  const score = languageScores(text);
  const order = ['en', 'fr', 'de', 'es', 'pt', 'it'] as const;
  const top = Math.max(...order.map((language) => score[language]));
  const tied = order.filter((language) => score[language] === top && top > 0);
  if (tied.length === 1) return tied[0]!;
  // Nothing said (no function word, no telling letter): the conversation's language, else English.
  const earlier = hints.history?.length ? languageOfText(hints.history.join('\n')) : null;
  if (tied.length === 0) return earlier ?? 'en';
  if (earlier && tied.includes(earlier as (typeof order)[number])) return earlier;
  const found = hints.passages?.find(
    (language) => isTermLanguage(language) && tied.includes(language as (typeof order)[number]),
  );
  return (found as TermLanguage | undefined) ?? tied[0]!;
}

const WORD = /[\p{L}\p{N}]+(?:['’]\p{L}+)*/gu;
const latinStems = new Map<string, string>();

/**
 * Content words of a text, normalised and stemmed. Latin-script words are read as `language`'s
 * (English when none is given: the lexicon's and the existing benches' reading); Arabic words
 * always as Arabic.
 */
export function contentTerms(text: string, language: TermLanguage = 'en'): string[] {
  const other = language === 'en' || language === 'ar' ? null : LATIN[language];
  // Arabic diacritics are marks, not letters: they go before the split so that they do not cut words.
  const words = foldArabic(text.normalize('NFKC').toLowerCase()).match(WORD) ?? [];
  const terms: string[] = [];
  for (const raw of words) {
    if (ARABIC.test(raw)) {
      if (raw.length >= 2 && !AR_STOP.has(raw)) terms.push(stemArabic(raw));
    } else if (other) {
      // Elided articles and pronouns (l', d', qu', dell') are stop words of their own.
      const word = raw.replace(/^(?:[ldjmnstc]|qu|dell|dall|nell|sull|all|un)['’]/, '').replace(/['’]/g, '');
      if (other.stop.has(word) || !(word.length >= 2 || /\d/.test(word))) continue;
      const key = `${language}:${word}`;
      let stem = latinStems.get(key);
      if (stem === undefined) {
        stem = other.stem(word);
        if (latinStems.size >= 50_000) latinStems.clear();
        latinStems.set(key, stem);
      }
      terms.push(stem);
    } else {
      const word = raw.replace(/['’]/g, '');
      if (!EN_STOP.has(word) && (word.length >= 2 || /\d/.test(word))) terms.push(stemEnglish(word));
    }
  }
  return terms;
}
