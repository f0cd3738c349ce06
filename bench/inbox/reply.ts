/**
 * From a person's reply to its arrival on the customer's events stream (DESIGN §13): two
 * instances of the service on one database; a customer asks for a person on instance A, a person
 * takes the conversation over; the customer's client follows the conversation's events
 * (`GET /api/v1/chat/conversations/{id}/events`) on A (same instance) and on B (the other
 * instance: LISTEN/NOTIFY, the message read there). Each sample posts a reply on A
 * (`POST /api/public/conversations/{id}/messages`) and times, from the moment it is sent, the
 * `message` event's arrival on both streams and the 201 itself; `GET /healthz` on A is the
 * baseline round trip of the same run. One sample at a time, after a warm-up.
 *
 *   npx tsx bench/inbox/reply.ts [--samples 300] [--warmup 30]
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent as UndiciAgent, setGlobalDispatcher } from 'undici';
import { readFrames, type Frame } from '../../test/helpers/sse-client.js';
import { apiClient, benchDatabase, benchPort, percentile, startBenchService, until } from '../lib/harness.js';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: '300' }, warmup: { type: 'string', default: '30' } },
});
const samples = Number(values.samples);
const warmup = Number(values.warmup);
const apiKey = 'sk_bench_inbox_key_00000000001';
const apiToken = 'ct_bench_inbox_token_0000000001';
const US_EAST = '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001';
setGlobalDispatcher(new UndiciAgent({ connections: null, pipelining: 1, keepAliveTimeout: 60_000 }));

const database = await benchDatabase('switchboard_bench_inbox');
const portA = benchPort();
const portB = portA + 1;
const env = { BOOTSTRAP_API_KEY: apiKey, BOOTSTRAP_API_TOKEN: apiToken };
const a = await startBenchService(portA, database, env);
const b = await startBenchService(
  portB,
  database,
  { ...env, RUN_WORKERS: 'false' },
  {
    cleanUp: async () => {
      await a.stop();
      await database.drop();
    },
  },
);
const api = apiClient(a.base, apiKey);

async function setUp(): Promise<string> {
  const agent = await api('POST', '/api/public/agents', { title: 'Helper' });
  const deployment = await api('POST', '/api/public/deployments', {
    deployable_type: 'agent',
    deployable_id: agent.id,
    channel: 'api',
    region_id: US_EAST,
  });
  await api('POST', `/api/public/deployments/${String(deployment.id)}/start`);
  await until(
    async () => (await api('GET', `/api/public/deployments/${String(deployment.id)}`)).status === 'active',
    'roll-out',
  );
  const res = await fetch(`${a.base}/api/v1/chat/agent/chat`, {
    method: 'POST',
    headers: { 'x-api-token': apiToken, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_key: deployment.agent_key, query: 'I want to talk to a person', user: 'cust-bench' }),
  });
  const { conversation_id } = (await res.json()) as { conversation_id: string };
  await api('POST', `/api/public/conversations/${conversation_id}/takeover`);
  return conversation_id;
}

/** A customer's events stream on `base`: resolves each `message` event's id as it arrives. */
async function follow(base: string, conversationId: string, abort: AbortSignal) {
  const response = await fetch(`${base}/api/v1/chat/conversations/${conversationId}/events`, {
    headers: { 'x-api-token': apiToken },
    signal: abort,
  });
  const frames = readFrames(response);
  await frames.next(); // the current status
  const arrivals = new Map<string, (at: number) => void>();
  void (async () => {
    try {
      for await (const frame of frames as AsyncGenerator<Frame>) {
        if (frame.type !== 'message') continue;
        const id = (frame.data as unknown as { message: { content: string } }).message.content;
        arrivals.get(id)?.(performance.now());
      }
    } catch {
      // aborted at the end
    }
  })();
  return (marker: string) => new Promise<number>((resolve) => arrivals.set(marker, resolve));
}

const stats = (name: string, values: number[], baseline: number) => {
  const sorted = [...values].sort((x, y) => x - y);
  const p50 = percentile(sorted, 50);
  return `${name.padEnd(44)} p50 ${p50.toFixed(2).padStart(7)} ms   p95 ${percentile(sorted, 95).toFixed(2).padStart(7)} ms   max ${sorted.at(-1)!.toFixed(2).padStart(7)} ms   ×${(p50 / baseline).toFixed(1)} of /healthz`;
};

try {
  const conversationId = await setUp();
  const abort = new AbortController();
  const [onA, onB] = await Promise.all([
    follow(a.base, conversationId, abort.signal),
    follow(b.base, conversationId, abort.signal),
  ]);
  const health: number[] = [];
  const replied: number[] = [];
  const sameInstance: number[] = [];
  const otherInstance: number[] = [];
  for (let i = 0; i < warmup + samples; i++) {
    let started = performance.now();
    await fetch(`${a.base}/healthz`).then((res) => res.arrayBuffer());
    const healthMs = performance.now() - started;
    const marker = `Reply ${i} from a person`;
    const arrivedA = onA(marker);
    const arrivedB = onB(marker);
    started = performance.now();
    const res = await fetch(`${a.base}/api/public/conversations/${conversationId}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ content: marker }),
    });
    await res.arrayBuffer();
    const repliedMs = performance.now() - started;
    if (res.status !== 201) throw new Error(`reply: ${res.status}`);
    const [atA, atB] = await Promise.all([arrivedA, arrivedB]);
    if (i < warmup) continue;
    health.push(healthMs);
    replied.push(repliedMs);
    sameInstance.push(atA - started);
    otherInstance.push(atB - started);
  }
  abort.abort();
  const baseline = percentile(
    [...health].sort((x, y) => x - y),
    50,
  );
  console.log(`inbox reply → customer's events stream: ${samples} samples after ${warmup} warm-up`);
  console.log(
    `load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  console.log(stats('GET /healthz (baseline round trip)', health, baseline));
  console.log(stats('POST …/messages → 201', replied, baseline));
  console.log(stats('reply → message event, same instance', sameInstance, baseline));
  console.log(stats('reply → message event, other instance', otherInstance, baseline));
} finally {
  await Promise.all([a.stop(), b.stop()]);
  await database.drop();
}
