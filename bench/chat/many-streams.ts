/**
 * Many concurrent streamed turns on one instance: do they all complete, what does each open stream
 * cost in memory, and do other routes stay responsive while they open?
 *
 *   npx tsx bench/chat/many-streams.ts [--streams 10000] [--hold 300] [--clients 4] [--provider-tls] [--dist] [--node-arg ARG]…
 *
 * The fake OpenAI-compatible provider and the service run in processes of their own; the streams
 * are opened by `--clients` client processes (each with its own undici Agent, one connection per
 * stream), so the client side is not the bottleneck. Each turn is held ~`--hold` s by the provider
 * (five tokens spread over it). Reported:
 * - completed streams (start, every chunk, end, no error) and HTTP statuses;
 * - RSS before (after a warm-up of 200 turns) and when every stream is open, from /proc, and the
 *   growth per open stream; V8 heap used from /metrics; and the lowest RSS while every stream is
 *   still held (the burst's garbage collected: what the held streams themselves cost);
 * - `GET /healthz` latencies sampled one after another from this process while the streams open;
 * - event-loop delay p99 (the service's `monitorEventLoopDelay`, exported in /metrics and reset at
 *   each scrape) while the streams open, and while they are held open.
 *
 * Over HTTP/1.1 each open stream holds two sockets in the service (its client and its provider
 * call): the service's open-files limit (`ulimit -n`) bounds `--streams` to about half of it.
 * `--provider-tls`: the provider serves HTTP/2 over TLS (a self-signed certificate made by
 * openssl, trusted by the service through LLM_CA_FILE) and the service runs with LLM_HTTP2, so
 * the provider calls share a few connections (reported) and a stream costs one socket.
 * `--dist`: the built service (`node dist/main.js`, as `npm start` runs it; built first when
 * stale) instead of `tsx src/main.ts`, whose kept function names give every closure made per
 * turn a property store of its own (≈ 2–3 KiB more heap per open stream).
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { selfSignedCertificate } from '../../test/helpers/fake-openai-tls.js';
import {
  apiClient,
  benchDatabase,
  benchPort,
  fakeProviderEnv,
  percentile,
  startBenchService,
  startFakeProviderProcess,
} from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '10000' },
    hold: { type: 'string', default: '300' },
    clients: { type: 'string', default: '4' },
    'node-arg': { type: 'string', multiple: true, default: [] },
    client: { type: 'boolean', default: false },
    'provider-tls': { type: 'boolean', default: false },
    dist: { type: 'boolean', default: false },
  },
});

/** What a client process is asked to do, and what it reports back. */
interface ClientJob {
  url: string;
  token: string;
  body: string;
  count: number;
  chunks: number;
}
type ClientReport =
  | { kind: 'open'; count: number }
  | {
      kind: 'done';
      completed: number;
      errors: number;
      statuses: Record<string, number>;
      /** Requests that got no answer, by error message. */
      failures: Record<string, number>;
    };

/** A client process: opens `count` streams at once, reports how many are open (started, not ended), then the outcome. */
async function runClient(job: ClientJob): Promise<void> {
  const agent = new Agent({
    connections: null,
    pipelining: 1,
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
    keepAliveTimeout: 1_000,
    // A burst of connects queues in the listen backlog: waiting there is part of what is measured.
    connect: { timeout: 600_000 },
  });
  let open = 0;
  let reported = 0;
  const tick = setInterval(() => {
    if (open !== reported) process.send!({ kind: 'open', count: open - reported } satisfies ClientReport);
    reported = open;
  }, 100);
  const statuses: Record<string, number> = {};
  const failures: Record<string, number> = {};
  let completed = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: job.count }, async () => {
      try {
        const res = await request(job.url, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'x-api-token': job.token, 'content-type': 'application/json', accept: 'text/event-stream' },
          body: job.body,
        });
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        let text = '';
        let counted = false;
        for await (const chunk of res.body) {
          text += (chunk as Buffer).toString('utf8');
          if (!counted && text.includes('event: start')) {
            counted = true;
            open += 1;
          }
        }
        if (counted) open -= 1;
        const chunks = text.split('event: agent_text_chunk').length - 1;
        if (chunks === job.chunks && text.includes('event: end') && !text.includes('event: error')) completed += 1;
        else errors += 1;
      } catch (error) {
        errors += 1;
        const name = (error as Error).message;
        failures[name] = (failures[name] ?? 0) + 1;
      }
    }),
  );
  clearInterval(tick);
  if (open !== reported) process.send!({ kind: 'open', count: open - reported } satisfies ClientReport);
  process.send!({ kind: 'done', completed, errors, statuses, failures } satisfies ClientReport);
  await agent.close();
}

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
const fmt = (n: number) => n.toFixed(1);
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

