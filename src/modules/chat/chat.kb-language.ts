/**
 * The language builtin:kb reads a customer's question in and answers in: told from the question
 * (knowledge's `languageOfText`: script, function words, telling letters), a tie settled by the
 * customer's earlier messages, then by the language of the passages found.
 */
import { languageOfText, type LanguageHints, type TermLanguage } from '../knowledge/index.js';

/** The languages the responder reads and answers in: English, Arabic, French, German, Spanish, Portuguese, Italian. */
export type Language = TermLanguage;

/**
 * The language of a question or a sentence: script, then function words and letters; `hints`
 * (the customer's earlier messages, the languages of the passages found) settle a tie. English
 * when unsure.
 */
export const languageOf: (text: string, hints?: LanguageHints) => Language = languageOfText;

const LANGUAGES = new Set<string>(['en', 'ar', 'fr', 'de', 'es', 'pt', 'it']);

/** A passage's language: the document's as stored, else told from its text. */
export const passageLanguage = (passage: { text: string; language?: string | null }): Language =>
  passage.language && LANGUAGES.has(passage.language) ? (passage.language as Language) : languageOf(passage.text);

/** A customer's question's language, with the conversation's earlier messages and the passages found as hints. */
export function questionLanguage(
  query: string,
  passages: readonly { text: string; language?: string | null }[],
  history: readonly string[] = [],
): Language {
  return languageOf(query, { history, passages: passages.map(passageLanguage) });
}
