/**
 * A deployment on Slack: how fast an inbound event is acknowledged, and how long from the event
 * to the reply reaching Slack beyond the model's own time.
 *
 *   npx tsx bench/channels/slack-events.ts [--samples 200] [--model-ms 100] [--against DIR] [--cpu-prof DIR]
 *
 * The service runs in its own process (BENCH_DATABASE_URL, else a fresh database, dropped
 * afterwards) with its workers on; the fake OpenAI-compatible provider in another, scripted to
 * take `model-ms` (5 tokens, evenly spaced); the Slack peer of the tests (Web API + signer) in
 * this process. An agent on that model is deployed on slack through the API (the roll-out's live
 * check calls the peer's auth.test). Then, one after another, `samples` signed DMs, each a new
 * thread: the acknowledgement time (request sent → 200 received) and the time from the event to
 * the reply's arrival at the peer's chat.postMessage. The baseline, interleaved sample by sample:
 * the same question as a whole-reply chat turn (`POST /api/v1/chat/agent/chat`) on a web
 * deployment of the same agent — what the model and the turn take without the channel.
 *
 * `--against DIR`: a second checkout of the project (its own node_modules, or a link to these)
 * runs as a second service on its own database at the same time, and every sample is taken on
 * both, in alternating order — two versions of the code compared under the same machine load.
 * `--cpu-prof DIR`: the service (of this checkout) writes a `node --cpu-prof` profile to DIR when
 * it stops.
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startSlackPeer } from '../../test/helpers/slack-peer.js';
import {
  apiClient,
  benchDatabase,
  benchPort,
  fakeProviderEnv,
  percentile,
  startBenchService,
  startFakeProviderProcess,
  deployAgent,
  type BenchDatabase,
  type BenchService,
} from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '200' },
    'model-ms': { type: 'string', default: '100' },
    against: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const samples = Number(values.samples);
const profileDir = values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined;
const modelMs = Number(values['model-ms']);
const apiKey = 'sk_bench_channel_key_0000000001';
const apiToken = 'ct_bench_channel_token_00000001';

const slack = await startSlackPeer();
const fake = await startFakeProviderProcess();
await fake.script({ tokens: ['The ', 'answer ', 'is ', 'forty-', 'two.'], delayMs: modelMs / 5 });

interface Arm {
  name: string;
  service: BenchService;
  database: BenchDatabase;
  slackDeployment: string;
  agentId: unknown;
  ack: number[];
  reply: number[];
  chatTurn: number[];
}
const arms: Arm[] = [];

/** A service of the checkout at `root` on a database of its own, an agent deployed on slack and web. */
async function startArm(name: string, root: string | undefined): Promise<Arm> {
  const database = await benchDatabase('switchboard_bench_channels');
  const service = await startBenchService(
    benchPort(),
    database,
    {
      BOOTSTRAP_API_KEY: apiKey,
      BOOTSTRAP_API_TOKEN: apiToken,
      ALLOW_PRIVATE_URLS: 'true',
      ...fakeProviderEnv(fake.url),
    },
    {
      root,
      cleanUp: () => database.drop(),
      ...(profileDir && !root ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {}),
    },
  );
  const arm: Arm = {
    name,
    service,
    database,
    slackDeployment: '',
    agentId: null,
    ack: [],
    reply: [],
    chatTurn: [],
  };
  arms.push(arm);
  const api = apiClient(service.base, apiKey);
  const agent = await api('POST', '/api/public/agents', {
    title: 'Bench',
    instructions: 'Answer.',
    model: 'fake:gpt-bench',
  });
  const integration = await api('POST', '/api/public/integrations', {
    name: 'Slack',
    type: 'slack',
    config: {
      bot_token: slack.token,
      channel: 'C0SUPPORT',
      signing_secret: slack.signingSecret,
      base_url: slack.baseUrl,
    },
  });
  arm.slackDeployment = await deployAgent(api, agent.id, 'slack', JSON.stringify({ integration_id: integration.id }));
  await deployAgent(api, agent.id, 'web', '{}');
  arm.agentId = agent.id;
  return arm;
}

/** One sample on an arm: a signed DM (acknowledgement, then the reply at the peer), then the chat turn. */
async function sample(arm: Arm, i: number) {
  const ts = `1700000000.${String(i + 100).padStart(6, '0')}`;
  const body = slack.envelope({
    type: 'message',
    channel: 'D0BENCH',
    channel_type: 'im',
    user: 'U0BENCH',
    text: `Question ${i}?`,
    ts,
  });
  const before = slack.posted.length;
  const started = performance.now();
  const res = await fetch(`${arm.service.base}/channels/slack/${arm.slackDeployment}/events`, {
    method: 'POST',
    headers: slack.sign(body),
    body,
  });
  await res.text();
  const acked = performance.now();
  if (res.status !== 200) throw new Error(`${arm.name}: event answered ${res.status}`);
  while (slack.posted.length === before) await new Promise((resolve) => setImmediate(resolve));
  const replied = performance.now();
  const turnStarted = performance.now();
  const turn = await fetch(`${arm.service.base}/api/v1/chat/agent/chat`, {
    method: 'POST',
    headers: { 'x-api-token': apiToken, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_key: `agent:${String(arm.agentId)}:web:us-east`, query: `Question ${i}?` }),
  });
  await turn.text();
  const turnEnded = performance.now();
  if (i < 0) return; // warm-up
  arm.ack.push(acked - started);
  arm.reply.push(replied - started);
  arm.chatTurn.push(turnEnded - turnStarted);
}

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

try {
  await startArm(values.against ? 'this checkout' : '', undefined);
  if (values.against) await startArm(path.resolve(values.against), path.resolve(values.against));
  const loadBefore = os.loadavg();
  for (let i = -10; i < samples; i++) {
    // Alternating order: neither arm always runs right after the other's turn.
    const order = i % 2 === 0 ? arms : [...arms].reverse();
    for (const arm of order) await sample(arm, i);
  }
  const load = (values: number[]) => values.map((n) => n.toFixed(2)).join(' ');
  console.log(
    `samples ${samples}, model scripted to ${modelMs} ms, load average ${load(loadBefore)} at the start, ${load(os.loadavg())} at the end`,
  );
  for (const arm of arms) {
    const a = stats(arm.ack);
    const r = stats(arm.reply);
    const c = stats(arm.chatTurn);
    if (arm.name) console.log(`— ${arm.name}`);
    console.log(`acknowledgement of a signed event      p50 ${ms(a.p50)}   p99 ${ms(a.p99)}   mean ${ms(a.mean)}`);
    console.log(`event → reply at the Slack peer         p50 ${ms(r.p50)}   p99 ${ms(r.p99)}`);
    console.log(`baseline: whole chat turn (same model)  p50 ${ms(c.p50)}   p99 ${ms(c.p99)}`);
    console.log(
      `event → reply beyond the model's time   p50 ${ms(r.p50 - modelMs)}   (beyond a whole chat turn: p50 ${ms(r.p50 - c.p50)})`,
    );
  }
} finally {
  for (const arm of arms) await arm.service.stop();
  await fake.close();
  await slack.close();
  for (const arm of arms) await arm.database.drop();
}
