/**
 * Answer types for the built-in responder: what kind of answer a question expects (a number, an
 * amount, a duration, a date or time, a place, a person or organisation, or the sentence that
 * decides a yes/no question), read from its question words in English and Arabic, and whether a
 * sentence holds an answer of that kind. Lexical and deliberately generous: a sentence that holds
 * the type may still not answer, but one that lacks it seldom does ("How many API keys…" is not
 * answered by a sentence without a number; "أين…" not by one that names no place).
 */
import { normalizeArabic } from '../knowledge/index.js';

export type AnswerType = 'number' | 'amount' | 'duration' | 'date' | 'place' | 'person' | 'yes-no';

/** Lower case, NFKC, Arabic letters in one form (so the lists below are written normalised). */
const fold = (text: string) => normalizeArabic(text.normalize('NFKC').toLowerCase());
const words = (text: string) => fold(text).match(/[\p{L}\p{N}]+(?:['’]\p{L}+)?/gu) ?? [];
const set = (list: string) => new Set(fold(list).split(/\s+/));

/** An Arabic word with its article, conjunction or one-letter preposition taken off ("والمدينة" → "مدينه"). */
const ARABIC_PREFIX = /^(?:و|ف)?(?:بال|كال|لل|ال|ب|ل|ك)?/u;
function forms(word: string): string[] {
  if (!/^[\u0600-\u06FF]+$/.test(word)) return [word];
  const bare = word.replace(ARABIC_PREFIX, '');
  return bare !== word && bare.length >= 2 ? [word, bare] : [word];
}
const holdsAny = (tokens: string[], list: ReadonlySet<string>) =>
  tokens.some((token) => forms(token).some((form) => list.has(form)));

const UNITS = set(
  'seconds minute minutes min mins hour hours hr hrs day days week weeks month months year years decade decades night nights ' +
    'weekday weekdays daily weekly monthly yearly annually hourly instantly immediately ' +
    'ثانيه ثواني دقيقه دقائق دقيقتين ساعه ساعات ساعتين يوم ايام يومين يوما اسبوع اسابيع اسبوعين شهر اشهر شهور شهرين شهرا ' +
    'سنه سنوات سنين سنتين عام اعوام عامين عاما قرن قرون يوميا اسبوعيا شهريا سنويا فورا فوري حالا',
);
const NUMBER_WORDS = set(
  'one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty hundred thousand million billion ' +
    'half dozen first second third once twice ' +
    'واحد واحده اثنان اثنين اثني ثلاث ثلاثه اربع اربعه خمس خمسه ست سته سبع سبعه ثماني ثمانيه ثمان تسع تسعه عشر عشره عشرون عشرين ' +
    'ثلاثون ثلاثين اربعون اربعين خمسون خمسين مئه مائه مئات الف الاف مليون ملايين مليار نصف ربع ثلث اول الاول ثاني ثالث رابع خامس',
);
const MONEY = set(
  'free sar gbp usd eur aed kwd egp dollar dollars pound pounds euro euros riyal riyals dirham dirhams cent cents charge ' +
    'ريال ريالا ريالات درهم دراهم دينار دنانير جنيه جنيها دولار دولارا دولارات يورو مجانا مجاني مجانيه ببلاش',
);
const TIMES = set(
  'am pm morning afternoon evening night noon midnight today tomorrow yesterday weekend weekends holiday holidays ' +
    'monday tuesday wednesday thursday friday saturday sunday january february march april june july august ' +
    'september october november december once after before until till since during within ' +
    'صباح صباحا مساء مساءا ظهر ظهرا ليل ليلا فجر عصر اليوم غدا امس السبت الاحد الاثنين الثلاثاء الاربعاء الخميس الجمعه ' +
    'يناير فبراير مارس ابريل مايو يونيو يوليو اغسطس سبتمبر اكتوبر نوفمبر ديسمبر كانون شباط اذار نيسان ايار حزيران تموز اب ايلول تشرين ' +
    'محرم صفر ربيع جمادي رجب شعبان رمضان شوال القعده الحجه هجري هجريه ميلادي ميلاديه بعد قبل منذ عندما حين حتي خلال اثناء',
);
const PLACES = set(
  'page section menu settings tab app website site portal dashboard store stores shop branch branches office reception desk ' +
    'country countries city cities region area street address warehouse folder screen club north south east west located ' +
    'worldwide everywhere anywhere abroad online nationwide ' +
    'مدينه مدن دوله دول بلد بلاد بلدان منطقه مناطق محافظه محافظات قاره عاصمه شمال جنوب شرق غرب وسط شرقي غربي شمالي جنوبي ' +
    'تقع يقع قرب جزيره جزر ساحل بحر نهر جبل صفحه قسم اعدادات تطبيق موقع متجر فرع مكتب استقبال مكان اماكن حي شارع ولايه ' +
    'اقليم مقاطعه العالم قريه',
);
const PEOPLE = set(
  'team staff support agent agents manager owner administrator admin company bank courier partner provider member members ' +
    'customer user users doctor trainer coach receptionist founder president king ' +
    'ملك ملكه سلطان رئيس امير اميره خليفه شيخ امام قائد زعيم وزير بن ابن بنت ابو ام عالم كاتب مؤلف شاعر فيلسوف مخترع ' +
    'مؤسس شركه مؤسسه حزب منظمه فريق موظف موظفو مندوب نادي جامعه حكومه مجلس جيش الاب النبي قبيله اسره عائله',
);
/**
 * Names of countries and regions in Arabic and English, from the runtime's own locale data
 * (Intl.DisplayNames: ISO 3166 regions and the UN M.49 continents), folded as sentences are. A
 * one-word name is matched as a word (with its Arabic article or preposition); a longer one as a
 * phrase.
 */
const REGIONS = (() => {
  const codes: string[] = ['001', '002', '005', '009', '019', '021', '142', '150', '419'];
  for (let a = 65; a <= 90; a++) for (let b = 65; b <= 90; b++) codes.push(String.fromCharCode(a, b));
  const words = new Set<string>();
  const phrases = new Set<string>();
  for (const language of ['ar', 'en']) {
    const names = new Intl.DisplayNames([language], { type: 'region', fallback: 'none' });
    for (const code of codes) {
      let name: string | undefined;
      try {
        name = names.of(code);
      } catch {
        continue;
      }
      if (!name) continue;
      const parts = name.includes('(') ? [] : (fold(name).match(/[\p{L}]+/gu) ?? []);
      if (parts.length === 1 && parts[0]!.length >= 3) words.add(parts[0]!);
      else if (parts.length > 1) phrases.add(parts.join(' '));
    }
  }
  return { words, phrases: [...phrases] };
})();
function namesRegion(tokens: string[]): boolean {
  if (holdsAny(tokens, REGIONS.words)) return true;
  const text = ` ${tokens.join(' ')} `;
  return REGIONS.phrases.some((phrase) => text.includes(` ${phrase} `));
}

const CAPITALISED_AFTER_PREPOSITION =
  /\b(?:in|at|on|from|to|into|near|under|inside|outside|via|through|across)\s+(?:the\s+)?(\p{Lu}[\p{L}\p{N}]*)/gu;
/** A capitalised word that does not start its sentence (a name), other than "I". */
const NAME = /(?<=[\p{L}\p{N},;:)]\s+)(?!I\b)(\p{Lu}\p{L}[\p{L}\p{N}]*)/gu;

/**
 * Whether `sentence` holds an answer of `type` in words other than the question's own: "Our
 * Cairo store opens daily" names no place for "Where is the Cairo store?", and a sentence that
 * repeats the year a question gives does not tell it when. ("May" the month is left out of the
 * time words: it is far more often the verb.)
 */
function holdsBeyond(sentence: string, type: AnswerType, asked: ReadonlySet<string>): boolean {
  const own = (word: string) => forms(word).some((form) => asked.has(form));
  const all = words(sentence);
  const tokens = all.filter((token) => !own(token));
  const named = (pattern: RegExp) => [...sentence.matchAll(pattern)].some((match) => !own(fold(match[1]!)));
  const number = () => tokens.some((token) => /\p{Nd}/u.test(token)) || holdsAny(tokens, NUMBER_WORDS);
  switch (type) {
    case 'number':
      return number();
    case 'amount':
      return number() || holdsAny(tokens, MONEY) || /[$£€%]/.test(sentence);
    case 'duration':
      // "How many days…" is answered by "within 7 business days": the unit may be the question's.
      return holdsAny(tokens, UNITS) || (number() && holdsAny(all, UNITS));
    case 'date':
      return number() || holdsAny(tokens, UNITS) || holdsAny(tokens, TIMES);
    case 'place':
      return named(CAPITALISED_AFTER_PREPOSITION) || holdsAny(tokens, PLACES) || namesRegion(tokens);
    case 'person':
      return named(NAME) || holdsAny(tokens, PEOPLE);
    case 'yes-no':
      // Any statement on the question's subject can decide it. A list of deciding words (negation,
      // modality, availability) was measured: right answers held one no more often than distractors.
      return true;
  }
}

const questionWords = (question: string) => new Set(words(question).flatMap(forms));

/** Whether `sentence` holds an answer of `type` (beyond the words of `question`, when given). */
export function holdsAnswer(sentence: string, type: AnswerType, question = ''): boolean {
  return holdsBeyond(sentence, type, questionWords(question));
}

/**
 * The kind of answer `question` expects, with a test of whether a sentence holds one beyond the
 * question's own words; null when its words do not say.
 */
export function answerTypeOf(question: string): { type: AnswerType; holds(sentence: string): boolean } | null {
  const type = expectedAnswer(question);
  if (!type) return null;
  if (type === 'yes-no') return { type, holds: () => true };
  const asked = questionWords(question);
  return { type, holds: (sentence) => holdsBeyond(sentence, type, asked) };
}

const AUXILIARIES = set('is are was were am can could do does did will would should shall may might must has have had');
const DURATION_NOUNS = set(
  'time long days hours minutes weeks months years ساعه ساعات يوم ايام يوما دقيقه دقائق اسبوع اسابيع اسبوعا شهر اشهر شهرا ' +
    'سنه سنوات عام اعوام عاما مده وقت',
);
const PRICE_NOUNS = set('price cost costs fee fees charge سعر اسعار تكلفه يكلف ثمن رسوم قيمه');
const PLACE_NOUNS = set('مدينه دوله بلد مكان منطقه قاره محافظه city country place region');
const DATE_NOUNS = set('عام سنه يوم تاريخ قرن شهر year date day century month');

/** English: the first question word of the question (or of one of its clauses) decides. */
function englishType(tokens: string[], clauseStarts: ReadonlySet<number>): AnswerType | null {
  for (let i = 0; i < tokens.length; i++) {
    const [word, next] = [tokens[i]!, tokens[i + 1] ?? ''];
    if (word === 'how') {
      if (next === 'long' || next === 'soon' || next === 'often') return 'duration';
      if (next === 'much') return DURATION_NOUNS.has(tokens[i + 2] ?? '') ? 'duration' : 'amount';
      if (next === 'many') return DURATION_NOUNS.has(tokens[i + 2] ?? '') ? 'duration' : 'number';
    }
    if (word === 'when') return 'date';
    if ((word === 'what' || word === 'which') && (next === 'time' || DATE_NOUNS.has(next))) return 'date';
    if (word === 'where') return 'place';
    if (word === 'who' || word === 'whom' || word === 'whose') return 'person';
    if ((word === 'what' || word === "what's" || word === 'which') && tokens.some((token) => PRICE_NOUNS.has(token)))
      return 'amount';
    if (clauseStarts.has(i) && AUXILIARIES.has(word)) return 'yes-no';
  }
  return null;
}

/** Arabic: كم, متى, أين, من (who), هل and their common phrasings. */
function arabicType(tokens: string[]): AnswerType | null {
  for (let i = 0; i < tokens.length; i++) {
    const [word, next, after] = [tokens[i]!, tokens[i + 1] ?? '', tokens[i + 2] ?? ''];
    const nextBare = forms(next).at(-1)!;
    if (word === 'كم' || word === 'بكم') {
      if (DURATION_NOUNS.has(nextBare) || (next === 'من' && after === 'الوقت')) return 'duration';
      if (word === 'بكم' || PRICE_NOUNS.has(nextBare)) return 'amount';
      return 'number';
    }
    if (word === 'ما' || word === 'ماهي' || word === 'ماهو') {
      // "ما مدة…", "ما هي مدة…", "ما سعر…", "ما هو ثمن…"
      const noun = next === 'هو' || next === 'هي' ? forms(after).at(-1)! : nextBare;
      if (noun === 'مده') return 'duration';
      if (PRICE_NOUNS.has(noun)) return 'amount';
    }
    if (word === 'متي' || word === 'امتي') return 'date';
    // "أي عام…", "في أي مدينة…"
    const which = word === 'اي' ? next : word === 'في' && next === 'اي' ? after : null;
    if (which !== null) {
      const noun = forms(which).at(-1)!;
      if (DATE_NOUNS.has(noun)) return 'date';
      if (PLACE_NOUNS.has(noun)) return 'place';
    }
    if (word === 'اين' || word === 'وين' || word === 'فين') return 'place';
    if (word === 'لمن' || word === 'ممن') return 'person';
    // "من أسس…" asks for a person; "من هو نجيب محفوظ؟" for a description of one.
    if (word === 'من' && i === 0 && !['كم', 'اين', 'اي', 'متي', 'ماذا', 'ما', 'هو', 'هي', 'هم'].includes(next))
      return 'person';
    if (word === 'هل' && i === 0) return 'yes-no';
  }
  return null;
}

/** The kind of answer `question` expects, or null when its words do not say. */
export function expectedAnswer(question: string): AnswerType | null {
  if (/[\u0600-\u06FF]/.test(question)) return arabicType(words(question));
  // Clause starts: the first word, and the first word after a comma, semicolon or colon.
  const clauses = fold(question).split(/[,;:]/);
  const tokens: string[] = [];
  const starts = new Set<number>();
  for (const clause of clauses) {
    const clauseTokens = clause.match(/[\p{L}\p{N}]+(?:['’]\p{L}+)?/gu) ?? [];
    if (clauseTokens.length) starts.add(tokens.length);
    tokens.push(...clauseTokens);
  }
  return englishType(tokens, starts);
}
