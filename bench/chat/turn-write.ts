/**
 * What a turn costs after its last token: the write of its records (both messages, the support
 * query, notifications) between the model's end and the reply, alone and under 50 conversations.
 *
 *   npx tsx bench/chat/turn-write.ts [--samples 200] [--tokens 20] [--conversations 50] [--duration 15] [--cpu-prof DIR] [--only sequential|concurrent]
 *
 * A fake OpenAI-compatible provider runs in its own process; the service runs in its own process
 * (BENCH_DATABASE_URL, else a fresh database, dropped afterwards) with two agents deployed on
 * web/us-east: `fake:gpt-bench` on that provider and `builtin:kb` (answers from one article).
 *
 * 1. Sequential, interleaved sample by sample (new conversation each time, then a turn continuing
 *    one): a stream's `end` after its last `agent_text_chunk` (the client sees the last token, then
 *    waits for the turn's records to be committed); a non-streamed reply after the last token of the
 *    stream run just before it (same agent, same reply); `GET /healthz` as the HTTP baseline.
 * 2. Concurrent: `conversations` clients, each a conversation of its own sending turns back to back
 *    (streamed) for `duration` s, once with builtin:kb and once with the fake provider; turns/s,
 *    p50/p99 of the turn and of `end` after the last token (the commit), the DB pool scraped from
 *    /metrics every 100 ms (open, waiting), and the service process's CPU (user + system, from
 *    /proc) per turn.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent as UndiciAgent, setGlobalDispatcher } from 'undici';
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
    tokens: { type: 'string', default: '20' },
    conversations: { type: 'string', default: '50' },
    duration: { type: 'string', default: '15' },
    'cpu-prof': { type: 'string' },
    only: { type: 'string' },
  },
});
const samples = Number(values.samples);
const tokenCount = Number(values.tokens);
const conversations = Number(values.conversations);
const duration = Number(values.duration);
const apiKey = 'sk_bench_turn_key_000000000001';
const apiToken = 'ct_bench_turn_token_0000000001';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

setGlobalDispatcher(
  new UndiciAgent({ connections: null, pipelining: 1, keepAliveTimeout: 60_000, bodyTimeout: 120_000 }),
);

const fmt = (n: number) => n.toFixed(2).padStart(7);
function summary(name: string, xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  return {
    p50: percentile(s, 50),
    p99: percentile(s, 99),
    line: `${name.padEnd(52)} p50 ${fmt(percentile(s, 50))} ms   p90 ${fmt(percentile(s, 90))} ms   p99 ${fmt(percentile(s, 99))} ms   (n ${xs.length})`,
  };
}

const api = apiClient(base, apiKey);

interface StreamTiming {
  total: number;
  lastToken: number;
  end: number;
  conversationId: string;
}

/** One streamed turn: times (from the request) of the last token event and of the `end` event. */
async function streamTurn(agentKey: string, query: string, conversationId?: string): Promise<StreamTiming> {
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v1/chat/agent/stream`, {
    method: 'POST',
    headers: { 'x-api-token': apiToken, accept: 'text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({
      agent_key: agentKey,
      query,
      ...(conversationId ? { conversation_id: conversationId } : {}),
    }),
  });
  if (!res.ok || !res.body) throw new Error(`stream: HTTP ${res.status} ${await res.text()}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let all = '';
  let lastToken = -1;
  let end = -1;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const now = performance.now() - t0;
    const text = decoder.decode(value, { stream: true });
    all += text;
    if (end < 0 && text.includes('event: end')) {
      end = now;
      if (text.split('event: end')[0]!.includes('event: agent_text_chunk')) lastToken = now;
    } else if (end < 0 && text.includes('event: agent_text_chunk')) lastToken = now;
  }
  const total = performance.now() - t0;
  if (end < 0 || lastToken < 0 || all.includes('event: error'))
    throw new Error(`stream without end: ${all.slice(-300)}`);
  const id = /"conversation_id":"([0-9a-f-]{36})"/.exec(all)?.[1];
  if (!id) throw new Error('stream without conversation id');
  return { total, lastToken, end, conversationId: id };
}

