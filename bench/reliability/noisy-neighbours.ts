/**
 * Noisy neighbours: does CPU-heavy work slow the routes that do not use it?
 *
 *   npx tsx bench/reliability/noisy-neighbours.ts [--seconds 5] [--tts 32] [--pages 343]
 *     [--tts-text same|distinct] [--profile dir]
 *
 * The service runs in its own process (offline speech engine, job workers on, a fresh database)
 * with the fake OpenAI-compatible provider in a process of its own and an agent deployed on
 * web/us-east. Two arms of `seconds` each, in the same run:
 *
 * 1. Quiet: `GET /healthz` one request after another, and chat turns one after another
 *    (`POST /api/v1/chat/agent/stream`, time to the first `agent_text_chunk`).
 * 2. Loaded: the same probes while `tts` text-to-speech requests are kept in flight at once (each
 *    one that ends is sent again; from a thread of the bench's own, so that reading their audio
 *    does not delay the probes) and a PDF of `pages` pages is uploaded and ingested.
 *
 * Before the quiet arm the pool's threads have warmed the speech engine up (CPU_POOL_WARM_UP).
 * Prints p50/p99 of each probe in each arm, the loaded/quiet ratio, the TTS answers (200 with
 * audio, 503 refused by the CPU pool with Retry-After), whether the ingestion finished, and the
 * event-loop delay of the service (its /metrics, reset at each scrape) and of the bench per arm.
 * Targets: `/healthz` p99 < 50 ms and a chat turn's first token < 2× quiet while loaded.
 */
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { makeLongPdf } from '../../test/knowledge/file-builders.js';
import { ESPEAK_WARM_UP } from '../../src/adapters/espeak/espeak-tts.js';
import { defaultThreads } from '../../src/lib/cpu-pool.js';
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
    seconds: { type: 'string', default: '5' },
    tts: { type: 'string', default: '32' },
    pages: { type: 'string', default: '343' },
    // same: every TTS request the same text (after the first syntheses, the synthesis cache
    // answers: a flood of cheap requests); distinct: a text of its own each (every one synthesised).
    'tts-text': { type: 'string', default: 'same' },
    profile: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const ttsClients = Number(values.tts);
const distinctTexts = values['tts-text'] === 'distinct';
const pages = Number(values.pages);
const apiKey = 'sk_bench_noisy_key_000000000001';
const apiToken = 'ct_bench_noisy_token_0000000001';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;
const api = apiClient(base, apiKey);
const TTS_URL = `${base}/api/public/voice-agents/vendor/voices/21m00Tcm4TlvDq8ikWAM/tts`;
const TTS_TEXT =
  'Thank you for calling. Your order shipped yesterday from our warehouse. It should arrive within three business days. ' +
  'You can follow it with the tracking link we sent by e-mail. Is there anything else I can help you with?';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `GET /healthz` one after another until `stop`, each request's milliseconds. */
async function probeHealth(stop: AbortSignal): Promise<number[]> {
  const times: number[] = [];
  while (!stop.aborted) {
    const sent = performance.now();
    const res = await fetch(`${base}/healthz`);
    await res.arrayBuffer();
    if (res.ok) times.push(performance.now() - sent);
    await sleep(10);
  }
  return times;
}

/** Streamed chat turns one after another until `stop`, each turn's milliseconds to its first token. */
async function probeChat(stop: AbortSignal, agentKey: string): Promise<number[]> {
  const times: number[] = [];
  let turn = 0;
  while (!stop.aborted) {
    const sent = performance.now();
    const res = await fetch(`${base}/api/v1/chat/agent/stream`, {
      method: 'POST',
      headers: { 'x-api-token': apiToken, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ agent_key: agentKey, query: `Where is my order number ${turn++}?` }),
    });
    if (!res.ok || !res.body) throw new Error(`chat turn: HTTP ${res.status} ${await res.text()}`);
    let first = -1;
    const decoder = new TextDecoder();
    for await (const chunk of res.body) {
      if (first < 0 && decoder.decode(chunk, { stream: true }).includes('agent_text_chunk'))
        first = performance.now() - sent;
    }
    if (first >= 0) times.push(first);
  }
  return times;
}

type TtsCounts = Awaited<ReturnType<typeof ttsLoad>>;

/**
 * The TTS load from a thread of its own: reading 32 streams of audio would otherwise hold the
 * event loop the probes are timed on (the bench's delay would be counted as the service's).
 */
