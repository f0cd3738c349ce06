/** Helpers of the deployments tests: agents written through the agents repository, API calls, polling. */
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../src/container.js';
import type { AgentsTable } from '../../src/modules/agents/agents.tables.js';
import { insertAgent } from '../../src/modules/agents/agents.repo.js';
import type { TestTenant } from './factories.js';
import type { Insertable } from 'kysely';

export const REGIONS = {
  usEast: '6f1c1f5e-0d0b-4c1e-9a51-1a0000000001',
  euWest: '6f1c1f5e-0d0b-4c1e-9a51-1a0000000003',
} as const;

/** A complete agent of the tenant's company (override fields to make it otherwise). */
export async function createAgent(
  container: Container,
  tenant: TestTenant,
  fields: Partial<Insertable<AgentsTable>> = {},
) {
  return insertAgent(container.db, {
    company_id: tenant.companyId,
    title: 'Support agent',
    instructions: 'Answer questions about orders politely.',
    languages: 'en,ar',
    created_by: tenant.userId,
    ...fields,
  });
}

export async function createDeployment(
  app: FastifyInstance,
  tenant: TestTenant,
  agentId: string,
  body: Record<string, unknown> = {},
) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/public/deployments',
    headers: tenant.headers,
    payload: { deployable_type: 'agent', deployable_id: agentId, channel: 'web', region_id: REGIONS.usEast, ...body },
  });
  if (res.statusCode !== 201) throw new Error(`create deployment: ${res.statusCode} ${res.body}`);
  return res.json<{ id: string; status: string; agent_id: string; [key: string]: unknown }>();
}

export async function control(
  app: FastifyInstance,
  tenant: { headers: Record<string, string> },
  id: string,
  action: string,
) {
  return app.inject({ method: 'POST', url: `/api/public/deployments/${id}/${action}`, headers: tenant.headers });
}

export async function logsOf(app: FastifyInstance, tenant: TestTenant, id: string, query = '') {
  const res = await app.inject({
    method: 'GET',
    url: `/api/public/deployments/${id}/logs${query}`,
    headers: tenant.headers,
  });
  return res.json<{ logs: { timestamp: string; level: string; message: string }[] }>().logs;
}

/** Polls until the deployment leaves `deploying` (the roll-out job finished) or the timeout passes. */
export async function waitForRollout(app: FastifyInstance, tenant: TestTenant, id: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await app.inject({ method: 'GET', url: `/api/public/deployments/${id}`, headers: tenant.headers });
    const body = res.json<{ status: string; error: string | null }>();
    if (body.status !== 'deploying') return body;
    if (Date.now() > deadline) throw new Error(`deployment ${id} still deploying after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Roll-out jobs sent for a deployment (pg-boss keeps them in its own schema). */
export async function rolloutJobs(container: Container, deploymentId: string): Promise<number> {
  const result = await container.queue.boss
    .getDb()
    .executeSql(
      `select count(*)::int as n from ${container.config.jobsSchema}.job where name = 'deployments.rollout' and data->>'deploymentId' = $1`,
      [deploymentId],
    );
  return (result.rows[0] as { n: number }).n;
}
