import { normalizeArabic } from '../../src/modules/chat/chat.kb-responder.js';

/** Text as compared for facts: lower case, Arabic normalised, punctuation and tanween alef as spaces. */
export function comparable(text: string): string {
  return normalizeArabic(text.normalize('NFKC').toLowerCase())
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .replace(/ا(?= |$)/g, '')
    .trim();
}
