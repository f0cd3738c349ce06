/**
 * Ingestion throughput and the service's responsiveness while it ingests.
 *
 * 1. Pages per second of PDF text, rows per second of CSV and XLSX, pages per second of OCR
 *    (scanned pages): each parsed, chunked and prepared through the CPU pool as the ingestion job
 *    does, against the same work on the calling thread (the baseline, same run): the ratio is
 *    what the pool's hand-off costs.
 * 2. /healthz latency (p50, p99) over HTTP while a large PDF is ingested by the service (its
 *    ingestion job, RUN_WORKERS), against /healthz with nothing ingested (the baseline, same run).
 *    Target: p99 < 50 ms.
 *
 *   npx tsx bench/knowledge/ingest.ts [--pages 200] [--rows 20000] [--ocr-pages 3] [--seconds 5]
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { startInProcess } from '../lib/in-process.js';
import { createCpuPool } from '../../src/lib/cpu-pool.js';
import type { Format } from '../../src/modules/knowledge/knowledge.formats.js';
import { parseAndPrepare } from '../../src/modules/knowledge/knowledge.parse.js';
import { createParsers, DOCUMENTS_KIND } from '../../src/modules/knowledge/knowledge.parsers.js';
import { createTenant } from '../../test/helpers/factories.js';
import { makeLongPdf, makeScannedPdf, makeXlsx } from '../../test/knowledge/file-builders.js';
import { multipart } from '../../test/knowledge/helpers.js';
import { benchDatabase, percentile } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '200' },
    rows: { type: 'string', default: '20000' },
    'ocr-pages': { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
  },
});
const PAGES = Number(values.pages);
const ROWS = Number(values.rows);
const OCR_PAGES = Number(values['ocr-pages']);
const SECONDS = Number(values.seconds);

async function throughput() {
  const cpu = createCpuPool({ threads: 1, kinds: { [DOCUMENTS_KIND]: { queue: 4 } } });
  const parsers = createParsers(cpu);
  const header = ['sku', 'name', 'price', 'stock', 'warehouse'];
  const rows = Array.from({ length: ROWS }, (_, i) => [
    `SKU-${i}`,
    `Item number ${i}`,
    (i % 97) + 0.99,
    i % 13,
    `W${i % 5}`,
  ]);
  const csv = new TextEncoder().encode([header, ...rows].map((row) => row.join(',')).join('\n'));
  const xlsx = makeXlsx([{ name: 'Stock', rows: [header, ...rows] }]);
  const pdf = await makeLongPdf(PAGES);
  const lines = ['Returns are accepted within thirty days.', 'Refunds reach the card within five days.'];
  const scanned = await makeScannedPdf(lines);
  const arms: { name: string; unit: string; count: number; bytes: Uint8Array; format: Format }[] = [
    { name: 'PDF text', unit: 'pages', count: PAGES, bytes: pdf, format: 'pdf' },
    { name: 'CSV', unit: 'rows', count: ROWS, bytes: csv, format: 'csv' },
    { name: 'XLSX', unit: 'rows', count: ROWS, bytes: xlsx, format: 'xlsx' },
  ];
  // OCR: the same one-page scan read OCR_PAGES times (each run a page).
  console.log('| input | in the CPU pool | on the calling thread (baseline) | pool / baseline |');
  console.log('|---|---|---|---|');
  // A first job warms the worker (its modules loaded), as a running service's would be.
  await parsers.run({ kind: 'file', bytes: csv.slice(0, 2000), format: 'csv' }, () => {});
  for (const arm of arms) {
    const inPool = performance.now();
    await parsers.run({ kind: 'file', bytes: arm.bytes.slice(), format: arm.format }, () => {});
    const poolRate = arm.count / ((performance.now() - inPool) / 1000);
    const onThread = performance.now();
    await parseAndPrepare(arm.bytes.slice(), arm.format, () => {});
    const threadRate = arm.count / ((performance.now() - onThread) / 1000);
    console.log(
      `| ${arm.name} (${arm.count} ${arm.unit}) | ${poolRate.toFixed(1)} ${arm.unit}/s | ${threadRate.toFixed(1)} ${arm.unit}/s | ${(poolRate / threadRate).toFixed(2)} |`,
    );
  }
  let poolMs = 0;
  let threadMs = 0;
  for (let i = 0; i < OCR_PAGES; i++) {
    const a = performance.now();
    await parsers.run({ kind: 'file', bytes: scanned.slice(), format: 'pdf' }, () => {});
    poolMs += performance.now() - a;
    const b = performance.now();
    await parseAndPrepare(scanned.slice(), 'pdf', () => {});
    threadMs += performance.now() - b;
  }
  const poolOcr = OCR_PAGES / (poolMs / 1000);
  const threadOcr = OCR_PAGES / (threadMs / 1000);
  console.log(
    `| OCR, scanned PDF (${OCR_PAGES} pages) | ${poolOcr.toFixed(2)} pages/s | ${threadOcr.toFixed(2)} pages/s | ${(poolOcr / threadOcr).toFixed(2)} |`,
  );
  await cpu.close();
}

async function probe(base: string, seconds: number, until?: () => boolean): Promise<number[]> {
  const times: number[] = [];
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end && !(until?.() ?? false)) {
    const start = performance.now();
    const response = await fetch(`${base}/healthz`);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`/healthz answered ${response.status}`);
    times.push(performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return times.sort((a, b) => a - b);
}

async function responsiveness() {
  const database = await benchDatabase();
  const handle = createDatabase(database.url, 2);
  await migrateToLatest(handle.db);
  await handle.close();
  const { container, app } = await startInProcess(database.url, { RUN_WORKERS: 'true', MAX_UPLOAD_MB: '100' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  try {
    const tenant = await createTenant(container, 'developer');
    const idle = await probe(base, SECONDS);
    const pdf = await makeLongPdf(PAGES * 2);
    const form = multipart(
      { document_title: 'Large manual' },
      { name: 'manual.pdf', type: 'application/pdf', bytes: pdf },
    );
    const upload = await app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/file',
      headers: { ...tenant.headers, ...form.headers },
      payload: form.payload,
    });
    if (upload.statusCode !== 202) throw new Error(`upload: ${upload.statusCode} ${upload.body}`);
    let status = 'pending';
    const watch = (async () => {
      while (status === 'pending' || status === 'processing') {
        const task = (
          await app.inject({
            method: 'GET',
            url: `/api/public/documents/task/${upload.json().task_id}`,
            headers: tenant.headers,
          })
        ).json();
        status = task.status;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const started = performance.now();
    const busy = await probe(base, 600, () => status !== 'pending' && status !== 'processing');
    await watch;
    const ingestSeconds = (performance.now() - started) / 1000;
    console.log(
      `\n/healthz over HTTP, ${PAGES * 2}-page PDF ingested by the service's worker in ${ingestSeconds.toFixed(1)} s (${status})`,
    );
    console.log('| arm | probes | p50 | p99 | max |');
    console.log('|---|---|---|---|---|');
    for (const [name, times] of [
      ['idle (baseline)', idle],
      ['during the ingestion', busy],
    ] as const) {
      console.log(
        `| ${name} | ${times.length} | ${percentile(times, 50).toFixed(1)} ms | ${percentile(times, 99).toFixed(1)} ms | ${times.at(-1)?.toFixed(1)} ms |`,
      );
    }
    console.log(
      `p99 ratio during / idle: ${(percentile(busy, 99) / percentile(idle, 99)).toFixed(2)} (target: p99 < 50 ms)`,
    );
  } finally {
    await app.close();
    await container.close();
    await database.drop();
  }
}

console.log(`cores: ${availableParallelism()}`);
await throughput();
await responsiveness();
