/**
 * MCP: what `search_knowledge` over `/mcp` adds to the knowledge search route.
 *
 *   npx tsx bench/mcp/search.ts [--samples 300] [--cpu-prof DIR]
 *
 * The service runs in its own process on BENCH_DATABASE_URL, else a fresh database on the local
 * PostgreSQL, dropped afterwards; a few help-centre articles are uploaded through the API. One MCP
 * session is opened with the official SDK's client (Streamable HTTP, API key as Bearer); then,
 * sample by sample with the same query, the three arms in a rotated order:
 *   (a) `POST /api/public/documents/search` (x-api-key, top_k 4, every lane);
 *   (b) `tools/call search_knowledge` (top_k 4) on the open session, through the SDK's client
 *       (no progress token: answered as plain JSON);
 *   (c) the same call with a progress token (`onprogress`): answered as an event stream.
 * Added time = (b) − (a) at p50 (target < 2 ms), and the median of the per-sample differences;
 * and the CPU time per call of each arm, the service's (/proc) and the client's.
 * `--cpu-prof DIR`: the service writes a CPU profile (`node --cpu-prof`) to DIR when it stops.
 */
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent as UndiciAgent, setGlobalDispatcher } from 'undici';
import { apiClient, benchDatabase, benchPort, percentile, startBenchService } from '../lib/harness.js';

const { values } = parseArgs({
  options: { samples: { type: 'string', default: '300' }, 'cpu-prof': { type: 'string' } },
});
const samples = Number(values.samples);
const apiKey = 'sk_bench_mcp_key_000000000001';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;
const api = apiClient(base, apiKey);
setGlobalDispatcher(new UndiciAgent({ connections: null, pipelining: 1, keepAliveTimeout: 60_000 }));

const ARTICLES = [
  ['Delivery times', 'Standard delivery takes three to five working days. Express delivery arrives the next day.'],
  ['Refunds', 'Refunds are paid to the original card within five business days of the return arriving.'],
  ['Returns', 'Items can be returned within 30 days in their original packaging with the receipt.'],
  ['Warranty', 'Every appliance has a two-year warranty covering defects in materials and workmanship.'],
];

/** USER_HZ: the unit of /proc/<pid>/stat's times. */
const CLOCK_TICKS = 100;

/** A process's CPU time so far (user + system), in clock ticks. */
async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const fmt = (n: number) => n.toFixed(2).padStart(7);
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99) };
};
const line = (name: string, xs: number[]) => {
  const s = stats(xs);
  return `${name.padEnd(44)} p50 ${fmt(s.p50)} ms   p95 ${fmt(s.p95)} ms   p99 ${fmt(s.p99)} ms`;
};

async function main() {
  const database = await benchDatabase();
  const profileDir = values['cpu-prof'];
  const server = await startBenchService(
    port,
    database,
    { DATABASE_POOL_MAX: '10', BOOTSTRAP_API_KEY: apiKey },
    profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  try {
    for (const [title, content] of ARTICLES) {
      const upload = await api('POST', '/api/public/documents/upload/article', { document_title: title, content });
      for (let i = 0; ; i++) {
        const state = await api('GET', `/api/public/documents/task/${String(upload.task_id)}`);
        if (state.status === 'completed') break;
        if (state.status === 'failed' || i > 300) throw new Error(`ingestion: ${String(state.status)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    await client.connect(transport);
    const query = 'How long do refunds take?';
    const route = async () => {
      const started = performance.now();
      const res = await fetch(`${base}/api/public/documents/search`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ query, top_k: 4, categories: [], search_method: {} }),
      });
      const body = (await res.json()) as { results: unknown[] };
      if (!res.ok || !body.results.length) throw new Error(`search route: ${res.status}`);
      return performance.now() - started;
    };
    const mcp = async (streamed: boolean) => {
      const started = performance.now();
      // A progress token (the SDK's client sends one with `onprogress`) asks for an event stream.
      const result = await client.callTool(
        { name: 'search_knowledge', arguments: { query, top_k: 4 } },
        undefined,
        streamed ? { onprogress: () => undefined } : {},
      );
      if (result.isError) throw new Error('search_knowledge failed');
      return performance.now() - started;
    };
    for (let i = 0; i < 30; i++) await Promise.all([route(), mcp(false), mcp(true)]);
    const a: number[] = [];
    const b: number[] = [];
    const c: number[] = [];
    // CPU time per arm, less sensitive to the machine's load than wall time: the service's (from
    // /proc, clock ticks summed over every call) and this client's (process.cpuUsage).
    const serviceCpu = [0, 0, 0];
    const clientCpu = [0, 0, 0];
    const pid = server.process.pid!;
    const runs = [() => route(), () => mcp(false), () => mcp(true)];
    const into = [a, b, c];
    for (let i = 0; i < samples; i++) {
      // Each sample runs the three arms in a rotated order (no arm always first).
      for (let k = 0; k < 3; k++) {
        const arm = (i + k) % 3;
        const [service, client] = [await cpuTicks(pid), process.cpuUsage()];
        into[arm]!.push(await runs[arm]!());
        serviceCpu[arm] = serviceCpu[arm]! + (await cpuTicks(pid)) - service;
        const used = process.cpuUsage(client);
        clientCpu[arm] = clientCpu[arm]! + (used.user + used.system) / 1000;
      }
    }
    const differences = a.map((x, i) => b[i]! - x);
    console.log(
      `samples ${samples}, load average ${os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}`,
    );
    console.log(line('(a) POST /api/public/documents/search', a));
    console.log(line('(b) MCP tools/call search_knowledge (JSON)', b));
    console.log(line('(c) the same with a progress token (SSE)', c));
    const added = stats(b).p50 - stats(a).p50;
    console.log(
      `added by MCP: p50(b) − p50(a) = ${added.toFixed(2)} ms; median per-sample difference ${stats(differences).p50.toFixed(2)} ms (target < 2 ms)`,
    );
    const streamed = c.map((x, i) => x - a[i]!);
    console.log(
      `added with an event stream: p50(c) − p50(a) = ${(stats(c).p50 - stats(a).p50).toFixed(2)} ms; median per-sample difference ${stats(streamed).p50.toFixed(2)} ms`,
    );
    const tick = 1000 / CLOCK_TICKS;
    const cpu = (arm: number) =>
      `service ${((serviceCpu[arm]! * tick) / samples).toFixed(2)} ms, client ${(clientCpu[arm]! / samples).toFixed(2)} ms`;
    console.log(`CPU per call: (a) ${cpu(0)}; (b) ${cpu(1)}; (c) ${cpu(2)}`);
  } finally {
    await client.close().catch(() => undefined);
    await server.stop();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
