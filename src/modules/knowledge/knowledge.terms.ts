/**
 * Content words of a text as the answerer and the query expansion compare them: lower case, NFKC,
 * Arabic letters in one form, stop words out, stemmed (English by Porter2, as the search's
 * Snowball configuration stems it; Arabic lightly: article, conjunctions, prepositions and
 * attached pronouns). PostgreSQL's configurations stay the stemmers of the search itself; these
 * terms only decide, within a few passages, which words meet.
 */
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

const WORD = /[\p{L}\p{N}]+(?:['’]\p{L}+)*/gu;

/** Content words of a text, normalised and stemmed. */
export function contentTerms(text: string): string[] {
  // Arabic diacritics are marks, not letters: they go before the split so that they do not cut words.
  const words = foldArabic(text.normalize('NFKC').toLowerCase()).match(WORD) ?? [];
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
