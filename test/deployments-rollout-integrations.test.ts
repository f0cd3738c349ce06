/**
 * The roll-out runs each linked integration's live check (outside any transaction) and logs it:
 * a Slack integration against the Slack peer passes (active, with a log line naming the latency
 * and the workspace), a refused token fails the roll-out with the vendor's words (never the
 * token), and a kind whose connector makes no vendor calls yet is a warning, not a failure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

async function slackIntegration(tenant: TestTenant, agentId: string, token: string) {
  const created = await integrationsApi(t.app, tenant).create({
    name: 'Team chat',
    type: 'slack',
    agent_id: agentId,
    config: { bot_token: token, channel: '#support', base_url: slack.baseUrl },
  });
  expect(created.statusCode).toBe(201);
  return created.json() as { id: string };
}

async function rollOut(tenant: TestTenant, agentId: string) {
  const deployment = await createDeployment(t.app, tenant, agentId);
  const started = await control(t.app, tenant, deployment.id, 'start');
  expect(started.statusCode).toBe(200);
  const done = await waitForRollout(t.app, tenant, deployment.id);
  const logs = (await logsOf(t.app, tenant, deployment.id)).map((l) => `${l.level}: ${l.message}`);
  return { done, logs };
}

describe('roll-out live checks', () => {
  it('activates when the linked Slack integration passes its check, logging it', async () => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant);
    await slackIntegration(tenant, agent.id, slack.token);
    const before = slack.requests.length;

    const { done, logs } = await rollOut(tenant, agent.id);
    expect(done).toMatchObject({ status: 'active', error: null });
    expect(logs).toContain('info: 1 integration(s) active: Team chat');
    expect(logs).toContainEqual(
      expect.stringMatching(
        /^info: Integration 'Team chat' \(slack\) passed its live check in \d+ ms: Connected to Slack workspace Acme as switchboard$/,
      ),
    );
    expect(slack.requests.slice(before).map((request) => request.path)).toEqual(['/api/auth.test']);
  });

  it('fails with the reason when the token is refused, never logging the token', async () => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant);
    const token = 'xoxb-9999-8888-refusedtokenvalue';
    await slackIntegration(tenant, agent.id, token);

    const { done, logs } = await rollOut(tenant, agent.id);
    const reason =
      "Integration 'Team chat' (slack) failed its live check: Slack: invalid_auth (the bot token was refused)";
    expect(done).toMatchObject({ status: 'failed', error: reason });
    expect(logs).toContain(`error: ${reason}`);
    expect(logs.join('\n')).not.toContain(token);
    expect(JSON.stringify(done)).not.toContain(token);
  });

  it('fails on a vendor outage, and only warns for a kind whose connector makes no calls yet (when one is left)', async () => {
    const tenant = await createTenant(t.container);
    const agent = await createAgent(t.container, tenant);
    await slackIntegration(tenant, agent.id, slack.token);
    slack.fail({ kind: 'status', status: 503, body: { ok: false, error: 'service_unavailable' } });
    const down = await rollOut(tenant, agent.id);
    expect(down.done).toMatchObject({
      status: 'failed',
      error:
        "Integration 'Team chat' (slack) failed its live check: Slack: server error (HTTP 503): service_unavailable",
    });
  });
});
