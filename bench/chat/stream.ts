/**
 * Chat streaming: what the platform adds over the model provider, and how many streams it holds.
 *
 *   npx tsx bench/chat/stream.ts [--samples 200] [--tokens 50] [--streams 1000] [--hold 15] [--cpu-prof DIR]
 *
 * A fake OpenAI-compatible provider runs in a process of its own, as a real provider does (so the
 * direct baseline crosses processes like the service's own call); the service runs in its own process
 * (on BENCH_DATABASE_URL, else a fresh database on the local PostgreSQL, dropped afterwards) with
 * that provider in LLM_PROVIDERS and an agent deployed on web/us-east.
 *
 * 1. Time to first token: the provider called directly (baseline) vs POST /api/v1/chat/agent/stream
 *    (auth, rate limit, agent and deployment lookup, conversation insert, retrieval, model client, SSE),
 *    sequential requests interleaved; p50/p90/p99 and the p50 added (target < 5 ms).
 * 2. Per-event overhead: time from the first to the last token event over `tokens` tokens sent
 *    back to back, direct vs platform, divided by the events in between.
 * 3. Concurrent streams: `streams` streams opened at once, each held open `hold` seconds by a slow
 *    provider; counts streams that got start, every chunk and end, and the errors.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent as UndiciAgent, setGlobalDispatcher } from 'undici';
import { createLlmClient } from '../../src/adapters/llm/llm-client.js';
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
    samples: { type: 'string', default: '200' },
    tokens: { type: 'string', default: '50' },
    streams: { type: 'string', default: '1000' },
    hold: { type: 'string', default: '15' },
    'cpu-prof': { type: 'string' },
  },
});
const samples = Number(values.samples);
const tokenCount = Number(values.tokens);
const streamCount = Number(values.streams);
const holdSeconds = Number(values.hold);
const apiKey = 'sk_bench_chat_key_000000000001';
const apiToken = 'ct_bench_chat_token_0000000001';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;

// Keep-alive connections, one request at a time on each (as a browser or an SSE client keeps them);
// as many connections as the concurrent phase needs.
setGlobalDispatcher(
  new UndiciAgent({
    connections: null,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  }),
);

interface Timing {
  ttfb: number;
  firstToken: number;
  lastToken: number;
  events: number;
}

/** Reads a streamed response, timing the first byte, the first and the last read holding a token. */
async function timeStream(url: string, init: RequestInit, tokenMarker: string, stopMarker: string): Promise<Timing> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  if (!res.ok || !res.body) throw new Error(`${url}: HTTP ${res.status} ${await res.text()}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let ttfb = -1;
  let firstToken = -1;
  let lastToken = -1;
  let events = 0;
  let stopped = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const now = performance.now() - t0;
    if (ttfb < 0) ttfb = now;
    const text = decoder.decode(value, { stream: true });
    if (stopped) continue;
    const before = text.split(stopMarker)[0]!;
    const found = before.split(tokenMarker).length - 1;
    if (found > 0) {
      events += found;
      if (firstToken < 0) firstToken = now;
      lastToken = now;
    }
    if (before.length < text.length) stopped = true;
  }
  return { ttfb, firstToken, lastToken, events };
}

const fmt = (n: number) => n.toFixed(2).padStart(7);
function summary(name: string, xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  return {
    name,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    line: `${name.padEnd(44)} p50 ${fmt(percentile(s, 50))} ms   p90 ${fmt(percentile(s, 90))} ms   p99 ${fmt(percentile(s, 99))} ms`,
  };
}

const api = apiClient(base, apiKey);

async function main() {
  const fake = await startFakeProviderProcess();
  const database = await benchDatabase();
  const profile = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`] : [];
  const server = await startBenchService(
    port,
    database,
    { DATABASE_POOL_MAX: '20', BOOTSTRAP_API_KEY: apiKey, BOOTSTRAP_API_TOKEN: apiToken, ...fakeProviderEnv(fake.url) },
    { nodeArgs: profile, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  try {
    // A small help centre, so that each turn's knowledge search finds passages for the prompt.
    const topics = [
      'refund',
      'shipping',
      'password',
      'invoice',
      'subscription',
      'warranty',
      'delivery',
      'account',
      'payment',
      'return',
    ];
    const tasks: string[] = [];
    for (const [i, topic] of topics.flatMap((t) => [t, t, t, t]).entries()) {
      const upload = await api('POST', '/api/public/documents/upload/article', {
        document_title: `${topic[0]!.toUpperCase()}${topic.slice(1)} help, part ${i}`,
        content:
          `How to handle a ${topic} request. Customers who ask about a ${topic} should open the account page, choose the order and follow the ${topic} steps. `.repeat(
            6,
          ) + `Article ${i} covers ${topic} questions for orders placed online or in a store.`,
      });
      tasks.push(String(upload.task_id));
    }
    for (const task of tasks) {
      for (let i = 0; ; i++) {
        const state = await api('GET', `/api/public/documents/task/${task}`);
        if (state.status === 'completed') break;
        if (state.status === 'failed' || i > 300) throw new Error(`ingestion of ${task}: ${String(state.status)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
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
    for (let i = 0; i < 200; i++) {
      const current = await api('GET', `/api/public/deployments/${deployment.id}`);
      if (current.status === 'active') break;
      if (current.status === 'failed') throw new Error(`roll-out failed: ${String(current.error)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const agentKey = `agent:${String(agent.id)}:web:us-east`;
    // Thirty different questions in turn: the service reads each new word with PostgreSQL once
    // (then from memory), so the first round of questions is the slower one.
    const questions = topics.flatMap((topic) => [
      `How do I get a ${topic} for my order?`,
      `What is your ${topic} policy?`,
      `Can I change the ${topic} details of an order placed online?`,
    ]);
    let asked = 0;
    const nextQuestion = () => questions[asked++ % questions.length]!;
    const tokens = Array.from({ length: tokenCount }, (_, i) => `tok${i} `);
    await fake.script({ tokens });

    const direct = () =>
      timeStream(
        `${fake.url}/chat/completions`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sk-fake' },
          body: JSON.stringify({ model: 'gpt-bench', stream: true, messages: [{ role: 'user', content: 'hello' }] }),
        },
        '"content":"tok',
        '"finish_reason":"stop"',
      );
    // Each question's form encoded once, as a browser sends a FormData: with its length, in one piece.
    const forms = new Map(
      await Promise.all(
        questions.map(async (question) => {
          const form = new FormData();
          form.set('agent_key', agentKey);
          form.set('query', question);
          const encoded = new Response(form);
          return [
            question,
            { type: encoded.headers.get('content-type')!, body: new Uint8Array(await encoded.arrayBuffer()) },
          ] as const;
        }),
      ),
    );
    const platform = () => {
      const form = forms.get(nextQuestion())!;
      return timeStream(
        `${base}/api/v1/chat/agent/stream`,
        {
          method: 'POST',
          headers: { 'x-api-token': apiToken, accept: 'text/event-stream', 'content-type': form.type },
          body: form.body,
        },
        'event: agent_text_chunk',
        'event: end',
      );
    };

    const pairs = async (count: number) => {
      const d: Timing[] = [];
      const p: Timing[] = [];
      for (let i = 0; i < count; i++) {
        d.push(await direct());
        p.push(await platform());
      }
      if (p.some((t) => t.events !== tokenCount) || d.some((t) => t.events !== tokenCount))
        throw new Error('a stream lost token events');
      return { d, p };
    };
    // The model client alone, in this process: the share of the added time that is the client's.
    const llm = createLlmClient({
      providers: [{ name: 'fake', type: 'openai', apiKey: 'sk-fake', baseUrl: fake.url, models: ['gpt-bench'] }],
    });
    const viaClient = async () => {
      const t0 = performance.now();
      let firstAt = -1;
      for await (const _delta of llm.stream({
        model: 'fake:gpt-bench',
        messages: [{ role: 'user', content: 'hello' }],
        temperature: 0,
        signal: new AbortController().signal,
      })) {
        if (firstAt < 0) firstAt = performance.now() - t0;
      }
      return firstAt;
    };
    console.log(
      `load average before: ${os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')} on ${os.cpus().length} cores`,
    );
    await pairs(30);
    for (let i = 0; i < 30; i++) await viaClient();
    const client: number[] = [];
    for (let i = 0; i < samples; i++) client.push(await viaClient());
    // The retrieval a turn runs, measured through its own endpoint (same engine, one request).
    const searchOnce = async () => {
      const t0 = performance.now();
      await api('POST', '/api/public/documents/search', { query: nextQuestion(), search_method: {}, categories: [] });
      return performance.now() - t0;
    };
    const health = async () => {
      const t0 = performance.now();
      await fetch(`${base}/healthz`).then((r) => r.text());
      return performance.now() - t0;
    };
    const sample = await api('POST', '/api/public/documents/search', {
      query: 'How do I get a refund for my order?',
      search_method: {},
      categories: [],
    });
    console.log(
      `knowledge base: ${tasks.length} articles; the turn's search returns ${(sample.results as unknown[]).length} passages for the prompt`,
    );
    const searches: number[] = [];
    const healths: number[] = [];
    for (let i = 0; i < samples; i++) {
      searches.push(await searchOnce());
      healths.push(await health());
    }
    const first = await pairs(samples);
    const dFirst = summary(
      'direct provider: first token',
      first.d.map((t) => t.firstToken),
    );
    const pFirst = summary(
      'platform stream: first token',
      first.p.map((t) => t.firstToken),
    );
    const pTtfb = summary(
      'platform stream: first byte (start event)',
      first.p.map((t) => t.ttfb),
    );
    console.log(`\n1. time to first token, ${samples} sequential streams each (direct and platform interleaved)`);
    const searchRow = summary('knowledge search request (retrieval engine)', searches);
    const healthRow = summary('GET /healthz (HTTP round trip)', healths);
    console.log(
      `${healthRow.line}\n${searchRow.line}\nretrieval ≈ ${(searchRow.p50 - healthRow.p50).toFixed(2)} ms p50 of the platform's work below (a turn always searches the agent's knowledge)`,
    );
    const clientFirst = summary('model client in-process: first token', client);
    for (const row of [dFirst, clientFirst, pFirst, pTtfb]) console.log(row.line);
    console.log(
      `of which the model client (p50): ${(clientFirst.p50 - dFirst.p50).toFixed(2)} ms; the platform's own work: ${(pFirst.p50 - clientFirst.p50).toFixed(2)} ms`,
    );
    // Each platform stream against the direct one run just before it: the two share the machine's
    // state of the moment, so the median of these differences is steadier than a difference of medians.
    const paired = summary(
      'added, paired (platform − direct before it)',
      first.p.map((t, i) => t.firstToken - first.d[i]!.firstToken),
    );
    console.log(paired.line);
    console.log(
      `added to the first token (p50): ${(pFirst.p50 - dFirst.p50).toFixed(2)} ms as a difference of medians, ${paired.p50.toFixed(2)} ms as the median of paired differences (target < 5 ms)`,
    );

    // 2. Tokens 2 ms apart, so that each one is its own read on both paths.
    await fake.script({ tokens, delayMs: 2 });
    const events = await pairs(Math.max(10, Math.round(samples / 4)));
    const perEvent = (t: Timing) => (t.lastToken - t.firstToken) / Math.max(1, t.events - 1);
    const dEvent = summary('direct provider: token interval', events.d.map(perEvent));
    const pEvent = summary('platform stream: token interval', events.p.map(perEvent));
    console.log(`\n2. per-event overhead, ${events.d.length} streams each of ${tokenCount} tokens sent 2 ms apart`);
    for (const row of [dEvent, pEvent]) console.log(row.line);
    console.log(`added per token event (p50): ${((pEvent.p50 - dEvent.p50) * 1000).toFixed(0)} µs`);
    // The first token of these streams arrives alone, as a model's does (part 1 sends the whole reply in one burst).
    const pacedFirst = summary(
      'added to the first token, paired, tokens paced',
      events.p.map((t, i) => t.firstToken - events.d[i]!.firstToken),
    );
    console.log(pacedFirst.line);

    // 3. Concurrent streams held open by a slow provider.
    const slowTokens = Array.from({ length: 5 }, (_, i) => `slow${i} `);
    await fake.script({ tokens: slowTokens, delayMs: (holdSeconds * 1000) / slowTokens.length });
    let open = 0;
    let peak = 0;
    const outcome = { started: 0, completed: 0, errors: 0, http: new Map<number, number>() };
    const t0 = performance.now();
    const runs = Array.from({ length: streamCount }, async () => {
      const form = new FormData();
      form.set('agent_key', agentKey);
      form.set('query', 'hold on');
      try {
        const res = await fetch(`${base}/api/v1/chat/agent/stream`, {
          method: 'POST',
          headers: { 'x-api-token': apiToken },
          body: form,
        });
        outcome.http.set(res.status, (outcome.http.get(res.status) ?? 0) + 1);
        const text = await (async () => {
          const reader = res.body!.getReader();
          const decoder = new TextDecoder();
          let all = '';
          let counted = false;
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            all += decoder.decode(value, { stream: true });
            if (!counted && all.includes('event: start')) {
              counted = true;
              outcome.started += 1;
              open += 1;
              peak = Math.max(peak, open);
            }
          }
          if (counted) open -= 1;
          return all;
        })();
        const chunks = text.split('event: agent_text_chunk').length - 1;
        if (chunks === slowTokens.length && text.includes('event: end') && !text.includes('event: error'))
          outcome.completed += 1;
        else outcome.errors += 1;
      } catch {
        outcome.errors += 1;
      }
    });
    await Promise.all(runs);
    const elapsed = (performance.now() - t0) / 1000;
    console.log(`\n3. ${streamCount} concurrent streams, each held ~${holdSeconds} s by the provider`);
    console.log(`HTTP statuses: ${[...outcome.http].map(([s, n]) => `${s}×${n}`).join(', ')}`);
    console.log(
      `load average after: ${os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      `started ${outcome.started}, peak open at once ${peak}, completed with every chunk and end ${outcome.completed}, errors ${outcome.errors}, wall time ${elapsed.toFixed(1)} s`,
    );
  } finally {
    await server.stop();
    await fake.close();
    await database.drop();
  }
}

await main();
