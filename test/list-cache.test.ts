/**
 * The per-company cache of list pages (agents, deployments, collections, documents; src/http/list-cache.ts):
 * byte-identical to an uncached instance, a write through an instance shows there at once, and
 * every other write (another instance, the ingestion and roll-out workers, direct SQL, deletes)
 * shows as soon as the database's notification lands (migrations 0092–0094, per company). One company's page is
 * never served to another. The agents list's performance figures show a turn at once on the
 * instance that answered it and within the route's maximum age on the others.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { control, createAgent, createDeployment, waitForRollout } from './helpers/deployments.js';
import { chat, chatSetup } from './helpers/chat.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { waitForWaiters } from './helpers/locks.js';
import { uploadArticle, waitForTask } from './knowledge/helpers.js';

let here: TestApp;
let there: TestApp;
let uncached: TestApp;
beforeAll(async () => {
  [here, there, uncached] = await Promise.all([
    createTestApp({ CACHE_TTL_MS: '600000', RUN_WORKERS: 'true', EMBEDDINGS_PROVIDER: 'none' }),
    createTestApp({ CACHE_TTL_MS: '600000', EMBEDDINGS_PROVIDER: 'none' }),
    createTestApp({ CACHE_TTL_MS: '0', EMBEDDINGS_PROVIDER: 'none' }),
  ]);
});
afterAll(async () => {
  await Promise.all([here?.close(), there?.close(), uncached?.close()]);
});

const LISTS = [
  { method: 'GET', url: '/api/public/deployments' },
  { method: 'GET', url: '/api/public/agents' },
  { method: 'GET', url: '/api/public/agents?skip=0&limit=1' },
  { method: 'GET', url: '/api/public/deployments?status=pending&limit=5' },
  { method: 'GET', url: '/api/public/collections' },
  { method: 'POST', url: '/api/public/documents/list', payload: {} },
  { method: 'POST', url: '/api/public/documents/list', payload: { page: 1, limit: 3 } },
] as const;

async function list(app: TestApp, tenant: TestTenant, request: (typeof LISTS)[number]) {
  return app.app.inject({ ...request, headers: tenant.headers });
}

const deployments = async (app: TestApp, tenant: TestTenant) =>
  (await list(app, tenant, LISTS[0])).json<{ total: number; data: { id: string; status: string }[] }>();
const documents = async (app: TestApp, tenant: TestTenant) =>
  (await list(app, tenant, LISTS[5])).json<{ total: number; data: { id: string; status: string }[] }>();
const collections = async (app: TestApp, tenant: TestTenant) =>
  (await list(app, tenant, LISTS[4])).json<{ id: string; document_count: number }[]>();
const agents = async (app: TestApp, tenant: TestTenant) =>
  (await list(app, tenant, LISTS[1])).json<{
    total: number;
    data: { id: string; title: string; performance_metrics: { total_queries_handled: number } }[];
  }>();

/** Polls until `check` holds (the instance hears of the change), at most twenty seconds (a loaded machine). */
async function eventually(check: () => Promise<boolean>) {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

async function seeded() {
  const tenant = await createTenant(here.container);
  const agent = await createAgent(here.container, tenant);
  const deployment = await createDeployment(here.app, tenant, agent.id);
  const collection = await here.app.inject({
    method: 'POST',
    url: '/api/public/collections',
    headers: tenant.headers,
    payload: { name: 'Orders', company_id: tenant.companyId },
  });
  expect(collection.statusCode).toBe(201);
  const upload = await uploadArticle(here.app, tenant.headers, {
    document_title: 'Returns',
    content: 'Returns are accepted within thirty days of delivery.',
    collection_id: collection.json().id,
  });
  return { tenant, agentId: agent.id, deploymentId: deployment.id, collectionId: collection.json().id, upload };
}

describe('list page cache', () => {
  it('answers byte for byte what an uncached instance answers, first and from the cache', async () => {
    const { tenant, upload } = await seeded();
    // The document settles first: the worker ingesting it would otherwise change the pages
    // between the reference read and the compared ones.
    await waitForTask(here, tenant.headers, upload.task_id);
    for (const request of LISTS) {
      const reference = await list(uncached, tenant, request);
      expect(reference.statusCode).toBe(200);
      for (const app of [there, there, here, here]) {
        const res = await list(app, tenant, request);
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe(reference.headers['content-type']);
        expect(res.body).toBe(reference.body);
      }
    }
    // The same query with its keys in another order is the same page.
    const reordered = await there.app.inject({
      method: 'POST',
      url: '/api/public/documents/list',
      headers: tenant.headers,
      payload: { limit: 3, page: 1 },
    });
    expect(reordered.body).toBe((await list(uncached, tenant, LISTS[6])).body);
  });

  it("never serves one company's page to another", async () => {
    const a = await seeded();
    const b = await createTenant(here.container);
    for (const request of LISTS) expect((await list(here, a.tenant, request)).statusCode).toBe(200);
    expect((await deployments(here, b)).total).toBe(0);
    expect((await documents(here, b)).total).toBe(0);
    expect(await collections(here, b)).toEqual([]);
    expect((await deployments(here, a.tenant)).total).toBe(1);
  });

  it('shows a write at once on the instance that made it and soon on the other (create, delete)', async () => {
    const { tenant, agentId, deploymentId, collectionId } = await seeded();
    for (const app of [here, there]) {
      expect((await deployments(app, tenant)).total).toBe(1);
      expect(await collections(app, tenant)).toHaveLength(1);
    }
    const second = await createDeployment(there.app, tenant, agentId, { channel: 'slack' });
    expect((await deployments(there, tenant)).data.map((d) => d.id)).toEqual([second.id, deploymentId]);
    expect(await eventually(async () => (await deployments(here, tenant)).total === 2)).toBe(true);

    const deleted = await here.app.inject({
      method: 'DELETE',
      url: `/api/public/deployments/${second.id}`,
      headers: tenant.headers,
    });
    expect(deleted.statusCode).toBe(204);
    expect((await deployments(here, tenant)).total).toBe(1);
    expect(await eventually(async () => (await deployments(there, tenant)).total === 1)).toBe(true);

    const removed = await here.app.inject({
      method: 'DELETE',
      url: `/api/public/collections/${collectionId}`,
      headers: tenant.headers,
    });
    expect(removed.statusCode).toBeLessThan(300);
    expect(await collections(here, tenant)).toEqual([]);
    expect(await eventually(async () => (await collections(there, tenant)).length === 0)).toBe(true);
  });

  it('shows what the ingestion worker and the roll-out worker change, and a direct SQL update', async () => {
    const { tenant, deploymentId, upload } = await seeded();
    const before = (await documents(there, tenant)).data[0]!;
    expect((await documents(here, tenant)).data[0]!.status).toBe(before.status);
    // The ingestion runs in this process, outside any request: only the notification clears the pages.
    const task = await waitForTask(here, tenant.headers, upload.task_id);
    expect(task.status).toBe('completed');
    const after = (
      await uncached.app.inject({
        method: 'POST',
        url: '/api/public/documents/list',
        headers: tenant.headers,
        payload: {},
      })
    ).json().data[0];
    expect(after.status).not.toBe(before.status);
    for (const app of [here, there]) {
      expect(await eventually(async () => (await documents(app, tenant)).data[0]!.status === after.status)).toBe(true);
    }

    // The roll-out job runs on `here`; `there` learns of deploying → active from the database alone.
    expect((await deployments(there, tenant)).data[0]!.status).toBe('pending');
    expect((await control(here.app, tenant, deploymentId, 'start')).statusCode).toBe(200);
    const rolled = await waitForRollout(here.app, tenant, deploymentId);
    expect(rolled.status).toBe('active');
    for (const app of [here, there]) {
      expect(await eventually(async () => (await deployments(app, tenant)).data[0]!.status === 'active')).toBe(true);
    }

    await here.container.db
      .updateTable('deployments')
      .set({ status: 'paused' })
      .where('id', '=', deploymentId)
      .execute();
    for (const app of [here, there]) {
      expect(await eventually(async () => (await deployments(app, tenant)).data[0]!.status === 'paused')).toBe(true);
    }
  });

  it("shows a turn's figures at once where it was answered and soon elsewhere; an agent change everywhere", async () => {
    const setup = await chatSetup(here.app, here.container, { title: 'Figures' });
    const handled = async (app: TestApp) =>
      (await agents(app, setup.tenant)).data[0]!.performance_metrics.total_queries_handled;
    for (const app of [here, there]) expect(await handled(app)).toBe(0);

    // Answered on `here` (a member of the same company lists on both instances).
    const turn = await chat(here.app, setup, { query: 'Where is my order?' });
    expect(turn.statusCode).toBe(200);
    expect(await handled(here)).toBe(1);
    expect((await agents(here, setup.tenant)).data).toEqual((await agents(uncached, setup.tenant)).data);
    // `there` hears of no turn: its page ages out (one second).
    expect(await eventually(async () => (await handled(there)) === 1)).toBe(true);

    // Answered on `there`, seen there at once.
    expect((await chat(there.app, setup, { query: 'And my refund?' })).statusCode).toBe(200);
    expect(await handled(there)).toBe(2);
    expect(await eventually(async () => (await handled(here)) === 2)).toBe(true);

    // An agent renamed through one instance, then directly in SQL: both instances hear of it.
    const renamed = await there.app.inject({
      method: 'PATCH',
      url: `/api/public/agents/${setup.agentId}`,
      headers: setup.tenant.headers,
      payload: { title: 'Orders' },
    });
    expect(renamed.statusCode).toBe(200);
    expect((await agents(there, setup.tenant)).data[0]!.title).toBe('Orders');
    expect(await eventually(async () => (await agents(here, setup.tenant)).data[0]!.title === 'Orders')).toBe(true);
    await here.container.db.updateTable('agents').set({ title: 'Returns' }).where('id', '=', setup.agentId).execute();
    for (const app of [here, there]) {
      expect(await eventually(async () => (await agents(app, setup.tenant)).data[0]!.title === 'Returns')).toBe(true);
    }
  });

  it("clears the company's pages when a streamed turn commits, after the stream's response began", async () => {
    const setup = await chatSetup(here.app, here.container, { title: 'Streamed' });
    const handled = async () => (await agents(here, setup.tenant)).data[0]!.performance_metrics.total_queries_handled;
    const created = await here.app.inject({
      method: 'POST',
      url: '/api/v1/chat/conversations',
      headers: setup.token,
      payload: { agent_id: setup.agentId },
    });
    expect(created.statusCode).toBe(201);
    const conversationId = created.json<{ id: string }>().id;
    let stream: Promise<{ statusCode: number; body: string }> = Promise.resolve({ statusCode: 0, body: '' });
    // Hold the conversation's row: the turn's write waits for it after its response has begun
    // (that request's own clearing is behind us); a list read then caches the figures before it.
    await here.container.db.transaction().execute(async (trx) => {
      await sql`select id from conversations where id = ${conversationId} for update`.execute(trx);
      stream = here.app.inject({
        method: 'POST',
        url: '/api/v1/chat/agent/stream',
        headers: setup.token,
        payload: { agent_key: setup.agentKey, query: 'Where is my order?', conversation_id: conversationId },
      });
      await waitForWaiters(trx, here.container.db);
      expect(await handled()).toBe(0);
    });
    const streamed = await stream;
    expect(streamed.statusCode).toBe(200);
    expect(streamed.body).toContain('event: end');
    expect(await handled()).toBe(1);
  });

  it("a change to one company's rows clears that company's pages on the other instances, not another company's", async () => {
    const make = async () => {
      const tenant = await createTenant(here.container);
      const agent = await createAgent(here.container, tenant);
      return { tenant, deploymentId: (await createDeployment(here.app, tenant, agent.id)).id };
    };
    const a = await make();
    const b = await make();
    const status = async (app: TestApp, tenant: TestTenant) => (await deployments(app, tenant)).data[0]!.status;
    const setStatus = (id: string, value: 'pending' | 'active' | 'paused') =>
      here.container.db.updateTable('deployments').set({ status: value }).where('id', '=', id).execute();
    // Notifications arrive in commit order: once `there` shows b's change, a's earlier ones are in.
    expect(await status(there, b.tenant)).toBe('pending');
    await setStatus(b.deploymentId, 'paused');
    expect(await eventually(async () => (await status(there, b.tenant)) === 'paused')).toBe(true);
    expect(await status(there, a.tenant)).toBe('pending');

    // a's row changes with its triggers off (nothing is notified): only clearing a's pages would show it.
    await here.container.db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await sql`update deployments set status = 'paused' where id = ${a.deploymentId}`.execute(trx);
    });
    await setStatus(b.deploymentId, 'active');
    expect(await eventually(async () => (await status(there, b.tenant)) === 'active')).toBe(true);
    expect(await status(uncached, a.tenant)).toBe('paused');
    expect(await status(there, a.tenant)).toBe('pending');
    // A change of a's own rows clears its pages.
    await setStatus(a.deploymentId, 'active');
    expect(await eventually(async () => (await status(there, a.tenant)) === 'active')).toBe(true);
  });
});
