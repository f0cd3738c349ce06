/**
 * Loaders of the test collections in ../shared/datasets: SciFact (BEIR layout), Cranfield
 * (SMART format) and ARCD (Arabic reading comprehension, SQuAD layout: each question's paragraph
 * is its one relevant document).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export interface Dataset {
  name: string;
  corpus: { id: string; title: string; text: string }[];
  queries: { id: string; text: string }[];
  /** query id → (document id → gain). */
  qrels: Map<string, Map<string, number>>;
  anchor?: string;
}

const root = process.env.DATASETS_DIR ?? path.resolve(import.meta.dirname, '../../../shared/datasets');

function addJudgement(qrels: Dataset['qrels'], query: string, doc: string, gain: number) {
  if (!qrels.has(query)) qrels.set(query, new Map());
  qrels.get(query)!.set(doc, gain);
}

async function scifact(): Promise<Dataset> {
  const dir = path.join(root, 'scifact');
  const lines = async (file: string) => (await readFile(path.join(dir, file), 'utf8')).split('\n').filter(Boolean);
  const corpus = (await lines('corpus.jsonl')).map((line) => {
    const row = JSON.parse(line) as { _id: string; title: string; text: string };
    return { id: row._id, title: row.title, text: row.text };
  });
  const queries = (await lines('queries.jsonl')).map((line) => {
    const row = JSON.parse(line) as { _id: string; text: string };
    return { id: row._id, text: row.text };
  });
  const qrels: Dataset['qrels'] = new Map();
  for (const line of (await lines('qrels/test.tsv')).slice(1)) {
    const [query, doc, score] = line.split('\t');
    if (Number(score) > 0) addJudgement(qrels, query!, doc!, Number(score));
  }
  return { name: 'scifact', corpus, queries, qrels, anchor: 'BM25 (BEIR, Elasticsearch) nDCG@10 = 0.665' };
}

/** SMART records: `.I n` then fields `.T`, `.A`, `.B`, `.W`. */
function smart(text: string): { id: string; fields: Record<string, string> }[] {
  const records: { id: string; fields: Record<string, string> }[] = [];
  let field = '';
  for (const line of text.split('\n')) {
    const id = /^\.I\s+(\d+)/.exec(line);
    if (id) {
      records.push({ id: String(Number(id[1])), fields: {} });
      field = '';
      continue;
    }
    const marker = /^\.([A-Z])\s*$/.exec(line);
    if (marker) {
      field = marker[1]!;
      continue;
    }
    const record = records[records.length - 1];
    if (record && field) record.fields[field] = `${record.fields[field] ?? ''}${line}\n`;
  }
  return records;
}

async function cranfield(): Promise<Dataset> {
  const dir = path.join(root, 'cranfield');
  const docs = smart(await readFile(path.join(dir, 'cran.all.1400'), 'utf8'));
  const corpus = docs.map((doc) => ({
    id: doc.id,
    title: (doc.fields.T ?? '').trim(),
    text: (doc.fields.W ?? '').trim(),
  }));
  // Query ids in cran.qry skip numbers; the judgements number queries by their position (1…225).
  const queries = smart(await readFile(path.join(dir, 'cran.qry'), 'utf8')).map((query, index) => ({
    id: String(index + 1),
    text: (query.fields.W ?? '').trim(),
  }));
  const qrels: Dataset['qrels'] = new Map();
  for (const line of (await readFile(path.join(dir, 'cranqrel'), 'utf8')).split('\n')) {
    const [query, doc, code] = line.trim().split(/\s+/);
    const relevance = Number(code);
    // Codes 1 (complete answer) … 4 (minimum interest) are relevant; -1 and 5 are not.
    if (query && doc && relevance >= 1 && relevance <= 4) addJudgement(qrels, query, doc, 1);
  }
  return { name: 'cranfield', corpus, queries, qrels };
}

async function arcd(): Promise<Dataset> {
  const file = path.join(root, 'arcd', 'arcd-test.json');
  const data = JSON.parse(await readFile(file, 'utf8')) as {
    data: { title: string; paragraphs: { context: string; qas: { id: string; question: string }[] }[] }[];
  };
  const corpus: Dataset['corpus'] = [];
  const queries: Dataset['queries'] = [];
  const qrels: Dataset['qrels'] = new Map();
  data.data.forEach((article, a) => {
    article.paragraphs.forEach((paragraph, p) => {
      const id = `${a}-${p}`;
      corpus.push({ id, title: article.title, text: paragraph.context });
      for (const qa of paragraph.qas) {
        queries.push({ id: qa.id, text: qa.question });
        addJudgement(qrels, qa.id, id, 1);
      }
    });
  });
  return { name: 'arcd', corpus, queries, qrels };
}

export async function loadDataset(name: string): Promise<Dataset> {
  switch (name) {
    case 'scifact':
      return scifact();
    case 'cranfield':
      return cranfield();
    case 'arcd':
      return arcd();
    default:
      throw new Error(`Unknown dataset ${name}: scifact, cranfield or arcd`);
  }
}