async function replyTurn(agentKey: string, query: string, conversationId?: string) {
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v1/chat/agent/chat`, {
    method: 'POST',
    headers: { 'x-api-token': apiToken, 'content-type': 'application/json' },
    body: JSON.stringify({
      agent_key: agentKey,
      query,
      ...(conversationId ? { conversation_id: conversationId } : {}),
    }),
  });
  const json = (await res.json()) as { conversation_id?: string; agent_response_text?: string };
  if (!res.ok || !json.agent_response_text) throw new Error(`chat: ${res.status} ${JSON.stringify(json)}`);
  return { total: performance.now() - t0, conversationId: json.conversation_id! };
}

/** user + system CPU seconds of a process so far (Linux /proc, USER_HZ 100). */
const cpuOf = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

async function poolSample(): Promise<{ total: number; waiting: number }> {
  const text = await fetch(`${base}/metrics`).then((r) => r.text());
  const read = (state: string) =>
    Number(new RegExp(`switchboard_db_pool_connections\\{pool="app",state="${state}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { total: read('total'), waiting: read('waiting') };
}

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
    const upload = await api('POST', '/api/public/documents/upload/article', {
      document_title: 'Delivery times',
      content:
        'Standard delivery takes three to five working days. Express delivery arrives the next working day when ordered before noon. '.repeat(
          4,
        ),
    });
    for (let i = 0; ; i++) {
      const state = await api('GET', `/api/public/documents/task/${String(upload.task_id)}`);
      if (state.status === 'completed') break;
      if (state.status === 'failed' || i > 300) throw new Error(`ingestion: ${String(state.status)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const keys: Record<'fake' | 'kb', string> = { fake: '', kb: '' };
    for (const [name, model] of [
      ['fake', 'fake:gpt-bench'],
      ['kb', 'builtin:kb'],
    ] as const) {
      const agent = await api('POST', '/api/public/agents', {
        title: `Bench ${name}`,
        model,
        temperature: 0,
        instructions: 'Answer briefly.',
      });
      const deployment = await api('POST', '/api/public/deployments', {
        deployable_type: 'agent',
        deployable_id: agent.id,
        channel: 'web',
        region_id: '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001',
      });
      await api('POST', `/api/public/deployments/${String(deployment.id)}/start`);
      for (let i = 0; ; i++) {
        const current = await api('GET', `/api/public/deployments/${String(deployment.id)}`);
        if (current.status === 'active') break;
        if (current.status === 'failed' || i > 200) throw new Error(`roll-out: ${String(current.status)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      keys[name] = `agent:${String(agent.id)}:web:us-east`;
    }
    await fake.script({ tokens: Array.from({ length: tokenCount }, (_, i) => `tok${i} `) });
    const question = 'How long does standard delivery take?';

    if (values.only !== 'concurrent') {
      const health = async () => {
        const t0 = performance.now();
        await fetch(`${base}/healthz`).then((r) => r.text());
        return performance.now() - t0;
      };
      const round = async () => {
        const fresh = await streamTurn(keys.fake, question);
        const reply = await replyTurn(keys.fake, question);
        const next = await streamTurn(keys.fake, question, fresh.conversationId);
        const replyNext = await replyTurn(keys.fake, question, reply.conversationId);
        return { fresh, reply, next, replyNext, health: await health() };
      };
      for (let i = 0; i < 30; i++) await round();
      console.log(`load average before: ${load()} on ${os.cpus().length} cores`);
      const rounds = [];
      for (let i = 0; i < samples; i++) rounds.push(await round());
      console.log(`\n1. after the last token, ${samples} sequential rounds (fake provider, ${tokenCount} tokens)`);
      for (const row of [
        summary(
          'GET /healthz (HTTP round trip)',
          rounds.map((r) => r.health),
        ),
        summary(
          'stream, new conversation: end − last token',
          rounds.map((r) => r.fresh.end - r.fresh.lastToken),
        ),
        summary(
          'stream, continued conversation: end − last token',
          rounds.map((r) => r.next.end - r.next.lastToken),
        ),
        summary(
          'reply, new conversation − stream last token',
          rounds.map((r) => r.reply.total - r.fresh.lastToken),
        ),
        summary(
          'reply, continued − stream last token',
          rounds.map((r) => r.replyNext.total - r.next.lastToken),
        ),
        summary(
          'stream, new conversation: last token',
          rounds.map((r) => r.fresh.lastToken),
        ),
      ])
        console.log(row.line);
    }

    if (values.only !== 'sequential') {
      console.log(`\n2. ${conversations} concurrent conversations, ${duration} s each, streamed turns`);
      for (const name of ['kb', 'fake'] as const) {
        const turns: StreamTiming[] = [];
        let errors = 0;
        let stop = false;
        const pool: { total: number; waiting: number }[] = [];
        const scraper = (async () => {
          while (!stop) {
            pool.push(await poolSample());
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })();
        const loadBefore = load();
        const cpu0 = cpuOf(server.process.pid!);
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: conversations }, async () => {
            let conversationId: string | undefined;
            while (performance.now() - t0 < duration * 1000) {
              try {
                const turn = await streamTurn(keys[name], question, conversationId);
                conversationId = turn.conversationId;
                turns.push(turn);
              } catch {
                errors += 1;
              }
            }
          }),
        );
        const wall = (performance.now() - t0) / 1000;
        const cpu = cpuOf(server.process.pid!) - cpu0;
        stop = true;
        await scraper;
        const waiting = pool.map((p) => p.waiting).sort((a, b) => a - b);
        console.log(`\n${name === 'kb' ? 'builtin:kb' : 'fake provider'} (load average at start ${loadBefore})`);
        console.log(
          `${(turns.length / wall).toFixed(1)} turns/s, ${turns.length} turns, ${errors} errors; service CPU ${cpu.toFixed(2)} s = ${((cpu / turns.length) * 1000).toFixed(2)} ms per turn (${((cpu / wall) * 100).toFixed(0)} % of a core)`,
        );
        console.log(
          summary(
            'turn (request → stream closed)',
            turns.map((t) => t.total),
          ).line,
        );
        console.log(
          summary(
            'end − last token (the turn’s write and commit)',
            turns.map((t) => t.end - t.lastToken),
          ).line,
        );
        console.log(
          `DB pool: open max ${Math.max(...pool.map((p) => p.total))}, waiting p50 ${percentile(waiting, 50)} p99 ${percentile(waiting, 99)} max ${waiting.at(-1)}; samples with waiters ${((pool.filter((p) => p.waiting > 0).length / pool.length) * 100).toFixed(0)} %`,
        );
      }
    }
    console.log(`\nload average after: ${load()}`);
  } finally {
    await server.stop();
    await fake.close();
    await database.drop();
  }
}

await main();
