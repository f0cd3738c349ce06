/**
 * What the OpenAI-compatible endpoint adds to a streamed turn: time to first token of
 * `POST /v1/chat/completions` and of `POST /v1/responses` (stream: true, JSON, Bearer token)
 * against the chat family's own `POST /api/v1/chat/agent/stream` (multipart form, x-api-token),
 * same agent, same questions, samples rotated so that all see the machine in the same state.
 * Targets: < 0.5 ms p50 added for each.
 *
 *   npx tsx bench/chat/openai-compatible.ts [--samples 300] [--tokens 20]
 *
 * The fake OpenAI provider runs in a process of its own and the service in another (as in
 * bench/chat/stream.ts), with a 40-article help centre so each turn's search feeds the prompt.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent as UndiciAgent, setGlobalDispatcher } from 'undici';
import {
  apiClient,
  benchDatabase,
  benchPort,
  fakeProviderEnv,
  startBenchService,
  startFakeProviderProcess,
  deployAgent,
  uploadHelpCentre,
} from '../lib/harness.js';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: '300' }, tokens: { type: 'string', default: '20' } },
});
const samples = Number(values.samples);
const tokenCount = Number(values.tokens);
const apiKey = 'sk_bench_chat_key_000000000001';
const apiToken = 'ct_bench_chat_token_0000000001';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;
setGlobalDispatcher(new UndiciAgent({ connections: null, pipelining: 1, keepAliveTimeout: 60_000 }));

/** Milliseconds from sending the request to the first read that holds `marker`; reads to the end. */
async function firstToken(url: string, init: RequestInit, marker: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  if (!res.ok || !res.body) throw new Error(`${url}: HTTP ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  let first = -1;
  for await (const value of res.body) {
    if (first < 0 && decoder.decode(value as Uint8Array, { stream: true }).includes(marker))
      first = performance.now() - t0;
  }
  if (first < 0) throw new Error(`${url}: no token`);
  return first;
}

const api = apiClient(base, apiKey);

async function setUp(): Promise<string> {
  await uploadHelpCentre(api);
  const agent = await api('POST', '/api/public/agents', {
    title: 'Bench agent',
    model: 'fake:gpt-bench',
    temperature: 0,
    instructions: 'Answer briefly.',
  });
  await deployAgent(api, agent.id, 'web');
  return `agent:${String(agent.id)}:web:us-east`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const fake = await startFakeProviderProcess();
  const database = await benchDatabase();
  const server = await startBenchService(port, database, {
    BOOTSTRAP_API_KEY: apiKey,
    BOOTSTRAP_API_TOKEN: apiToken,
    ...fakeProviderEnv(fake.url),
  });
  try {
    const agentKey = await setUp();
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
      return firstToken(
        `${base}/api/v1/chat/agent/stream`,
        { method: 'POST', headers: { 'x-api-token': apiToken, 'content-type': type }, body },
        'event: agent_text_chunk',
      );
    };
    const openAi = (question: string) =>
      firstToken(
        `${base}/v1/chat/completions`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: agentKey, stream: true, messages: [{ role: 'user', content: question }] }),
        },
        '"content":"tok',
      );
    const responses = (question: string) =>
      firstToken(
        `${base}/v1/responses`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${apiToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: agentKey, stream: true, input: question }),
        },
        '"delta":"tok',
      );
    const arms = { family: chatFamily, completions: openAi, responses } as const;
    const names = Object.keys(arms) as (keyof typeof arms)[];
    for (const question of questions) for (const name of names) await arms[name](question);
    const times: Record<keyof typeof arms, number[]> = { family: [], completions: [], responses: [] };
    for (let i = 0; i < samples; i++) {
      const question = questions[i % questions.length]!;
      // Rotate which goes first, so that none always follows another.
      for (let k = 0; k < names.length; k++) {
        const name = names[(i + k) % names.length]!;
        times[name].push(await arms[name](question));
      }
    }
    const paired = (name: 'completions' | 'responses') => times[name].map((ms, i) => ms - times.family[i]!);
    console.log(`samples ${samples}, ${tokenCount} tokens a reply`);
    console.log(`chat family stream first token p50 ${median(times.family).toFixed(3)} ms`);
    for (const name of ['completions', 'responses'] as const) {
      const route = name === 'completions' ? '/v1/chat/completions' : '/v1/responses';
      console.log(`${route} first token p50 ${median(times[name]).toFixed(3)} ms`);
      console.log(
        `  added p50 (median of paired differences) ${median(paired(name)).toFixed(3)} ms  (target < 0.5 ms)`,
      );
    }
  } finally {
    await server.stop();
    await fake.close();
    await database.drop();
  }
}

await main();
