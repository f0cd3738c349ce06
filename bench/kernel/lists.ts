/**
 * Authenticated list endpoints against `GET /healthz`, in the same run, on a server in its own
 * process: a company with 10 records of each kind, then with 10,000.
 *
 *   npx tsx bench/kernel/lists.ts [--duration 10] [--connections 50] [--only small|large]
 *
 * Lists: GET /api/public/agents (with each agent's performance_metrics), GET /deployments, GET
 * /collections (a plain array), POST /documents/list with `{}` (each its default page), and
 * GET /api/public/companies/current (the cached single-record route) for reference. The 10
 * records are created through the API; the 10,000 are written in one statement per kind (agents
 * and documents get support queries and chunks only in the small set). Rate limits are lifted;
 * job workers are off (RUN_WORKERS=false) so the figures are the requests' own. Deployments,
 * collections, documents and agents answer from the per-company cache of list pages once warm
 * (the agents page for at most a second: its figures move with every turn);
 * `CACHE_TTL_MS=0 npx tsx bench/kernel/lists.ts` measures them uncached.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { apiClient, benchDatabase, benchPort, formatResult, startBenchService } from '../lib/harness.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const key = 'sk_bench_lists_key_00000000001';
const US_EAST = '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001';
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

const database = await benchDatabase();
const service = await startBenchService(benchPort(), database, { BOOTSTRAP_API_KEY: key, RUN_WORKERS: 'false' });

const api = apiClient(service.base, key);

/** The list requests: documents are listed by POST with filters in the body (none here: the first page). */
const LISTS: { url: string; method: 'GET' | 'POST'; body?: string }[] = [
  { url: '/api/public/agents', method: 'GET' },
  { url: '/api/public/deployments', method: 'GET' },
  { url: '/api/public/collections', method: 'GET' },
  { url: '/api/public/documents/list', method: 'POST', body: '{}' },
];

async function measure(label: string) {
  const run = (
    url: string,
    seconds: number,
    headers: Record<string, string> = {},
    method: 'GET' | 'POST' = 'GET',
    body?: string,
  ) =>
    autocannon({
      url: `${service.base}${url}`,
      connections,
      duration: seconds,
      method,
      headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
      ...(body ? { body } : {}),
    });
  const auth = { 'x-api-key': key };
  for (const list of LISTS) {
    const check = await fetch(`${service.base}${list.url}`, {
      method: list.method,
      headers: list.body ? { ...auth, 'content-type': 'application/json' } : auth,
      body: list.body,
    });
    const body = (await check.json()) as { total?: number; data?: unknown[] } | unknown[];
    if (!check.ok) throw new Error(`${list.url}: ${check.status} ${JSON.stringify(body)}`);
    const page = Array.isArray(body) ? body : body.data;
    console.log(`${list.url}: ${Array.isArray(body) ? 'array' : `total ${body.total}`}, page ${page?.length}`);
  }
  await run('/healthz', 2);
  for (const list of LISTS) await run(list.url, 1, auth, list.method, list.body);
  console.log(`\n${label} (load average ${load()}; ${connections} connections, ${duration} s each)`);
  const health = await run('/healthz', duration);
  console.log(formatResult('GET /healthz (baseline)', health, 40));
  const ratio = (r: autocannon.Result) => `${((r.requests.average / health.requests.average) * 100).toFixed(1)} %`;
  const current = await run('/api/public/companies/current', duration, auth);
  console.log(`${formatResult('GET /companies/current (reference)', current, 40)}   ${ratio(current)}`);
  for (const list of LISTS) {
    const result = await run(list.url, duration, auth, list.method, list.body);
    const name = `${list.method} ${list.url.replace('/api/public', '')}`;
    console.log(`${formatResult(name, result, 40)}   ${ratio(result)}`);
  }
}

try {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    // 10 of each through the API.
    const company = String((await api('GET', '/api/public/companies/current')).id);
    const collections: string[] = [];
    for (let i = 0; i < 10; i++) {
      const collection = await api('POST', '/api/public/collections', { name: `Collection ${i}`, company_id: company });
      collections.push(String(collection.id));
    }
    for (let i = 0; i < 10; i++) {
      await api('POST', '/api/public/documents/upload/article', {
        document_title: `Article ${i}`,
        content: `Article ${i} explains how to handle request number ${i}.`,
        collection_id: collections[i],
      });
    }
    const agents: string[] = [];
    for (let i = 0; i < 10; i++) {
      const agent = await api('POST', '/api/public/agents', { title: `Agent ${i}`, model: 'builtin:kb' });
      agents.push(String(agent.id));
    }
    for (let i = 0; i < 10; i++) {
      await api('POST', '/api/public/deployments', {
        deployable_type: 'agent',
        deployable_id: agents[i],
        channel: 'web',
        region_id: US_EAST,
      });
    }
    // Support history for the agents' performance_metrics (folded and pending both exist in use).
    const { rows } = await client.query<{ company_id: string; user_id: string }>(
      'select company_id, created_by as user_id from agents where id = $1',
      [agents[0]],
    );
    const { company_id: companyId, user_id: userId } = rows[0]!;
    await client.query(
      `with u as (insert into end_users (company_id, external_id, name) values ($1, 'bench-user', 'Bench') returning id)
       insert into support_queries (company_id, user_id, agent_id, query_type, priority, subject, description, status,
                                    resolved_at, customer_satisfaction, created_at)
       select $1, u.id, ($2::uuid[])[1 + n % 10], 'general_inquiry', 'medium', 'Question ' || n, 'Question', 'resolved',
              now() - make_interval(mins => n), 1 + n % 5, now() - make_interval(mins => n + 30)
       from u, generate_series(1, 500) n`,
      [companyId, agents],
    );
    // Workers are off here: fold the support history as the service's folder would (where it exists).
    await client.query(
      `do $$ begin if to_regproc('support_rollup_fold') is not null then execute 'select support_rollup_fold(1000000)'; end if; end $$`,
    );
    if (values.only !== 'large') await measure('10 records of each kind');

    if (values.only !== 'small') {
      await client.query(
        `insert into agents (company_id, title, model, created_by, created_at)
         select $1, 'Seeded agent ' || n, 'builtin:kb', $2, now() - make_interval(secs => n)
         from generate_series(1, 9990) n`,
        [companyId, userId],
      );
      await client.query(
        `insert into deployments (company_id, user_id, deployable_type, deployable_id, agent_id, channel, region_id, languages, status, created_at)
         select $1, $2, 'agent', $3, $3, 'seed' || n, $4, 'en', 'cancelled', now() - make_interval(secs => n)
         from generate_series(1, 9990) n`,
        [companyId, userId, agents[0], US_EAST],
      );
      await client.query(
        `insert into kb_collections (company_id, name, created_by, created_at)
         select $1, 'Seeded collection ' || n, $2, now() - make_interval(secs => n) from generate_series(1, 9990) n`,
        [companyId, userId],
      );
      await client.query(
        `insert into kb_documents (company_id, title, source_type, content, status, created_by, created_at)
         select $1, 'Seeded document ' || n, 'article', 'Seeded content ' || n, 'completed', $2, now() - make_interval(secs => n)
         from generate_series(1, 9990) n`,
        [companyId, userId],
      );
      await client.query('analyze agents; analyze deployments; analyze kb_collections; analyze kb_documents');
      await measure('10,000 records of each kind');
    }
  } finally {
    await client.end();
  }
} finally {
  await service.stop();
  await database.drop();
}
