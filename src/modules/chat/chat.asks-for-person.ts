/**
 * Whether a customer's message asks for a person rather than an answer, in English or Arabic. A
 * word for a person counts only as a whole word (no "human" inside "humans", no "موظف" inside
 * "موظفون") and only as what a request asks for: after a request verb ("talk to", "connect me
 * with", "أريد التحدث مع") or as the whole message ("agent", "human please"). A person named in a
 * question about something else ("Can the camera tell a human from a pet?", "من هو ممثل الشركة؟")
 * is not a request.
 */
import { normalizeArabic } from '../knowledge/index.js';

/** Words for the person asked for (Arabic in normalised letters, with the article or a preposition allowed). */
const PERSON_EN = new Set(
  'human humans person people agent agents representative rep operator someone somebody staff employee advisor'.split(
    ' ',
  ),
);
const PERSON_PHRASES_EN = [
  'real person',
  'live agent',
  'live person',
  'customer service',
  'customer support',
  'support team',
  'your team',
  'the team',
];
const REQUEST_EN = new Set(
  'talk speak chat connect transfer put escalate reach contact want need get give call'.split(' '),
);
const FILLER_EN = new Set('a an the please pls plz now to with me i a real live just'.split(' '));

const PERSON_AR = new Set(['موظف', 'موظفه', 'الموظفين', 'موظفين', 'انسان', 'بشري', 'شخص', 'مسوول', 'مسئول', 'مندوب']);
const PERSON_PHRASES_AR = ['خدمه العملاء', 'ممثل خدمه', 'الدعم الفني', 'فريق الدعم', 'احد الموظفين'];
const REQUEST_AR = new Set(
  'اريد ابغي ابغا ابي بدي عاوز عايز ممكن حولني حولوني وصلني وصلوني اتحدث اتكلم اكلم تحدث التحدث الكلام التكلم التواصل كلمني محادثه اطلب'.split(
    ' ',
  ),
);
const AR_PREFIX = /^(?:و|ف)?(?:بال|لل|ال|ب|ل)?/;

function words(text: string): string[] {
  return normalizeArabic(text.normalize('NFKC').toLowerCase()).match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A word for a person (bare, or with an Arabic article or preposition). */
function isPerson(word: string): boolean {
  if (PERSON_EN.has(word) || PERSON_AR.has(word)) return true;
  const bare = word.replace(AR_PREFIX, '');
  return bare.length >= 3 && PERSON_AR.has(bare);
}

/** Start indexes of the person phrases (and single words) in `tokens`. */
function personAt(tokens: string[]): number[] {
  const at: number[] = [];
  tokens.forEach((token, index) => {
    if (isPerson(token)) at.push(index);
    for (const phrase of [...PERSON_PHRASES_EN, ...PERSON_PHRASES_AR]) {
      const parts = phrase.split(' ');
      const candidate = tokens
        .slice(index, index + parts.length)
        .map((word, k) => (k === 0 ? word.replace(AR_PREFIX, '') : word));
      if (candidate.join(' ') === phrase || tokens.slice(index, index + parts.length).join(' ') === phrase)
        at.push(index);
    }
  });
  return at;
}

const isRequest = (word: string) =>
  REQUEST_EN.has(word) || REQUEST_AR.has(word) || REQUEST_AR.has(word.replace(/^(?:و|ف)/, ''));

export function asksForHuman(query: string): boolean {
  const tokens = words(query);
  const people = personAt(tokens);
  if (people.length === 0) return false;
  // The whole message is the request: "agent", "human please", "موظف لو سمحت".
  const rest = tokens.filter((token, index) => !people.includes(index) && !FILLER_EN.has(token) && !isPerson(token));
  if (tokens.length <= 4 && rest.every((token) => /^(?:لو|سمحت|رجاء|من|فضلك|الان)$/.test(token))) return true;
  // A request verb shortly before the person: "talk to a human", "أريد التحدث مع موظف".
  return people.some((index) => tokens.slice(Math.max(0, index - 5), index).some(isRequest));
}