async function ttsLoadThread(clients: number, distinct: boolean) {
  // This file again, tsx's loader registered in the thread first (a thread does not inherit it);
  // the port is drawn at random per process: the thread is told the service's.
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const bootstrap = `import(${tsx}).then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); });`;
  const worker = new Worker(bootstrap, { eval: true, workerData: { ttsClients: clients, url: TTS_URL, distinct } });
  const next = <T>() =>
    new Promise<T>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  // Loaded (seconds of compiling under tsx) before the arm starts: the load runs the whole arm.
  await next<'ready'>();
  return {
    start: () => worker.postMessage('start'),
    async stop(): Promise<TtsCounts> {
      const counts = next<TtsCounts>();
      worker.postMessage('stop');
      const result = await counts;
      await worker.terminate();
      return result;
    },
  };
}

/** Keeps `clients` TTS requests in flight until `stop`; counts the answers by kind. */
async function ttsLoad(stop: AbortSignal, clients: number, url: string, distinct: boolean) {
  const counts = { audio: 0, refused: 0, retryAfter: 0, other: 0 };
  let sent = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!stop.aborted) {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({
            text: distinct ? `${TTS_TEXT} Your reference is ${++sent}.` : TTS_TEXT,
            output_format: 'mp3_44100_128',
          }),
        });
        const bytes = Buffer.from(await res.arrayBuffer());
        if (res.status === 200 && bytes.length > 0) counts.audio++;
        else if (res.status === 503) {
          counts.refused++;
          if (res.headers.get('retry-after')) counts.retryAfter++;
          // A refused client waits as Retry-After asks (at most a second here, to keep the load on).
          await sleep(Math.min(1000, Number(res.headers.get('retry-after') ?? 1) * 1000));
        } else counts.other++;
      }
    }),
  );
  return counts;
}

