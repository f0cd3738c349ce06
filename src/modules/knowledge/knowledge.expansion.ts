/**
 * Vocabulary bridging: a query is expanded with the support-domain equivalents of the words and
 * phrases it holds (lexicon/support.*.json: "money back" ↔ "refund", "login details" ↔
 * "password", "split the cost" ↔ "instalments" …), in English and Arabic. The search ranks the
 * expansion's words below the query's own (a second BM25 pass weighted EXPANSION_WEIGHT); the
 * answerer counts a question's word as present in a sentence when one of its equivalents is.
 */
import english from './lexicon/support.en.json' with { type: 'json' };
import arabic from './lexicon/support.ar.json' with { type: 'json' };
import { contentTerms } from './knowledge.terms.js';

/** Weight of the expansion's BM25 scores against the query's own (1). */
export const EXPANSION_WEIGHT = 0.4;
/** Words of equivalents added to one query at most (bounds the search's extra work). */
const MAX_EXPANSION_WORDS = 32;

interface Phrase {
  group: number;
  text: string;
  terms: string[];
}

interface CompiledLexicon {
  groups: Phrase[][];
  /** First term → the phrases that start with it. */
  byFirst: Map<string, Phrase[]>;
}

function compile(...sources: { groups: string[][] }[]): CompiledLexicon {
  const groups: Phrase[][] = [];
  const byFirst = new Map<string, Phrase[]>();
  for (const source of sources)
    for (const members of source.groups) {
      const group = groups.length;
      const phrases: Phrase[] = [];
      for (const text of members) {
        const terms = contentTerms(text);
        // A phrase that keeps one content word of several ("log in", "go over", "pay for") would
        // stand for that word alone, which means something else: it is left out.
        const collapsed = terms.length < 2 && text.trim().split(/\s+/).length > 1;
        if (terms.length === 0 || collapsed || phrases.some((phrase) => phrase.terms.join(' ') === terms.join(' ')))
          continue;
        const phrase = { group, text, terms };
        phrases.push(phrase);
        const list = byFirst.get(terms[0]!) ?? [];
        list.push(phrase);
        byFirst.set(terms[0]!, list);
      }
      groups.push(phrases);
    }
  return { groups, byFirst };
}

let lexicon: CompiledLexicon | null = null;
const compiled = () => (lexicon ??= compile(english, arabic));

export interface Expansion {
  /** The equivalents' words, for a search (empty: nothing to add). */
  text: string;
  /** Per query term: the term sequences that stand for it (its equivalents, itself included). */
  alternatives: Map<string, string[][]>;
}

/** The groups of the lexicon a term sequence holds, with the span of terms each phrase covers. */
function matches(terms: readonly string[]): { group: number; from: number; to: number }[] {
  const { byFirst } = compiled();
  const found: { group: number; from: number; to: number }[] = [];
  terms.forEach((term, index) => {
    for (const phrase of byFirst.get(term) ?? []) {
      const fits = phrase.terms.every((part, k) => terms[index + k] === part);
      if (fits) found.push({ group: phrase.group, from: index, to: index + phrase.terms.length });
    }
  });
  return found;
}

/** The expansion of a query's content terms (as contentTerms reads them). */
export function expandTerms(terms: readonly string[]): Expansion {
  const { groups } = compiled();
  const alternatives = new Map<string, string[][]>();
  const words: string[] = [];
  const own = new Set(terms);
  const seen = new Set<number>();
  for (const { group, from, to } of matches(terms)) {
    const phrases = groups[group]!;
    for (let i = from; i < to; i++) {
      const list = alternatives.get(terms[i]!) ?? [[terms[i]!]];
      for (const phrase of phrases) list.push(phrase.terms);
      alternatives.set(terms[i]!, list);
    }
    if (seen.has(group)) continue;
    seen.add(group);
    for (const phrase of phrases)
      if (!phrase.terms.every((term) => own.has(term))) words.push(...phrase.text.split(/\s+/));
  }
  return { text: [...new Set(words)].slice(0, MAX_EXPANSION_WORDS).join(' '), alternatives };
}

/** The expansion of a query. */
export function expandQuery(query: string): Expansion {
  return expandTerms(contentTerms(query));
}
