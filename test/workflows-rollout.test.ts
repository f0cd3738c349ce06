/**
 * The roll-out of a workflow deployment (real pg-boss workers): every agent of the workflow (each
 * step's and the default) is checked as an agent roll-out checks one — present, knowledge ready,
 * integrations active — with its log lines named by step, and the first failure fails the
 * deployment with the step and the reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteAgent, updateAgent } from '../src/modules/agents/agents.repo.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { control, createAgent, logsOf, REGIONS, waitForRollout } from './helpers/deployments.js';
import { createTenant, type TestTenant } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ RUN_WORKERS: 'true' });
});
afterAll(async () => t.close());

async function setup() {
  const tenant = await createTenant(t.container);
  const billing = await createAgent(t.container, tenant, { title: 'Billing' });
  const tech = await createAgent(t.container, tenant, { title: 'Tech' });
  const fallback = await createAgent(t.container, tenant, { title: 'Reception' });
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/public/workflows',
    headers: tenant.headers,
    payload: {
      name: 'Desk',
      steps: [
        { name: 'billing', agent_id: billing.id, when: { query_types: ['billing'] } },
        { name: 'technical', agent_id: tech.id, when: { query_types: ['technical_support'] } },
      ],
      default_agent_id: fallback.id,
    },
  });
  expect(res.statusCode).toBe(201);
  const workflowId = res.json().id as string;
  const deployed = await t.app.inject({
    method: 'POST',
    url: '/api/public/deployments',
    headers: tenant.headers,
    payload: { deployable_type: 'workflow', deployable_id: workflowId, channel: 'web', region_id: REGIONS.usEast },
  });
  expect(deployed.statusCode).toBe(201);
  return { tenant, billing, tech, fallback, workflowId, deploymentId: deployed.json().id as string };
}

async function startAndWait(tenant: TestTenant, id: string) {
  expect((await control(t.app, tenant, id, 'start')).statusCode).toBe(200);
  return waitForRollout(t.app, tenant, id);
}

async function collectionWith(tenant: TestTenant, documentStatus: 'processing' | 'failed') {
  const collection = await t.container.db
    .insertInto('kb_collections')
    .values({ company_id: tenant.companyId, name: `Collection ${documentStatus}`, created_by: tenant.userId })
    .returning('id')
    .executeTakeFirstOrThrow();
  await t.container.db
    .insertInto('kb_documents')
    .values({
      company_id: tenant.companyId,
      collection_id: collection.id,
      title: 'FAQ',
      source_type: 'article',
      content: 'Invoices are sent monthly.',
      status: documentStatus,
    })
    .execute();
  return collection.id;
}

describe('workflow roll-out', () => {
  it('activates when every agent passes, logging each step, and serves the workflow key', async () => {
    const s = await setup();
    const done = await startAndWait(s.tenant, s.deploymentId);
    expect(done).toMatchObject({ status: 'active', error: null });
    const messages = (await logsOf(t.app, s.tenant, s.deploymentId)).map((l) => `${l.level}: ${l.message}`);
    expect(messages).toEqual([
      `info: Deployment created (pending) for workflow ${s.workflowId} on web`,
      'info: Deployment started: pending → deploying',
      `info: Roll-out attempt 1 started: checking workflow ${s.workflowId}`,
      "info: Workflow step 'billing': Agent 'Billing' is ready (model builtin:kb)",
      "info: Workflow step 'billing': Agent uses no knowledge collections",
      "info: Workflow step 'billing': Agent uses no integrations",
      "info: Workflow step 'technical': Agent 'Tech' is ready (model builtin:kb)",
      "info: Workflow step 'technical': Agent uses no knowledge collections",
      "info: Workflow step 'technical': Agent uses no integrations",
      "info: Workflow default agent: Agent 'Reception' is ready (model builtin:kb)",
      'info: Workflow default agent: Agent uses no knowledge collections',
      'info: Workflow default agent: Agent uses no integrations',
      `info: Deployment is active: deploying → active (serving agent:${s.workflowId}:web:us-east (workflow 'Desk', 3 agent(s)))`,
    ]);
    await expect(
      t.container.deployments.resolveForChat(s.tenant.companyId, s.workflowId, 'web', 'us-east'),
    ).resolves.toMatchObject({
      id: s.deploymentId,
      agent_id: s.fallback.id,
      agent_key: `agent:${s.workflowId}:web:us-east`,
    });
  });

  it.each([
    [
      'processing',
      (id: string) => `Collection ${id} is still processing documents; start the deployment again when it has finished`,
    ],
    ['failed', (id: string) => `Collection ${id} has documents whose processing failed`],
  ] as const)('fails when a step agent has a %s collection, naming the step', async (status, reason) => {
    const s = await setup();
    const collection = await collectionWith(s.tenant, status);
    await updateAgent(t.container.db, s.tenant.companyId, s.tech.id, { collection_ids: [collection] });
    const done = await startAndWait(s.tenant, s.deploymentId);
    expect(done).toMatchObject({ status: 'failed', error: `Workflow step 'technical': ${reason(collection)}` });
  });

  it('fails when a step agent was deleted, and when its integration is inactive', async () => {
    const s = await setup();
    await deleteAgent(t.container.db, s.tenant.companyId, s.billing.id);
    const done = await startAndWait(s.tenant, s.deploymentId);
    expect(done).toMatchObject({
      status: 'failed',
      error: `Workflow step 'billing': agent ${s.billing.id} no longer exists`,
    });

    const other = await setup();
    const integration = await t.container.db
      .insertInto('integrations')
      .values({
        company_id: other.tenant.companyId,
        name: 'Old desk',
        type: 'slack',
        is_active: false,
        agent_id: other.fallback.id,
      } as never)
      .returning('id')
      .executeTakeFirstOrThrow();
    const failed = await startAndWait(other.tenant, other.deploymentId);
    expect(failed).toMatchObject({
      status: 'failed',
      error: `Workflow default agent: Integration 'Old desk' (${integration.id}) is inactive`,
    });
  });

  it('refuses a second live deployment of the workflow on its channel and region, naming the workflow', async () => {
    const s = await setup();
    expect((await startAndWait(s.tenant, s.deploymentId)).status).toBe('active');
    const second = await t.app.inject({
      method: 'POST',
      url: '/api/public/deployments',
      headers: s.tenant.headers,
      payload: { deployable_type: 'workflow', deployable_id: s.workflowId, channel: 'web', region_id: REGIONS.usEast },
    });
    expect(second.statusCode).toBe(201);
    const refused = await control(t.app, s.tenant, second.json().id, 'start');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({
      detail: `Deployment ${s.deploymentId} of this workflow is already active on channel web in region us-east; stop it first`,
      status_code: 409,
    });
  });

  it('fails when the workflow was deleted after the deployment was made', async () => {
    const s = await setup();
    await t.container.db.deleteFrom('workflows').where('id', '=', s.workflowId).execute();
    const done = await startAndWait(s.tenant, s.deploymentId);
    expect(done).toMatchObject({ status: 'failed', error: `Workflow ${s.workflowId} no longer exists` });
  });
});
