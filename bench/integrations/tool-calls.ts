/**
 * Agents act: what one tool call adds to a chat turn over the vendor's own latency, and turns/s
 * with one tool call per turn.
 *
 *   npx tsx bench/integrations/tool-calls.ts [--samples 200] [--duration 10] [--connections 20]
 *
 * The Shopify and Slack peers of the tests run in a process of their own, as a real vendor does;
 * the service runs in its own process (ALLOW_PRIVATE_URLS=true, so that integrations may point at
 * the local peers through `base_url`) on BENCH_DATABASE_URL, else a fresh database on the local
 * PostgreSQL, dropped afterwards. Through the API: a Shopify and a Slack integration on the peers,
 * a `builtin:kb` agent linked to both and one with no integration, each deployed on web/us-east,
 * and a help-centre article the second answers from.
 *
 * 1. Sequential, alternating sample by sample:
 *    (a) the Shopify peer called directly from the bench with the GraphQL order query the
 *        connector sends (baseline: the vendor's own latency, across processes);
 *    (b) `POST /api/v1/chat/agent/chat` (non-streamed, the whole turn) "Where is my order 1042?"
 *        to the agent with tools: one `shopify_lookup_order` call, its answer, the turn's records
 *        (support query with `tools_used`, a `tool_usage` notification);
 *    (c) the same turn shape to the agent with no integration, a question it answers from its
 *        knowledge.
 *    Added time of a tool call = (b) − (c) − (a) at p50 (target < 3 ms), and as the median of the
 *    per-round differences.
 * 2. Sustained: autocannon with `connections` clients for `duration` s, turns without a tool and
 *    turns with one tool call, alternated twice; turns/s and the ratio.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Agent as UndiciAgent, setGlobalDispatcher } from 'undici';
import { ORDERS_QUERY, orderSearch } from '../../src/adapters/connectors/shopify/shopify.graphql.js';
import {
  apiClient,
  benchDatabase,
  benchPort,
  formatResult,
  percentile,
  ROOT,
  startBenchService,
} from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '200' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
  },
});
const samples = Number(values.samples);
const duration = Number(values.duration);
const connections = Number(values.connections);
const apiKey = 'sk_bench_tools_key_00000000001';
const apiToken = 'ct_bench_tools_token_000000001';
const US_EAST = '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;

setGlobalDispatcher(new UndiciAgent({ connections: null, pipelining: 1, keepAliveTimeout: 60_000 }));

interface Peers {
  shopify: string;
  shopifyToken: string;
  slack: string;
  slackToken: string;
}

async function startPeers(): Promise<Peers & { close(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'bench/integrations/vendor-peers-process.ts')],
    {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const closed = new Promise((resolve) => child.on('exit', resolve));
  const peers = await new Promise<Peers>((resolve, reject) => {
    child.once('message', (message: Peers) => resolve(message));
    child.once('exit', () => reject(new Error('the vendor peers exited')));
  });
  return {
    ...peers,
    async close() {
      child.kill('SIGTERM');
      await closed;
    },
  };
}

const api = apiClient(base, apiKey);

const fmt = (n: number) => n.toFixed(2).padStart(7);
function summary(name: string, xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  return {
    p50: percentile(s, 50),
    p95: percentile(s, 95),
    line: `${name.padEnd(52)} p50 ${fmt(percentile(s, 50))} ms   p95 ${fmt(percentile(s, 95))} ms   p99 ${fmt(percentile(s, 99))} ms`,
  };
}
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

async function deploy(agentId: string) {
  const deployment = await api('POST', '/api/public/deployments', {
    deployable_type: 'agent',
    deployable_id: agentId,
    channel: 'web',
    region_id: US_EAST,
  });
  await api('POST', `/api/public/deployments/${String(deployment.id)}/start`);
  for (let i = 0; i < 300; i++) {
    const current = await api('GET', `/api/public/deployments/${String(deployment.id)}`);
    if (current.status === 'active') return;
    if (current.status === 'failed') throw new Error(`roll-out failed: ${String(current.error)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the roll-out did not finish');
}

async function main() {
  const peers = await startPeers();
  const database = await benchDatabase();
  const server = await startBenchService(
    port,
    database,
    { DATABASE_POOL_MAX: '20', BOOTSTRAP_API_KEY: apiKey, BOOTSTRAP_API_TOKEN: apiToken, ALLOW_PRIVATE_URLS: 'true' },
    { cleanUp: () => Promise.all([database.drop(), peers.close()]) },
  );
  try {
    const upload = await api('POST', '/api/public/documents/upload/article', {
      document_title: 'Delivery times',
      content:
        'Standard delivery takes three to five working days. Express delivery arrives the next working day when ordered before 2 pm. ' +
        'Delivery is free for orders above 50 euros.',
    });
    for (let i = 0; ; i++) {
      const state = await api('GET', `/api/public/documents/task/${String(upload.task_id)}`);
      if (state.status === 'completed') break;
      if (state.status === 'failed' || i > 300) throw new Error(`ingestion: ${String(state.status)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const shop = await api('POST', '/api/public/integrations', {
      name: 'Shop',
      type: 'shopify',
      config: { shop_domain: 'acme.myshopify.com', access_token: peers.shopifyToken, base_url: peers.shopify },
    });
    const slack = await api('POST', '/api/public/integrations', {
      name: 'Team Slack',
      type: 'slack',
      config: { bot_token: peers.slackToken, channel: 'C0SUPPORT', base_url: peers.slack },
    });
    for (const id of [shop.id, slack.id]) {
      const test = await api('POST', `/api/public/integrations/${String(id)}/test`);
      if (test.ok !== true) throw new Error(`integration test: ${JSON.stringify(test)}`);
    }
    const withTools = await api('POST', '/api/public/agents', {
      title: 'Shop helper',
      model: 'builtin:kb',
      integration_ids: [shop.id, slack.id],
    });
    const withoutTools = await api('POST', '/api/public/agents', { title: 'Help centre', model: 'builtin:kb' });
    await deploy(String(withTools.id));
    await deploy(String(withoutTools.id));

    const chatBody = (agentId: unknown, query: string) =>
      JSON.stringify({ agent_key: `agent:${String(agentId)}:web:us-east`, query });
    const toolBody = chatBody(withTools.id, 'Where is my order 1042?');
    const plainBody = chatBody(withoutTools.id, 'How long does standard delivery take?');
    const chatHeaders = { 'x-api-token': apiToken, 'content-type': 'application/json' };
    const turn = async (body: string, expect: string) => {
      const t0 = performance.now();
      const res = await fetch(`${base}/api/v1/chat/agent/chat`, { method: 'POST', headers: chatHeaders, body });
      const json = (await res.json()) as { agent_response_text?: string };
      const elapsed = performance.now() - t0;
      if (!res.ok || !json.agent_response_text?.includes(expect))
        throw new Error(`chat turn: ${res.status} ${JSON.stringify(json)}`);
      return elapsed;
    };
    const shopifyBody = JSON.stringify({
      query: ORDERS_QUERY,
      variables: { query: orderSearch({ order_number: '1042' }), first: 5 },
    });
    const direct = async () => {
      const t0 = performance.now();
      const res = await fetch(`${peers.shopify}/admin/api/2025-07/graphql.json`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-shopify-access-token': peers.shopifyToken },
        body: shopifyBody,
      });
      const json = (await res.json()) as { data?: { orders?: { nodes?: unknown[] } } };
      const elapsed = performance.now() - t0;
      if (!res.ok || json.data?.orders?.nodes?.length !== 1) throw new Error(`direct: ${res.status}`);
      return elapsed;
    };
    const toolTurn = () => turn(toolBody, 'Order #1042: FULFILLED');
    const plainTurn = () => turn(plainBody, 'three to five working days');

    console.log(`load average before: ${load()} on ${os.cpus().length} cores`);
    for (let i = 0; i < 30; i++) {
      await direct();
      await toolTurn();
      await plainTurn();
    }
    const a: number[] = [];
    const b: number[] = [];
    const c: number[] = [];
    for (let i = 0; i < samples; i++) {
      a.push(await direct());
      b.push(await toolTurn());
      c.push(await plainTurn());
    }
    const rows = [
      summary('(a) Shopify peer directly (GraphQL order query)', a),
      summary('(b) chat turn with one tool call (order 1042)', b),
      summary('(c) chat turn without a tool (knowledge answer)', c),
    ];
    const paired = summary(
      'added, per round: b − c − a',
      b.map((x, i) => x - c[i]! - a[i]!),
    );
    console.log(`\n1. ${samples} rounds of (a), (b), (c), sequential`);
    for (const row of [...rows, paired]) console.log(row.line);
    console.log(
      `added time of a tool call (p50): ${(rows[1]!.p50 - rows[2]!.p50 - rows[0]!.p50).toFixed(2)} ms as b − c − a of the medians, ${paired.p50.toFixed(2)} ms as the median of per-round differences (target < 3 ms)`,
    );

    const cannon = (body: string, seconds: number) =>
      autocannon({
        url: `${base}/api/v1/chat/agent/chat`,
        method: 'POST',
        headers: chatHeaders,
        body,
        connections,
        duration: seconds,
      });
    await cannon(plainBody, 2);
    await cannon(toolBody, 2);
    console.log(`\n2. sustained, ${connections} connections, ${duration} s per run, alternated`);
    const plain: autocannon.Result[] = [];
    const tool: autocannon.Result[] = [];
    for (let round = 1; round <= 2; round++) {
      plain.push(await cannon(plainBody, duration));
      console.log(formatResult(`turns without a tool (${round})`, plain.at(-1)!));
      tool.push(await cannon(toolBody, duration));
      console.log(formatResult(`turns with one tool call (${round})`, tool.at(-1)!));
    }
    const mean = (results: autocannon.Result[]) =>
      results.reduce((sum, result) => sum + result.requests.average, 0) / results.length;
    console.log(
      `turns/s with one tool call: ${mean(tool).toFixed(0)} vs ${mean(plain).toFixed(0)} without = ${((mean(tool) / mean(plain)) * 100).toFixed(1)} %`,
    );
    console.log(`load average after: ${load()}`);
  } finally {
    await server.stop();
    await peers.close();
    await database.drop();
  }
}

await main();
