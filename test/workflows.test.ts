/**
 * The workflows family (`/api/public/workflows`): create, read, list, update, delete; every bad
 * input refused with a 400 naming the field; other companies' ids are 404; members read and
 * developers write; a workflow a live deployment serves cannot be deleted (409).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { control, createAgent, REGIONS } from './helpers/deployments.js';
import { createTenant, type TestTenant } from './helpers/factories.js';

let t: TestApp;
const providers = JSON.stringify([
  { name: 'local', type: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1', models: ['tiny'] },
]);
beforeAll(async () => {
  t = await createTestApp({ LLM_PROVIDERS: providers });
});
afterAll(async () => t.close());

const api = (tenant: { headers: Record<string, string> }) => ({
  create: (payload: unknown) =>
    t.app.inject({ method: 'POST', url: '/api/public/workflows', headers: tenant.headers, payload: payload as object }),
  get: (id: string) => t.app.inject({ method: 'GET', url: `/api/public/workflows/${id}`, headers: tenant.headers }),
  list: (query = '') => t.app.inject({ method: 'GET', url: `/api/public/workflows${query}`, headers: tenant.headers }),
  update: (id: string, payload: unknown, method: 'PUT' | 'PATCH' = 'PUT') =>
    t.app.inject({ method, url: `/api/public/workflows/${id}`, headers: tenant.headers, payload: payload as object }),
  remove: (id: string) =>
    t.app.inject({ method: 'DELETE', url: `/api/public/workflows/${id}`, headers: tenant.headers }),
});

async function twoAgents(tenant: TestTenant) {
  const billing = await createAgent(t.container, tenant, { title: 'Billing' });
  const tech = await createAgent(t.container, tenant, { title: 'Tech' });
  return { billing, tech };
}

function body(agents: { billing: { id: string }; tech: { id: string } }, overrides: Record<string, unknown> = {}) {
  return {
    name: 'Front desk',
    description: 'Billing and technical questions',
    steps: [
      {
        name: 'billing',
        agent_id: agents.billing.id,
        when: { query_types: ['billing'], keywords: ['invoice', 'فاتورة'], languages: ['en', 'ar'] },
      },
      { name: 'technical', agent_id: agents.tech.id, when: { query_types: ['technical_support', 'bug_report'] } },
    ],
    default_agent_id: agents.tech.id,
    ...overrides,
  };
}

describe('workflows CRUD', () => {
  it('creates, reads, lists, updates (PUT and PATCH) and deletes a workflow', async () => {
    const tenant = await createTenant(t.container);
    const agents = await twoAgents(tenant);
    const created = await api(tenant).create(body(agents));
    expect(created.statusCode).toBe(201);
    const workflow = created.json();
    expect(workflow).toMatchObject({
      name: 'Front desk',
      description: 'Billing and technical questions',
      default_agent_id: agents.tech.id,
      router: 'rules',
      company_id: tenant.companyId,
      created_by: tenant.userId,
    });
    expect(workflow.steps).toEqual([
      {
        name: 'billing',
        agent_id: agents.billing.id,
        when: { query_types: ['billing'], keywords: ['invoice', 'فاتورة'], languages: ['en', 'ar'] },
      },
      {
        name: 'technical',
        agent_id: agents.tech.id,
        when: { query_types: ['technical_support', 'bug_report'], keywords: [], languages: [] },
      },
    ]);

    expect((await api(tenant).get(workflow.id)).json()).toEqual(workflow);
    const list = await api(tenant).list('?limit=5');
    expect(list.json()).toMatchObject({ total: 1, skip: 0, limit: 5 });
    expect(list.json().data.map((w: { id: string }) => w.id)).toEqual([workflow.id]);

    const updated = await api(tenant).update(workflow.id, { router: 'local:tiny', name: 'Desk' });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ router: 'local:tiny', name: 'Desk', steps: workflow.steps });
    const patched = await api(tenant).update(
      workflow.id,
      { steps: [{ name: 'only', agent_id: agents.billing.id }], default_agent_id: agents.billing.id },
      'PATCH',
    );
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      router: 'local:tiny',
      default_agent_id: agents.billing.id,
      steps: [{ name: 'only', agent_id: agents.billing.id, when: { query_types: [], keywords: [], languages: [] } }],
    });

    expect((await api(tenant).remove(workflow.id)).statusCode).toBe(204);
    const gone = await api(tenant).get(workflow.id);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ detail: `Workflow not found: ${workflow.id}`, status_code: 404 });
    expect((await api(tenant).remove(workflow.id)).statusCode).toBe(404);
  });

  it.each<[string, (agents: { billing: { id: string }; tech: { id: string } }) => Record<string, unknown>, string]>([
    ['name', () => ({ name: '' }), 'name'],
    ['name', () => ({ name: 'x'.repeat(201) }), 'name'],
    ['name', () => ({ name: 'Desk\u0000' }), 'must not contain NUL characters'],
    ['name', () => ({ name: '   ' }), 'must not be blank'],
    ['description', () => ({ description: 'x'.repeat(4001) }), 'description'],
    ['steps', () => ({ steps: [] }), 'steps'],
    [
      'steps',
      (a) => ({ steps: Array.from({ length: 21 }, (_, i) => ({ name: `s${i}`, agent_id: a.tech.id })) }),
      'steps',
    ],
    ['steps', () => ({ steps: 'billing' }), 'steps'],
    [
      'steps.1.name',
      (a) => ({
        steps: [
          { name: 'Billing', agent_id: a.billing.id },
          { name: 'billing', agent_id: a.tech.id },
        ],
      }),
      "step name 'billing' is used twice",
    ],
    ['steps.0.name', (a) => ({ steps: [{ name: '', agent_id: a.tech.id }] }), 'steps.0.name'],
    ['steps.0.agent_id', () => ({ steps: [{ name: 'x', agent_id: 'nope' }] }), 'steps.0.agent_id'],
    [
      'steps.0.agent_id',
      () => ({ steps: [{ name: 'x', agent_id: '00000000-0000-4000-8000-000000000000' }] }),
      'no agent 00000000-0000-4000-8000-000000000000 in your company',
    ],
    ['steps.0.extra', (a) => ({ steps: [{ name: 'x', agent_id: a.tech.id, extra: 1 }] }), 'extra'],
    [
      'steps.0.when.query_types.0',
      (a) => ({ steps: [{ name: 'x', agent_id: a.tech.id, when: { query_types: ['refunds'] } }] }),
      'must be one of',
    ],
    [
      'steps.0.when.keywords',
      (a) => ({
        steps: [{ name: 'x', agent_id: a.tech.id, when: { keywords: Array.from({ length: 51 }, (_, i) => `k${i}`) } }],
      }),
      'keywords',
    ],
    [
      'steps.0.when.keywords.0',
      (a) => ({ steps: [{ name: 'x', agent_id: a.tech.id, when: { keywords: [''] } }] }),
      'keywords',
    ],
    [
      'steps.0.when.languages.0',
      (a) => ({ steps: [{ name: 'x', agent_id: a.tech.id, when: { languages: ['english'] } }] }),
      'languages',
    ],
    [
      'steps.0.when.colour',
      (a) => ({ steps: [{ name: 'x', agent_id: a.tech.id, when: { colour: 'red' } }] }),
      'colour',
    ],
    ['default_agent_id', () => ({ default_agent_id: 42 }), 'default_agent_id'],
    [
      'default_agent_id',
      () => ({ default_agent_id: '00000000-0000-4000-8000-000000000000' }),
      'no agent 00000000-0000-4000-8000-000000000000 in your company',
    ],
    ['router', () => ({ router: 'nowhere:model' }), "Invalid field 'router'"],
    ['router', () => ({ router: 'local:huge' }), "Invalid field 'router'"],
    ['router', () => ({ router: 'builtin:kb' }), 'cannot route'],
    ['router', () => ({ router: '' }), 'router'],
    ['id', () => ({ id: '00000000-0000-4000-8000-000000000000' }), 'id'],
    ['company_id', () => ({ company_id: '00000000-0000-4000-8000-000000000000' }), 'company_id'],
  ])('refuses a bad %s with a 400 naming it', async (_field, change, words) => {
    const tenant = await createTenant(t.container);
    const agents = await twoAgents(tenant);
    const res = await api(tenant).create(body(agents, change(agents)));
    expect(res.statusCode).toBe(400);
    const error = res.json();
    expect(error.status_code).toBe(400);
    expect(Object.keys(error).sort()).toEqual(['detail', 'status_code']);
    expect(error.detail).toContain(words);
    expect(error.detail).toContain(_field === 'name' && words.startsWith('must not contain') ? "'name'" : _field);
  });

  it('refuses an empty update, bad ids and a bad page', async () => {
    const tenant = await createTenant(t.container);
    const agents = await twoAgents(tenant);
    const workflow = (await api(tenant).create(body(agents))).json();
    expect((await api(tenant).update(workflow.id, {})).statusCode).toBe(400);
    expect((await api(tenant).update(workflow.id, { steps: [] })).statusCode).toBe(400);
    expect((await api(tenant).get('not-a-uuid')).statusCode).toBe(400);
    expect((await api(tenant).list('?limit=0')).statusCode).toBe(400);
    expect((await api(tenant).list('?limit=101')).statusCode).toBe(400);
    const missing = await api(tenant).create({ name: 'No steps', default_agent_id: agents.tech.id });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().detail).toContain('steps');
  });

  it("keeps companies apart: another company's workflow is 404 and its agents are not yours", async () => {
    const owner = await createTenant(t.container);
    const other = await createTenant(t.container);
    const agents = await twoAgents(owner);
    const theirs = await twoAgents(other);
    const workflow = (await api(owner).create(body(agents))).json();
    for (const res of [
      await api(other).get(workflow.id),
      await api(other).update(workflow.id, { name: 'Mine' }),
      await api(other).remove(workflow.id),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: `Workflow not found: ${workflow.id}`, status_code: 404 });
    }
    expect((await api(other).list()).json().total).toBe(0);
    const borrowed = await api(other).create(body(theirs, { default_agent_id: agents.tech.id }));
    expect(borrowed.statusCode).toBe(400);
    expect(borrowed.json().detail).toBe(`Invalid field 'default_agent_id': no agent ${agents.tech.id} in your company`);
    expect((await api(owner).get(workflow.id)).json().name).toBe('Front desk');
  });

  it('lets members read and developers write', async () => {
    const tenant = await createTenant(t.container);
    const agents = await twoAgents(tenant);
    const workflow = (await api(tenant).create(body(agents))).json();
    const member = await tenant.member('member');
    const developer = await tenant.member('developer');
    expect((await api(member).get(workflow.id)).statusCode).toBe(200);
    expect((await api(member).list()).json().total).toBe(1);
    for (const res of [
      await api(member).create(body(agents)),
      await api(member).update(workflow.id, { name: 'Mine' }),
      await api(member).remove(workflow.id),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toContain('needs the developer role; your role is member');
    }
    expect((await api(developer).create(body(agents))).statusCode).toBe(201);
    expect((await api(developer).update(workflow.id, { name: 'Dev desk' })).statusCode).toBe(200);
    expect((await api(developer).remove(workflow.id)).statusCode).toBe(204);
    const anonymous = await t.app.inject({ method: 'GET', url: '/api/public/workflows' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('refuses to delete a workflow while a live deployment serves it (409), and deletes it once stopped', async () => {
    const tenant = await createTenant(t.container);
    const agents = await twoAgents(tenant);
    const workflow = (await api(tenant).create(body(agents))).json();
    const deployed = await t.app.inject({
      method: 'POST',
      url: '/api/public/deployments',
      headers: tenant.headers,
      payload: { deployable_type: 'workflow', deployable_id: workflow.id, channel: 'web', region_id: REGIONS.usEast },
    });
    expect(deployed.statusCode).toBe(201);
    const deployment = deployed.json();
    expect(deployment).toMatchObject({
      deployable_type: 'workflow',
      deployable_id: workflow.id,
      agent_id: agents.tech.id,
      agent_key: `agent:${workflow.id}:web:us-east`,
      languages: 'en,ar',
    });
    // The deployment records the workflow's default agent, also after it changes.
    expect((await api(tenant).update(workflow.id, { default_agent_id: agents.billing.id })).statusCode).toBe(200);
    const reread = await t.app.inject({
      method: 'GET',
      url: `/api/public/deployments/${deployment.id}`,
      headers: tenant.headers,
    });
    expect(reread.json()).toMatchObject({ agent_id: agents.billing.id, agent_key: `agent:${workflow.id}:web:us-east` });
    // Pending is not live: a deployment that never started does not hold the workflow.
    expect((await control(t.app, tenant, deployment.id, 'start')).statusCode).toBe(200);
    const refused = await api(tenant).remove(workflow.id);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().detail).toBe(
      `Workflow ${workflow.id} is served by deployment ${deployment.id} (deploying); stop or delete that deployment first`,
    );
    expect((await control(t.app, tenant, deployment.id, 'stop')).statusCode).toBe(200);
    expect((await api(tenant).remove(workflow.id)).statusCode).toBe(204);
  });

  it("deploys a workflow only by its company's id, and its default agent may be live on the same key too", async () => {
    const tenant = await createTenant(t.container);
    const other = await createTenant(t.container);
    const agents = await twoAgents(tenant);
    const workflow = (await api(tenant).create(body(agents))).json();
    const deploy = (who: TestTenant, payload: Record<string, unknown>) =>
      t.app.inject({
        method: 'POST',
        url: '/api/public/deployments',
        headers: who.headers,
        payload: { channel: 'web', region_id: REGIONS.usEast, ...payload },
      });
    const foreign = await deploy(other, { deployable_type: 'workflow', deployable_id: workflow.id });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().detail).toBe(`Invalid field 'deployable_id': no workflow ${workflow.id} in your company`);
    const agentAsWorkflow = await deploy(tenant, { deployable_type: 'workflow', deployable_id: agents.tech.id });
    expect(agentAsWorkflow.statusCode).toBe(400);

    const ofWorkflow = (await deploy(tenant, { deployable_type: 'workflow', deployable_id: workflow.id })).json();
    const ofAgent = (await deploy(tenant, { deployable_type: 'agent', deployable_id: agents.tech.id })).json();
    expect((await control(t.app, tenant, ofWorkflow.id, 'start')).statusCode).toBe(200);
    expect((await control(t.app, tenant, ofAgent.id, 'start')).statusCode).toBe(200);
    const second = (await deploy(tenant, { deployable_type: 'workflow', deployable_id: workflow.id })).json();
    const clash = await control(t.app, tenant, second.id, 'start');
    expect(clash.statusCode).toBe(409);
    expect(clash.json().detail).toContain(`Deployment ${ofWorkflow.id}`);
    const listed = await t.app.inject({
      method: 'GET',
      url: '/api/public/deployments?deployable_type=workflow',
      headers: tenant.headers,
    });
    expect(listed.json().total).toBe(2);
  });
});
