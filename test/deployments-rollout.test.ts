/**
 * The roll-out job with real pg-boss workers: a start moves to deploying, the job checks the
 * agent, its knowledge and its integrations (present, active, passing their live check against
 * the Slack peer), logging each step, and ends active or failed with
 * the reason. Also: a roll-out overtaken by stop (and restart) leaves the newer attempt alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteAgent, updateAgent } from '../src/modules/agents/agents.repo.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { control, createAgent, createDeployment, logsOf, waitForRollout } from './helpers/deployments.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { startFakeSlack, type FakeSlack } from './helpers/fake-slack.js';
import { integrationsApi } from './helpers/integrations.js';

let t: TestApp;
let slack: FakeSlack;
beforeAll(async () => {
  [t, slack] = await Promise.all([
    createTestApp({ RUN_WORKERS: 'true', ALLOW_PRIVATE_URLS: 'true' }),
    startFakeSlack(),
  ]);
});
afterAll(async () => {
  await t.close();
  await slack.close();
});

/** A Slack integration against the Slack peer (its live check, run by the roll-out, passes). */
async function integration(tenant: TestTenant, fields: { name: string; is_active: boolean; agent_id?: string }) {
  const created = await integrationsApi(t.app, tenant).create({
    ...fields,
    type: 'slack',
    config: { bot_token: slack.token, channel: '#support', base_url: slack.baseUrl },
  });
  expect(created.statusCode).toBe(201);
  return created.json() as { id: string };
}

async function startAndWait(tenant: TestTenant, id: string) {
  const started = await control(t.app, tenant, id, 'start');
  expect(started.statusCode).toBe(200);
  expect(started.json().status).toBe('deploying');
  return waitForRollout(t.app, tenant, id);
}

async function deploymentNotifications(tenant: TestTenant, id: string) {
  const rows = await t.container.db
    .selectFrom('notifications')
    .select(['title', 'priority', 'message', 'metadata'])
    .where('company_id', '=', tenant.companyId)
    .where('category', '=', 'deployment')
    .orderBy('created_at')
    .execute();
  return rows.filter((row) => row.metadata.deployment_id === id);
}

