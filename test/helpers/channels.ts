/**
 * Helpers of the channel tests: a company with an agent, a vendor integration and a deployment
 * on the channel rolled out through the API (the live check runs against the vendor peer), and
 * waits on what the answering jobs did.
 */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../src/container.js';
import { REGIONS, waitForRollout } from './deployments.js';
import { createTenant, type TestTenant } from './factories.js';

export interface ChannelSetup {
  tenant: TestTenant;
  agentId: string;
  integrationId: string;
  deploymentId: string;
}

export async function channelSetup(
  app: FastifyInstance,
  container: Container,
  channel: 'slack' | 'whatsapp' | 'teams',
  integrationConfig: Record<string, unknown>,
  agent: Record<string, unknown> = {},
): Promise<ChannelSetup> {
  const tenant = await createTenant(container);
  const created = await app.inject({
    method: 'POST',
    url: '/api/public/agents',
    headers: tenant.headers,
    payload: { title: 'Helper', instructions: 'Answer customers.', ...agent },
  });
  if (created.statusCode !== 201) throw new Error(`create agent: ${created.statusCode} ${created.body}`);
  const agentId = created.json<{ id: string }>().id;
  const integration = await app.inject({
    method: 'POST',
    url: '/api/public/integrations',
    headers: tenant.headers,
    payload: { name: `${channel} app`, type: channel, config: integrationConfig },
  });
  if (integration.statusCode !== 201)
    throw new Error(`create integration: ${integration.statusCode} ${integration.body}`);
  const integrationId = integration.json<{ id: string }>().id;
  const deployment = await app.inject({
    method: 'POST',
    url: '/api/public/deployments',
    headers: tenant.headers,
    payload: {
      deployable_type: 'agent',
      deployable_id: agentId,
      channel,
      region_id: REGIONS.usEast,
      config: JSON.stringify({ integration_id: integrationId }),
    },
  });
  if (deployment.statusCode !== 201) throw new Error(`create deployment: ${deployment.statusCode} ${deployment.body}`);
  const deploymentId = deployment.json<{ id: string }>().id;
  await app.inject({ method: 'POST', url: `/api/public/deployments/${deploymentId}/start`, headers: tenant.headers });
  const rolled = await waitForRollout(app, tenant, deploymentId);
  if (rolled.status !== 'active') throw new Error(`roll-out: ${rolled.status} ${rolled.error}`);
  return { tenant, agentId, integrationId, deploymentId };
}

/** Polls until `check` holds, at most `timeoutMs` (generous: the machine may be loaded). */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The deployment's channel events by state. */
export async function channelEvents(container: Container, deploymentId: string) {
  return container.db
    .selectFrom('channel_events')
    .select(['id', 'state', 'kind', 'error', 'thread_key', 'worker_id'])
    .where('deployment_id', '=', deploymentId)
    .orderBy('created_at')
    .execute();
}

/** Resolves once every event of the deployment is done (nothing more will be sent for them). */
export async function allDone(container: Container, deploymentId: string, atLeast = 1) {
  await waitUntil(async () => {
    const events = await channelEvents(container, deploymentId);
    return events.length >= atLeast && events.every((event) => event.state === 'done');
  }, `the channel events of ${deploymentId} to be done`);
}

/** The conversations of a deployment with their end user. */
export async function conversationsOf(container: Container, deploymentId: string) {
  return container.db
    .selectFrom('conversations')
    .select(['id', 'external_user_id', 'end_user_id', 'channel', 'message_count', 'status'])
    .where('deployment_id', '=', deploymentId)
    .orderBy('created_at')
    .execute();
}

export async function deploymentLogs(app: FastifyInstance, tenant: TestTenant, id: string) {
  const res = await app.inject({ method: 'GET', url: `/api/public/deployments/${id}/logs`, headers: tenant.headers });
  return res.json<{ logs: { level: string; message: string }[] }>().logs;
}

export async function securityNotifications(container: Container, companyId: string) {
  return container.db
    .selectFrom('notifications')
    .select(['title', 'message', 'category', 'priority'])
    .where('company_id', '=', companyId)
    .where('category', '=', 'security')
    .execute();
}
