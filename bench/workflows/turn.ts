/**
 * What a workflow adds to a whole chat turn: `POST /api/v1/chat/agent/chat` through a workflow's
 * key (rules router; the question routed to the billing agent) against the same question through
 * the billing agent's own key, same service, samples paired and alternated after a warm-up. Both
 * agents are built-in responders (no model call), so the turn is the service's own work: the
 * difference is what the workflow costs (the cached workflow, the rules, a new conversation that
 * names it).
 *
 *   npx tsx bench/workflows/turn.ts [--samples 300]
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent as UndiciAgent, setGlobalDispatcher } from 'undici';
import { apiClient, benchDatabase, benchPort, startBenchService, until } from '../lib/harness.js';

const { values } = parseArgs({ options: { samples: { type: 'string', default: '300' } } });
const samples = Number(values.samples);
const apiKey = 'sk_bench_workflow_key_0000001';
const apiToken = 'ct_bench_workflow_token_000001';
const port = benchPort();
const base = `http://127.0.0.1:${port}`;
const US_EAST = '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001';
setGlobalDispatcher(new UndiciAgent({ connections: null, pipelining: 1, keepAliveTimeout: 60_000 }));

const api = apiClient(base, apiKey);

async function deploy(type: 'agent' | 'workflow', id: string, channel: string) {
  const deployment = await api('POST', '/api/public/deployments', {
    deployable_type: type,
    deployable_id: id,
    channel,
    region_id: US_EAST,
  });
  await api('POST', `/api/public/deployments/${String(deployment.id)}/start`);
  await until(
    async () => (await api('GET', `/api/public/deployments/${String(deployment.id)}`)).status === 'active',
    'roll-out',
  );
  return String(deployment.agent_key);
}

async function setUp() {
  const company = await api('GET', '/api/public/companies/current');
  const collection = async (name: string, articles: [string, string][]) => {
    const { id } = await api('POST', '/api/public/collections', { name, company_id: company.id });
    for (const [title, content] of articles) {
      const upload = await api('POST', '/api/public/documents/upload/article', {
        document_title: title,
        content,
        collection_id: id,
      });
      await until(
        async () => (await api('GET', `/api/public/documents/task/${String(upload.task_id)}`)).status === 'completed',
        'ingestion',
      );
    }
    return String(id);
  };
  const billingDocs = await collection('Billing', [
    ['Invoices', 'Q: When is the invoice sent?\nA: Invoices are emailed on the first day of every month.'],
    ['Refunds', 'Q: How long does a refund take?\nA: Refunds reach the card within 5 business days.'],
  ]);
  const techDocs = await collection('Technical', [
    ['SDK', 'Q: How do I install the SDK?\nA: Run npm install switchboard-sdk and set SWITCHBOARD_KEY.'],
  ]);
  const billing = await api('POST', '/api/public/agents', { title: 'Billing', collection_ids: [billingDocs] });
  const tech = await api('POST', '/api/public/agents', { title: 'Tech', collection_ids: [techDocs] });
  const workflow = await api('POST', '/api/public/workflows', {
    name: 'Desk',
    default_agent_id: tech.id,
    steps: [
      { name: 'billing', agent_id: billing.id, when: { query_types: ['billing'], keywords: ['invoice', 'فاتورة'] } },
      { name: 'technical', agent_id: tech.id, when: { query_types: ['technical_support'] } },
    ],
  });
  return {
    agentKey: await deploy('agent', String(billing.id), 'web'),
    workflowKey: await deploy('workflow', String(workflow.id), 'desk'),
  };
}

async function turn(agentKey: string, query: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v1/chat/agent/chat`, {
    method: 'POST',
    headers: { 'x-api-token': apiToken, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_key: agentKey, query }),
  });
  const body = (await res.json()) as { agent_response_text?: string };
  const elapsed = performance.now() - t0;
  if (!res.ok || !body.agent_response_text?.includes('Invoices are emailed'))
    throw new Error(`${agentKey}: HTTP ${res.status} ${JSON.stringify(body)}`);
  return elapsed;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const database = await benchDatabase();
const server = await startBenchService(port, database, { BOOTSTRAP_API_KEY: apiKey, BOOTSTRAP_API_TOKEN: apiToken });
try {
  const { agentKey, workflowKey } = await setUp();
  const query = 'When is the invoice sent?';
  for (let i = 0; i < 30; i++) {
    await turn(agentKey, query);
    await turn(workflowKey, query);
  }
  const direct: number[] = [];
  const routed: number[] = [];
  const paired: number[] = [];
  for (let i = 0; i < samples; i++) {
    let a: number;
    let b: number;
    if (i % 2) {
      a = await turn(agentKey, query);
      b = await turn(workflowKey, query);
    } else {
      b = await turn(workflowKey, query);
      a = await turn(agentKey, query);
    }
    direct.push(a);
    routed.push(b);
    paired.push(b - a);
  }
  console.log(`samples ${samples} (a new conversation each turn; builtin:kb answers)`);
  console.log(`agent key turn p50     ${median(direct).toFixed(3)} ms`);
  console.log(`workflow key turn p50  ${median(routed).toFixed(3)} ms`);
  console.log(`added (difference of medians)       ${(median(routed) - median(direct)).toFixed(3)} ms`);
  console.log(`added (median of paired differences) ${median(paired).toFixed(3)} ms`);
} finally {
  await server.stop();
  await database.drop();
}
console.log(
  `load average after: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
