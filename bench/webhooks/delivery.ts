/**
 * Outbound webhooks: from a committed event to its delivery at a loopback receiver, and
 * deliveries per second with 100 endpoints.
 *
 *   npx tsx bench/webhooks/delivery.ts [--samples 200] [--events 50] [--endpoints 100]
 *
 * The service runs in its own process with its workers (production webhook settings: 1 s poll,
 * woken by the outbox's NOTIFY; ALLOW_PRIVATE_URLS=true so endpoints may be on loopback) on
 * BENCH_DATABASE_URL, else a fresh database on the local PostgreSQL, dropped afterwards. The
 * receivers are HTTP servers in the bench process, one port (one origin) per endpoint.
 *
 * 1. Latency, sequential: the bench commits one team notification (an INSERT in its own
 *    transaction, as the platform writes one) and waits for the signed delivery at the one
 *    subscribed receiver; commit returned → request arrived, p50/p95 (target p50 < 50 ms). Every
 *    delivery is verified with `standardwebhooks`. Baseline in the same run: a POST of the same
 *    body from the bench to the same receiver (the loopback round trip alone).
 * 2. Throughput: `endpoints` endpoints subscribed, `events` notifications committed in one
 *    transaction (events × endpoints deliveries); from the commit to the last delivery arrived →
 *    deliveries/s. Baseline: the same number of POSTs sent by the bench itself, 64 at a time.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { apiClient, benchDatabase, benchPort, percentile, startBenchService } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '200' },
    events: { type: 'string', default: '50' },
    endpoints: { type: 'string', default: '100' },
  },
});
const samples = Number(values.samples);
const events = Number(values.events);
const endpointCount = Number(values.endpoints);
const apiKey = 'sk_bench_webhooks_key_000000001';

interface Receiver {
  url: string;
  server: Server;
  secret: string;
  onArrival: (id: string, body: string, headers: Record<string, string>) => void;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = { url: '', secret: '', onArrival: () => undefined } as unknown as Receiver;
  receiver.server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.writeHead(204).end();
      receiver.onArrival(
        String(request.headers['webhook-id']),
        Buffer.concat(chunks).toString('utf8'),
        request.headers as Record<string, string>,
      );
    });
  });
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(1)} ms   p95 ${percentile(sorted, 95).toFixed(1)} ms   max ${sorted.at(-1)!.toFixed(1)} ms`;
};

const database = await benchDatabase('switchboard_bench_webhooks');
const service = await startBenchService(benchPort(), database, {
  BOOTSTRAP_API_KEY: apiKey,
  ALLOW_PRIVATE_URLS: 'true',
  DATABASE_POOL_MAX: '20',
});
const api = apiClient(service.base, apiKey);
const client = new pg.Client({ connectionString: database.url });
await client.connect();
const receivers: Receiver[] = [];
try {
  const companyId = (await api('GET', '/api/public/companies/current')).id as string;
  const commit = async (count: number) => {
    await client.query('begin');
    await client.query(
      `insert into notifications (company_id, notification_type, category, title, message)
       select $1, 'system', 'system', 'Bench event ' || g, 'A notification for the webhooks bench'
       from generate_series(1, $2) g`,
      [companyId, count],
    );
    await client.query('commit');
    return performance.now();
  };

  // 1. Latency.
  const one = await startReceiver();
  receivers.push(one);
  const created = await api('POST', '/api/public/webhooks', { url: one.url, events: ['notification.created'] });
  one.secret = created.secret as string;
  const verifier = new Webhook(one.secret);
  let arrived: (at: number) => void = () => undefined;
  one.onArrival = (_id, body, headers) => {
    if (!headers['webhook-id']) return; // the baseline's direct POST
    verifier.verify(body, headers);
    arrived(performance.now());
  };
  const wait = () => new Promise<number>((resolve) => (arrived = resolve));
  let sampleBody = '';
  one.onArrival = ((inner) => (id: string, body: string, headers: Record<string, string>) => {
    if (headers['webhook-id']) sampleBody = body;
    inner(id, body, headers);
  })(one.onArrival);
  for (let i = 0; i < 10; i++) {
    const next = wait();
    await commit(1);
    await next;
  }
  const latencies: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < samples; i++) {
    const next = wait();
    const committed = await commit(1);
    latencies.push((await next) - committed);
    const began = performance.now();
    await fetch(one.url, { method: 'POST', body: sampleBody, headers: { 'content-type': 'application/json' } });
    direct.push(performance.now() - began);
  }
  await fetch(`${service.base}/api/public/webhooks/${created.id as string}`, {
    method: 'DELETE',
    headers: { 'x-api-key': apiKey },
  });
  console.log(`\ncommitted event → verified delivery, ${samples} sequential samples`);
  console.log(`  webhook delivery            ${stats(latencies)}`);
  console.log(`  direct POST (baseline)      ${stats(direct)}`);

  // 2. Throughput with `endpointCount` endpoints.
  for (let i = 0; i < endpointCount; i++) {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const hook = await api('POST', '/api/public/webhooks', { url: receiver.url, events: ['notification.created'] });
    receiver.secret = hook.secret as string;
  }
  const total = events * endpointCount;
  let count = 0;
  let last = 0;
  let done: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (done = resolve));
  let verified = 0;
  for (const receiver of receivers.slice(1)) {
    const check = new Webhook(receiver.secret);
    receiver.onArrival = (_id, body, headers) => {
      if (count % 50 === 0) {
        check.verify(body, headers);
        verified++;
      }
      count++;
      last = performance.now();
      if (count === total) done();
    };
  }
  const committed = await commit(events);
  await all;
  const seconds = (last - committed) / 1000;

  let sent = 0;
  const began = performance.now();
  const targets = receivers.slice(1);
  const lane = async () => {
    while (sent < total) {
      const target = targets[sent++ % targets.length]!;
      await fetch(target.url, { method: 'POST', body: sampleBody, headers: { 'content-type': 'application/json' } });
    }
  };
  for (const receiver of targets) receiver.onArrival = () => undefined;
  await Promise.all(Array.from({ length: 64 }, lane));
  const directSeconds = (performance.now() - began) / 1000;
  console.log(`\n${events} events × ${endpointCount} endpoints = ${total} deliveries (1 in 50 verified: ${verified})`);
  console.log(
    `  webhook deliveries          ${(total / seconds).toFixed(0)} /s   (${seconds.toFixed(2)} s from commit to the last)`,
  );
  console.log(`  direct POSTs, 64 at a time  ${(total / directSeconds).toFixed(0)} /s   (baseline)`);
  console.log(`  ratio                       ${((seconds === 0 ? 0 : directSeconds / seconds) * 100).toFixed(1)} %`);
} finally {
  await client.end();
  await service.stop();
  for (const receiver of receivers) receiver.server.close();
  await database.drop();
}
