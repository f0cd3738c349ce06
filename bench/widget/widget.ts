/**
 * The web widget's costs, paired in one run:
 * - the script: `dist/web/widget.js` (built from web/widget/ first) raw and gzipped (target ≤ 40 KB);
 * - a widget turn's added time over the chat family's own: `POST /widget/v1/{key}/messages`
 *   (visitor token, Origin checked, JSON body, conversation bound to the visitor, citations
 *   rewritten to links) against `POST /api/v1/chat/agent/stream` (multipart form, x-api-token),
 *   same agent and questions, time to the first token and to `end`, samples alternated (and which
 *   goes first alternated) after a warm-up round. Target: < 1 ms p50 added.
 *
 *   npx tsx bench/widget/widget.ts [--samples 200] [--tokens 20]
 *
 * The fake OpenAI provider runs in a process of its own and the service in another (as in
 * bench/chat/openai-compatible.ts), with a 40-article help centre so each turn's search feeds the prompt.
 */
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Agent as UndiciAgent, setGlobalDispatcher } from 'undici';
import { buildWidget } from '../../scripts/build-widget.js';
import {
  apiClient,
  benchDatabase,
  benchPort,
  deployAgent,
  fakeProviderEnv,
  startBenchService,
  startFakeProviderProcess,
  uploadHelpCentre,
} from '../lib/harness.js';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: '200' }, tokens: { type: 'string', default: '20' } },
});
const samples = Number(values.samples);
const tokenCount = Number(values.tokens);
const apiKey = 'sk_bench_widget_key_00000000001';
const apiToken = 'ct_bench_widget_token_000000001';
const ORIGIN = 'https://shop.example.com';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;
setGlobalDispatcher(new UndiciAgent({ connections: null, pipelining: 1, keepAliveTimeout: 60_000 }));

interface Timing {
  first: number;
  end: number;
}

/** Milliseconds to the first read holding `marker`, and to the end of the stream. */
async function timed(url: string, init: RequestInit, marker: string): Promise<Timing> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  if (!res.ok || !res.body) throw new Error(`${url}: HTTP ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  let first = -1;
  let text = '';
  for await (const value of res.body) {
    text += decoder.decode(value as Uint8Array, { stream: true });
    if (first < 0 && text.includes(marker)) first = performance.now() - t0;
  }
  const end = performance.now() - t0;
  if (first < 0 || !text.includes('event: end')) throw new Error(`${url}: no token or no end`);
  return { first, end };
}

const api = apiClient(base, apiKey);

async function setUp(): Promise<{ agentKey: string; key: string }> {
  await uploadHelpCentre(api);
  const agent = await api('POST', '/api/public/agents', {
    title: 'Bench agent',
    model: 'fake:gpt-bench',
    temperature: 0,
    instructions: 'Answer briefly.',
  });
  const deploymentId = await deployAgent(
    api,
    agent.id,
    'web',
    JSON.stringify({ widget: { allowed_origins: [ORIGIN] } }),
  );
  const widget = await api('GET', `/api/public/deployments/${deploymentId}/widget`);
  return { agentKey: `agent:${String(agent.id)}:web:us-east`, key: String(widget.key) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const bundle = await readFile(await buildWidget());
  const gzipped = gzipSync(bundle, { level: 9 }).length;
  console.log(
    `widget.js ${(bundle.length / 1024).toFixed(1)} KB, gzipped ${(gzipped / 1024).toFixed(1)} KB (target ≤ 40 KB)`,
  );

  const fake = await startFakeProviderProcess();
  const database = await benchDatabase();
  const server = await startBenchService(port, database, {
    BOOTSTRAP_API_KEY: apiKey,
    BOOTSTRAP_API_TOKEN: apiToken,
    RATE_LIMIT_WIDGET_VISITOR_PER_MINUTE: '10000000',
    RATE_LIMIT_WIDGET_ADDRESS_PER_MINUTE: '10000000',
    RATE_LIMIT_WIDGET_SESSIONS_PER_MINUTE: '10000000',
    ...fakeProviderEnv(fake.url),
  });
  try {
    const { agentKey, key } = await setUp();
    const session = await fetch(`${base}/widget/v1/${key}/sessions`, {
      method: 'POST',
      headers: { origin: ORIGIN, 'content-type': 'application/json' },
      body: '{}',
    });
    const visitorToken = ((await session.json()) as { visitor_token: string }).visitor_token;
    await fake.script({ tokens: Array.from({ length: tokenCount }, (_, i) => `tok${i} `) });
    const questions = ['refund', 'shipping', 'password', 'invoice', 'payment'].flatMap((topic) => [
      `How do I get a ${topic} for my order?`,
      `What is your ${topic} policy?`,
    ]);
    const chatFamily = async (question: string) => {
      const form = new FormData();
      form.set('agent_key', agentKey);
      form.set('query', question);
      const encoded = new Response(form);
      const body = new Uint8Array(await encoded.arrayBuffer());
      const type = encoded.headers.get('content-type')!;
      return timed(
        `${base}/api/v1/chat/agent/stream`,
        { method: 'POST', headers: { 'x-api-token': apiToken, 'content-type': type }, body },
        'event: agent_text_chunk',
      );
    };
    const widget = (question: string) =>
      timed(
        `${base}/widget/v1/${key}/messages`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${visitorToken}`,
            origin: ORIGIN,
            accept: 'text/event-stream',
            'content-type': 'application/json',
          },
          body: JSON.stringify({ text: question }),
        },
        'event: agent_text_chunk',
      );
    const arms = { family: chatFamily, widget } as const;
    const names = Object.keys(arms) as (keyof typeof arms)[];
    for (const question of questions) for (const name of names) await arms[name](question);
    const times: Record<keyof typeof arms, Timing[]> = { family: [], widget: [] };
    for (let i = 0; i < samples; i++) {
      const question = questions[i % questions.length]!;
      for (let k = 0; k < names.length; k++) {
        const name = names[(i + k) % names.length]!;
        times[name].push(await arms[name](question));
      }
    }
    console.log(`samples ${samples}, ${tokenCount} tokens a reply`);
    for (const part of ['first', 'end'] as const) {
      const family = times.family.map((t) => t[part]);
      const widgetTimes = times.widget.map((t) => t[part]);
      const paired = widgetTimes.map((ms, i) => ms - family[i]!);
      const what = part === 'first' ? 'first token' : 'whole turn (to end)';
      console.log(
        `${what}: chat family p50 ${median(family).toFixed(3)} ms, widget p50 ${median(widgetTimes).toFixed(3)} ms, ` +
          `added p50 (median of paired differences) ${median(paired).toFixed(3)} ms (target < 1 ms)`,
      );
    }
  } finally {
    await server.stop();
    await fake.close();
    await database.drop();
  }
}

await main();