/** Runs `count` streams over `clients` client processes; `onOpen(total)` as they open. */
async function openStreams(job: Omit<ClientJob, 'count'>, count: number, clients: number, onOpen: (n: number) => void) {
  let open = 0;
  const outcome = {
    completed: 0,
    errors: 0,
    statuses: {} as Record<string, number>,
    failures: {} as Record<string, number>,
  };
  await Promise.all(
    Array.from({ length: clients }, (_, i) => {
      const share = Math.floor(count / clients) + (i < count % clients ? 1 : 0);
      const child = fork(import.meta.filename, ['--client'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
      child.send({ ...job, count: share } satisfies ClientJob);
      return new Promise<void>((resolve, reject) => {
        child.on('message', (report: ClientReport) => {
          if (report.kind === 'open') onOpen((open += report.count));
          else {
            outcome.completed += report.completed;
            outcome.errors += report.errors;
            for (const [s, n] of Object.entries(report.statuses)) outcome.statuses[s] = (outcome.statuses[s] ?? 0) + n;
            for (const [m, n] of Object.entries(report.failures)) outcome.failures[m] = (outcome.failures[m] ?? 0) + n;
            child.disconnect();
            resolve();
          }
        });
        child.on('exit', (code) => (code ? reject(new Error(`client exited with ${code}`)) : resolve()));
      });
    }),
  );
  return outcome;
}

async function main() {
  const streams = Number(values.streams);
  const tls = values['provider-tls'];
  const files = Number(/Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]);
  const needed = streams * (tls ? 1 : 2) + 200;
  if (needed > files)
    console.log(`note: ${streams} streams need ≈ ${needed} open files in the service; ulimit -n is ${files}`);
  const holdSeconds = Number(values.hold);
  const clients = Number(values.clients);
  const apiKey = 'sk_bench_many_streams_00000001';
  const apiToken = 'ct_bench_many_streams_0000001';
  const port = benchPort();
  const base = `http://127.0.0.1:${port}`;
  const certificate = tls ? selfSignedCertificate() : undefined;
  const fake = await startFakeProviderProcess(certificate ? { tls: certificate } : {});
  const database = await benchDatabase();
  const server = await startBenchService(
    port,
    database,
    {
      BOOTSTRAP_API_KEY: apiKey,
      BOOTSTRAP_API_TOKEN: apiToken,
      // Every client is 127.0.0.1: the per-address bound (256) would refuse the burst.
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0',
      // A turn is held `--hold` s by the provider, past the model time limit's default (120 s):
      // the limit is set beyond the hold and the burst's opening.
      CHAT_LLM_TIMEOUT_MS: String((holdSeconds + 600) * 1000),
      ...fakeProviderEnv(fake.url),
      ...(certificate ? { LLM_HTTP2: 'true', LLM_CA_FILE: certificate.certFile } : {}),
    },
    { nodeArgs: values['node-arg'], stdio: ['ignore', 'inherit', 'inherit'], dist: values.dist },
  );
  const pid = server.process.pid!;
  const probe = new Agent({ connections: 2, keepAliveTimeout: 600_000 });
  const api = apiClient(base, apiKey);
  try {
    const agent = await api('POST', '/api/public/agents', {
      title: 'Bench agent',
      model: 'fake:gpt-bench',
      temperature: 0,
      instructions: 'Answer briefly.',
    });
    const deployment = await api('POST', '/api/public/deployments', {
      deployable_type: 'agent',
      deployable_id: agent.id,
      channel: 'web',
      region_id: '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001',
    });
    await api('POST', `/api/public/deployments/${deployment.id}/start`);
    for (let i = 0; ; i++) {
      const current = await api('GET', `/api/public/deployments/${deployment.id}`);
      if (current.status === 'active') break;
      if (current.status === 'failed' || i > 300) throw new Error(`roll-out: ${String(current.status)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const job = {
      url: `${base}/api/v1/chat/agent/stream`,
      token: apiToken,
      body: JSON.stringify({ agent_key: `agent:${String(agent.id)}:web:us-east`, query: 'hold on' }),
    };
    const metrics = async () => {
      const text = await request(`${base}/metrics`, { dispatcher: probe }).then((r) => r.body.text());
      const read = (name: string) =>
        Number(new RegExp(`^switchboard_${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(text)?.[1]);
      return {
        eldP99: read('nodejs_eventloop_lag_p99_seconds') * 1000,
        heap: read('nodejs_heap_size_used_bytes') / 2 ** 20,
        heapTotal: read('nodejs_heap_size_total_bytes') / 2 ** 20,
        external: read('nodejs_external_memory_bytes') / 2 ** 20,
      };
    };

    // Warm-up: every code path of a turn loaded and compiled before the baseline.
    await fake.script({ tokens: ['a ', 'b '] });
    const warm = await openStreams({ ...job, chunks: 2 }, 200, 1, () => undefined);
    if (warm.completed !== 200) throw new Error(`warm-up: ${JSON.stringify(warm)}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));

    const tokens = Array.from({ length: 5 }, (_, i) => `held${i} `);
    const warmConnections = (await fake.script({ tokens, delayMs: (holdSeconds * 1000) / tokens.length })).connections;
    await metrics();
    const before = { rss: rssOf(pid), ...(await metrics()) };
    console.log(`load average before: ${load()} on ${os.cpus().length} cores`);

    // /healthz one request after another while the streams open.
    const healths: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const t0 = performance.now();
        const res = await request(`${base}/healthz`, { dispatcher: probe });
        await res.body.text();
        healths.push(performance.now() - t0);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const t0 = performance.now();
    let allOpen: (() => void) | null = null;
    const opened = new Promise<void>((resolve) => (allOpen = resolve));
    let openNow = 0;
    let peak = 0;
    // RSS at the most streams open seen by a tick: the figure per stream when not all open at once.
    let atPeak = { open: 0, rss: 0 };
    const progress = setInterval(() => {
      console.log(`  ${fmt((performance.now() - t0) / 1000)} s: ${openNow} open`);
      if (openNow > atPeak.open) atPeak = { open: openNow, rss: rssOf(pid) };
    }, 10_000);
    const running = openStreams({ ...job, chunks: tokens.length }, streams, clients, (n) => {
      openNow = n;
      peak = Math.max(peak, n);
      if (n >= streams) allOpen?.();
    });
    await Promise.race([opened, running]);
    clearInterval(progress);
    const openSeconds = (performance.now() - t0) / 1000;
    sampling = false;
    await sampler;
    const atOpen = { rss: rssOf(pid), ...(await metrics()) };
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const held = { rss: rssOf(pid), ...(await metrics()) };
    // While every stream is still held: the lowest RSS, once the garbage of the burst is collected
    // (V8 lets the heap grow by a factor of the live heap before its next full collection, and its
    // memory reducer collects when allocation stops), sampled every 2 s.
    let settled = { rss: held.rss, heap: held.heap, heapTotal: held.heapTotal, external: held.external, at: 5 };
    let finished = false;
    void running.finally(() => (finished = true));
    while (!finished && openNow >= streams) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      if (finished || openNow < streams) break;
      const rss = rssOf(pid);
      if (rss < settled.rss) settled = { rss, ...(await metrics()), at: (performance.now() - t0) / 1000 - openSeconds };
    }
    const outcome = await running;
    const elapsed = (performance.now() - t0) / 1000;
    const providerConnections = (await fake.script({ tokens: ['a '] })).connections;

    const sorted = [...healths].sort((a, b) => a - b);
    const per = ((atOpen.rss - before.rss) * 1024) / streams;
    console.log(
      `\n${streams} concurrent streams over ${clients} client processes, each held ~${holdSeconds} s; service: ${values.dist ? 'node dist/main.js' : 'tsx src/main.ts'}`,
    );
    if (tls)
      console.log(
        `provider over HTTP/2 and TLS: ${providerConnections} connections in all, ${(providerConnections ?? 0) - (warmConnections ?? 0)} opened for the ${streams} streams`,
      );
    console.log(
      `HTTP statuses: ${Object.entries(outcome.statuses)
        .map(([s, n]) => `${s}×${n}`)
        .join(', ')}`,
    );
    console.log(`completed with every chunk and end: ${outcome.completed} of ${streams}, errors ${outcome.errors}`);
    for (const [message, n] of Object.entries(outcome.failures)) console.log(`  no answer ×${n}: ${message}`);
    console.log(`all open after ${fmt(openSeconds)} s; all done after ${fmt(elapsed)} s; peak open at once ${peak}`);
    if (peak < streams) {
      console.log('NOT ALL OPEN AT ONCE: "all open" below is after the end (raise --hold)');
      console.log(
        `RSS at ${atPeak.open} open (a 10 s tick): ${fmt(atPeak.rss)} MiB: ${fmt(((atPeak.rss - before.rss) * 1024) / atPeak.open)} KiB per open stream`,
      );
    }
    console.log(
      `RSS before ${fmt(before.rss)} MiB, all open ${fmt(atOpen.rss)} MiB, held 5 s later ${fmt(held.rss)} MiB: ${fmt(per)} KiB per open stream (target < 50)`,
    );
    console.log(`V8 heap used before ${fmt(before.heap)} MiB, all open ${fmt(atOpen.heap)} MiB`);
    if (peak >= streams)
      console.log(
        `RSS settled while all ${streams} held (lowest, ${fmt(settled.at)} s after all open): ${fmt(settled.rss)} MiB: ${fmt(((settled.rss - before.rss) * 1024) / streams)} KiB per held stream; then V8 heap ${fmt(settled.heap)} MiB used of ${fmt(settled.heapTotal)} MiB, external (buffers) ${fmt(settled.external)} MiB (before: ${fmt(before.heap)} of ${fmt(before.heapTotal)}, ${fmt(before.external)})`,
      );
    console.log(
      `GET /healthz while they open (${healths.length} samples): p50 ${fmt(percentile(sorted, 50))} ms, p99 ${fmt(percentile(sorted, 99))} ms, max ${fmt(sorted.at(-1) ?? NaN)} ms (target p99 < 100)`,
    );
    console.log(
      `event-loop delay p99: ${fmt(atOpen.eldP99)} ms while they open, ${fmt(held.eldP99)} ms while held open (target < 50)`,
    );
    console.log(`load average after: ${load()}`);
  } finally {
    await probe.close();
    await server.stop();
    await fake.close();
    await database.drop();
    certificate?.remove();
  }
}

if (values.client) process.once('message', (job: ClientJob) => void runClient(job).then(() => process.exit(0)));
else await main();