/** The service's /metrics, one scrape: `read(name)` sums a metric over its label sets. */
async function scrape() {
  const text = await (await fetch(`${base}/metrics`)).text();
  return (name: string) => {
    let sum = 0;
    for (const match of text.matchAll(new RegExp(`^switchboard_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm')))
      sum += Number(match[1]);
    return sum;
  };
}

function line(name: string, quiet: number[], loaded: number[]) {
  const q = [...quiet].sort((a, b) => a - b);
  const l = [...loaded].sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(1).padStart(8);
  return (
    `${name.padEnd(22)} quiet p50 ${f(percentile(q, 50))} p99 ${f(percentile(q, 99))} ms (${q.length})   ` +
    `loaded p50 ${f(percentile(l, 50))} p99 ${f(percentile(l, 99))} ms (${l.length})   ` +
    `p50 ×${(percentile(l, 50) / percentile(q, 50)).toFixed(2)}  p99 ×${(percentile(l, 99) / percentile(q, 99)).toFixed(2)}`
  );
}

async function main() {
  const fake = await startFakeProviderProcess();
  const database = await benchDatabase('switchboard_bench_noisy');
  const server = await startBenchService(
    port,
    database,
    {
      BOOTSTRAP_API_KEY: apiKey,
      BOOTSTRAP_API_TOKEN: apiToken,
      RUN_WORKERS: 'true',
      STT_PROVIDER: 'none',
      ...fakeProviderEnv(fake.url),
    },
    {
      cleanUp: () => Promise.all([database.drop(), fake.close()]),
      // The service's CPU profile (written when it stops), to see what holds its event loop.
      ...(values.profile ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] } : {}),
    },
  );
  try {
    const agent = await api('POST', '/api/public/agents', { title: 'Bench agent', model: 'fake:gpt-bench' });
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
      if (current.status === 'failed' || i > 600) throw new Error(`roll-out: ${String(current.status)}`);
      await sleep(100);
    }
    const agentKey = `agent:${String(agent.id)}:web:us-east`;
    await fake.script({ tokens: ['Your parcel ', 'left the warehouse ', 'yesterday.'] });
    const pdf = await makeLongPdf(pages);
    // Warm-up: the engine and the first turn's code paths, off the record.
    await fetch(TTS_URL, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello.', output_format: 'mp3_44100_128' }),
    }).then((res) => res.arrayBuffer());
    const warm = new AbortController();
    setTimeout(() => warm.abort(), 1000);
    await probeChat(warm.signal, agentKey);
    // The pool's threads warm the speech engine up once speech is used (CPU_POOL_WARM_UP): that
    // is done before the quiet arm, so it does not load it.
    if (process.env.CPU_POOL_WARM_UP !== 'false') {
      const threads = Number(process.env.CPU_POOL_THREADS ?? defaultThreads(Number(process.env.CPU_POOL_NICE ?? 10)));
      const steps = threads * ESPEAK_WARM_UP.inputs.length;
      for (let i = 0; i < 600 && (await scrape())('cpu_pool_warm_up_steps_total') < steps; i++) await sleep(100);
    }

    const arm = async (load: boolean) => {
      const stop = new AbortController();
      const loads = load ? await ttsLoadThread(ttsClients, distinctTexts) : null;
      loads?.start();
      let upload: Promise<{ task: string; sentAt: number; answeredMs: number }> | null = null;
      if (load) {
        const form = new FormData();
        form.set('document_title', `Manual of ${pages} pages`);
        form.set('file', new Blob([pdf], { type: 'application/pdf' }), 'manual.pdf');
        const sentAt = performance.now();
        upload = fetch(`${base}/api/public/documents/upload/file`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey },
          body: form,
        }).then(async (res) => {
          const body = (await res.json()) as { task_id?: string };
          if (!body.task_id) throw new Error(`upload: HTTP ${res.status} ${JSON.stringify(body)}`);
          return { task: body.task_id, sentAt, answeredMs: performance.now() - sentAt };
        });
      }
      // The service's event-loop delay over the arm (prom-client resets it at each scrape), and the
      // bench's own (its probes wait on its loop too).
      await scrape();
      const own = monitorEventLoopDelay({ resolution: 10 });
      own.enable();
      const probes = Promise.all([probeHealth(stop.signal), probeChat(stop.signal, agentKey)]);
      await sleep(seconds * 1000);
      const read = await scrape();
      const loop = {
        p99: read('nodejs_eventloop_lag_p99_seconds') * 1000,
        max: read('nodejs_eventloop_lag_max_seconds') * 1000,
        benchP99: own.percentile(99) / 1e6,
      };
      own.disable();
      stop.abort();
      const [[health, chat], tts] = await Promise.all([probes, loads?.stop() ?? null]);
      let ingestion = '';
      if (upload) {
        const { task, sentAt, answeredMs } = await upload;
        const state = await api('GET', `/api/public/documents/task/${task}`);
        ingestion =
          `upload answered in ${(answeredMs / 1000).toFixed(1)} s; ${String(state.status)} ` +
          `${((performance.now() - sentAt) / 1000).toFixed(1)} s after it was sent (once the TTS in flight ended)`;
      }
      return { health, chat, tts, ingestion, loop };
    };

    const quiet = await arm(false);
    const loaded = await arm(true);
    console.log(
      `# noisy neighbours: ${seconds} s per arm; load: ${ttsClients} TTS in flight (${distinctTexts ? 'each its own text' : 'one text'}) + a ${pages}-page PDF`,
    );
    console.log(line('GET /healthz', quiet.health, loaded.health));
    console.log(line('chat first token', quiet.chat, loaded.chat));
    console.log(
      `TTS while loaded: ${loaded.tts!.audio} answered with audio, ${loaded.tts!.refused} refused with 503 ` +
        `(${loaded.tts!.retryAfter} with Retry-After), ${loaded.tts!.other} other`,
    );
    console.log(`PDF ingestion: ${loaded.ingestion}`);
    const loops = (arm: typeof quiet) =>
      `p99 ${arm.loop.p99.toFixed(1)} / max ${arm.loop.max.toFixed(1)} ms (the bench's own p99 ${arm.loop.benchP99.toFixed(1)} ms)`;
    console.log(`service event-loop delay: quiet ${loops(quiet)}; loaded ${loops(loaded)}`);
    const health99 = percentile(
      [...loaded.health].sort((a, b) => a - b),
      99,
    );
    const chatRatio =
      percentile(
        [...loaded.chat].sort((a, b) => a - b),
        50,
      ) /
      percentile(
        [...quiet.chat].sort((a, b) => a - b),
        50,
      );
    console.log(
      `targets: /healthz p99 ${health99.toFixed(1)} ms (< 50: ${health99 < 50 ? 'met' : 'not met'}); ` +
        `first token p50 ×${chatRatio.toFixed(2)} of quiet (< 2: ${chatRatio < 2 ? 'met' : 'not met'})`,
    );
    console.log(
      `load average ${os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')} on ${os.availableParallelism()} cores`,
    );
  } finally {
    await server.stop();
    await fake.close();
    await database.drop();
  }
}

if (isMainThread) await main();
else {
  // The TTS load's thread (ttsLoadThread): ready, then from start to stop, then its counts.
  const port = parentPort!;
  const stop = new AbortController();
  const started = new Promise((resolve) => port.once('message', resolve));
  port.postMessage('ready');
  await started;
  port.once('message', () => stop.abort());
  const { ttsClients: clients, url, distinct } = workerData as { ttsClients: number; url: string; distinct: boolean };
  port.postMessage(await ttsLoad(stop.signal, clients, url, distinct));
}