describe('roll-out', () => {
  it('activates a complete agent, logging each step and notifying the team', async () => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant);
    const hub = await integration(tenant, { name: 'Help desk', is_active: true, agent_id: agent.id });
    await updateAgent(t.container.db, tenant.companyId, agent.id, { integration_ids: [hub.id] });
    const deployment = await createDeployment(t.app, tenant, agent.id, { languages: 'en,fr' });

    const done = await startAndWait(tenant, deployment.id);
    expect(done).toMatchObject({ status: 'active', error: null });
    const messages = (await logsOf(t.app, tenant, deployment.id)).map((l) => `${l.level}: ${l.message}`);
    expect(messages).toEqual([
      expect.stringContaining('info: Deployment created (pending)'),
      'info: Deployment started: pending → deploying',
      'info: Roll-out attempt 1 started: checking the agent, its knowledge and its integrations',
      "info: Agent 'Support agent' is ready (model builtin:kb)",
      "warning: Agent 'Support agent' does not list fr among its languages (en,ar)",
      'info: Agent uses no knowledge collections',
      'info: 1 integration(s) active: Help desk',
      expect.stringMatching(
        /^info: Integration 'Help desk' \(slack\) passed its live check in \d+ ms: Connected to Slack workspace Acme as switchboard$/,
      ),
      `info: Deployment is active: deploying → active (serving agent:${agent.id}:web:us-east)`,
    ]);
    const notes = await deploymentNotifications(tenant, deployment.id);
    expect(notes.map((n) => [n.title, n.metadata.status])).toEqual([
      ['Deployment started', 'deploying'],
      ['Deployment is active', 'active'],
    ]);
    await expect(
      t.container.deployments.resolveForChat(tenant.companyId, agent.id, 'web', 'us-east'),
    ).resolves.toMatchObject({ id: deployment.id });
  });

  it.each([
    [
      'no instructions or task description',
      { instructions: '', task_description: '' },
      "Agent 'Support agent' has no instructions or task description: it serves with the platform's default instructions",
    ],
    ['a blank title', { title: '  ' }, 'has no title: it introduces itself as an assistant of the company'],
    ['no model', { model: '' }, 'has no model: the built-in knowledge-base responder answers'],
  ])('activates an agent with %s, with a warning in the log', async (_name, fields, warning) => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant, fields);
    const deployment = await createDeployment(t.app, tenant, agent.id, { languages: 'en' });
    const done = await startAndWait(tenant, deployment.id);
    expect(done).toMatchObject({ status: 'active', error: null });
    const logs = await logsOf(t.app, tenant, deployment.id);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'warning', message: expect.stringContaining(warning) }),
    );
    expect(logs.at(-1)?.message).toContain('deploying → active');
  });

  it('serves chat from an agent created without instructions or task description', async () => {
    const tenant = await createTenant(t.container);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: tenant.headers,
      payload: { title: 'Bare agent' },
    });
    expect(created.statusCode).toBe(201);
    const agent = created.json<{ id: string }>();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    expect(await startAndWait(tenant, deployment.id)).toMatchObject({ status: 'active' });
    await expect(
      t.container.deployments.resolveForChat(tenant.companyId, agent.id, 'web', 'us-east'),
    ).resolves.toMatchObject({ id: deployment.id, status: 'active' });
  });

  async function collectionWith(
    tenant: TestTenant,
    documentStatus: 'completed' | 'processing' | 'pending' | 'failed' | null,
  ) {
    const collection = await t.container.db
      .insertInto('kb_collections')
      .values({ company_id: tenant.companyId, name: `Collection ${documentStatus}`, created_by: tenant.userId })
      .returning('id')
      .executeTakeFirstOrThrow();
    if (documentStatus) {
      await t.container.db
        .insertInto('kb_documents')
        .values({
          company_id: tenant.companyId,
          collection_id: collection.id,
          title: 'FAQ',
          source_type: 'article',
          content: 'Orders ship in two days.',
          status: documentStatus,
        })
        .execute();
    }
    return collection.id;
  }

  it.each([
    [
      'still processing',
      'processing',
      (id: string) => `Collection ${id} is still processing documents; start the deployment again when it has finished`,
    ],
    [
      'pending',
      'pending',
      (id: string) => `Collection ${id} is still processing documents; start the deployment again when it has finished`,
    ],
    ['failed', 'failed', (id: string) => `Collection ${id} has documents whose processing failed`],
  ] as const)('fails when a collection is %s, naming it', async (_name, status, reason) => {
    const tenant = await createTenant(t.container);
    const ready = await collectionWith(tenant, 'completed');
    const bad = await collectionWith(tenant, status);
    const agent = await createAgent(t.container, tenant, { collection_ids: [ready, bad] });
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const done = await startAndWait(tenant, deployment.id);
    expect(done).toMatchObject({ status: 'failed', error: reason(bad) });
  });

  it('fails when a collection no longer exists; succeeds once the agent uses ready ones', async () => {
    const tenant = await createTenant(t.container);
    const ready = await collectionWith(tenant, 'completed');
    const empty = await collectionWith(tenant, null);
    const gone = '00000000-0000-4000-8000-00000000dead';
    const agent = await createAgent(t.container, tenant, { collection_ids: [ready, gone] });
    const deployment = await createDeployment(t.app, tenant, agent.id);
    expect(await startAndWait(tenant, deployment.id)).toMatchObject({
      status: 'failed',
      error: `Collection ${gone} no longer exists`,
    });
    await updateAgent(t.container.db, tenant.companyId, agent.id, { collection_ids: [ready, empty] });
    expect(await startAndWait(tenant, deployment.id)).toMatchObject({ status: 'active', error: null });
    const logs = await logsOf(t.app, tenant, deployment.id);
    expect(logs.map((l) => l.message)).toContain('2 knowledge collection(s) ready');
  });

  it('a collection of another company counts as missing', async () => {
    const tenant = await createTenant(t.container);
    const foreign = await collectionWith(await createTenant(t.container), 'completed');
    const agent = await createAgent(t.container, tenant, { collection_ids: [foreign] });
    const deployment = await createDeployment(t.app, tenant, agent.id);
    expect(await startAndWait(tenant, deployment.id)).toMatchObject({
      status: 'failed',
      error: `Collection ${foreign} no longer exists`,
    });
  });

  it('fails when the agent was deleted, and names it', async () => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant);
    const deployment = await createDeployment(t.app, tenant, agent.id);
    await deleteAgent(t.container.db, tenant.companyId, agent.id);
    const done = await startAndWait(tenant, deployment.id);
    expect(done).toMatchObject({ status: 'failed', error: `Agent ${agent.id} no longer exists` });
  });

  it('fails on an inactive integration (listed or linked), naming it', async () => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant);
    const linked = await integration(tenant, { name: 'Shop', is_active: false, agent_id: agent.id });
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const done = await startAndWait(tenant, deployment.id);
    expect(done).toMatchObject({ status: 'failed', error: `Integration 'Shop' (${linked.id}) is inactive` });

    // Fixed, the same deployment starts again from failed and becomes active.
    await t.container.db.updateTable('integrations').set({ is_active: true }).where('id', '=', linked.id).execute();
    const again = await startAndWait(tenant, deployment.id);
    expect(again).toMatchObject({ status: 'active', error: null });
    expect(
      (await logsOf(t.app, tenant, deployment.id)).some((l) => l.message.startsWith('Roll-out attempt 2 started')),
    ).toBe(true);
  });

  it('fails when a listed integration no longer exists', async () => {
    const tenant = await createTenant(t.container);
    const gone = await integration(tenant, { name: 'Old CRM', is_active: true });
    const agent = await createAgent(t.container, tenant, { integration_ids: [gone.id] });
    await t.container.db.deleteFrom('integrations').where('id', '=', gone.id).execute();
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const done = await startAndWait(tenant, deployment.id);
    expect(done).toMatchObject({ status: 'failed', error: `Integration ${gone.id} no longer exists` });
  });

  it('an integration of another company counts as missing', async () => {
    const tenant = await createTenant(t.container);
    const other = await createTenant(t.container);
    const foreign = await integration(other, { name: 'Theirs', is_active: true });
    const agent = await createAgent(t.container, tenant, { integration_ids: [foreign.id] });
    const deployment = await createDeployment(t.app, tenant, agent.id);
    const done = await startAndWait(tenant, deployment.id);
    expect(done).toMatchObject({ status: 'failed', error: `Integration ${foreign.id} no longer exists` });
  });

  it('a job of an earlier attempt leaves the current one alone', async () => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant);
    const deployment = await createDeployment(t.app, tenant, agent.id);
    expect((await control(t.app, tenant, deployment.id, 'start')).statusCode).toBe(200);
    expect((await control(t.app, tenant, deployment.id, 'stop')).json().status).toBe('cancelled');
    expect((await control(t.app, tenant, deployment.id, 'start')).statusCode).toBe(200);
    expect((await waitForRollout(t.app, tenant, deployment.id)).status).toBe('active');
    await control(t.app, tenant, deployment.id, 'stop');
    await control(t.app, tenant, deployment.id, 'start');
    // A late job of attempt 2 (or 1) runs now, while attempt 3 is deploying: it must not finish it.
    const before = await logsOf(t.app, tenant, deployment.id, '?limit=1000');
    await t.container.deployments.runRollout({ deploymentId: deployment.id, companyId: tenant.companyId, attempt: 2 });
    const row = await t.container.db
      .selectFrom('deployments')
      .select(['status', 'rollout_attempt'])
      .where('id', '=', deployment.id)
      .executeTakeFirstOrThrow();
    const after = await logsOf(t.app, tenant, deployment.id, '?limit=1000');
    expect(after.filter((l) => l.message.startsWith('Roll-out attempt 2 started'))).toHaveLength(
      before.filter((l) => l.message.startsWith('Roll-out attempt 2 started')).length,
    );
    expect(row.rollout_attempt).toBe(3);
    expect(['deploying', 'active']).toContain(row.status);
    expect((await waitForRollout(t.app, tenant, deployment.id)).status).toBe('active');
    const notes = await deploymentNotifications(tenant, deployment.id);
    expect(notes.map((n) => n.metadata.status).slice(-3)).toEqual(['cancelled', 'deploying', 'active']);
  });

  it('a deployment stopped while deploying stays cancelled', async () => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant);
    const deployment = await createDeployment(t.app, tenant, agent.id);
    await control(t.app, tenant, deployment.id, 'start');
    await control(t.app, tenant, deployment.id, 'stop');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/public/deployments/${deployment.id}`,
      headers: tenant.headers,
    });
    expect(res.json().status).toBe('cancelled');
  });
});
