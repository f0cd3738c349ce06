/** Helpers of the chat tests: a company with an agent deployed on web/us-east and a chat token. */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../src/container.js';
import { insertDeployment } from '../../src/modules/deployments/deployments.repo.js';
import { createTenant, type TestTenant } from './factories.js';

export const US_EAST = '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001';

export interface ChatSetup {
  tenant: TestTenant;
  agentId: string;
  deploymentId: string;
  agentKey: string;
  token: { 'x-api-token': string };
}

/** Creates the agent through the API and an active deployment through the deployments repository. */
export async function chatSetup(
  app: FastifyInstance,
  container: Container,
  agent: Record<string, unknown> = {},
  options: { bound?: boolean; status?: 'active' | 'paused' } = {},
): Promise<ChatSetup> {
  const tenant = await createTenant(container);
  const res = await app.inject({
    method: 'POST',
    url: '/api/public/agents',
    headers: tenant.headers,
    payload: { title: 'Helper', ...agent },
  });
  if (res.statusCode !== 201) throw new Error(`create agent: ${res.statusCode} ${res.body}`);
  const agentId = res.json<{ id: string }>().id;
  const deploymentId = await insertDeployment(container.db, {
    company_id: tenant.companyId,
    deployable_type: 'agent',
    deployable_id: agentId,
    agent_id: agentId,
    channel: 'web',
    region_id: US_EAST,
    status: options.status ?? 'active',
  });
  const { headers } = await tenant.chatToken(options.bound ? agentId : undefined);
  return { tenant, agentId, deploymentId, agentKey: `agent:${agentId}:web:us-east`, token: headers };
}

/** POST /agent/chat with a JSON body (the same fields as the multipart form). */
export async function chat(
  app: FastifyInstance,
  setup: Pick<ChatSetup, 'token' | 'agentKey'>,
  fields: Record<string, unknown>,
) {
  return app.inject({
    method: 'POST',
    url: '/api/v1/chat/agent/chat',
    headers: setup.token,
    payload: { agent_key: setup.agentKey, ...fields },
  });
}
