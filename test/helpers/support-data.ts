/**
 * Support history for tests, written through the support-queries repository and recorder
 * (the functions the platform uses), with explicit timestamps so windows can be tested.
 */
import { randomUUID } from 'node:crypto';
import type { Container } from '../../src/container.js';
import { insertSupportQuery, upsertEndUser } from '../../src/modules/support-queries/support-queries.repo.js';
import type { Priority, QueryStatus, QueryType } from '../../src/modules/support-queries/support-queries.tables.js';

export interface SeededQuery {
  id: string;
  agentId: string | null;
  userId: string;
  queryType: QueryType;
  status: QueryStatus;
  priority: Priority;
  createdAt: Date;
  resolvedAt: Date | null;
  escalated: boolean;
  satisfaction: number | null;
}

export async function createAgent(
  container: Container,
  companyId: string,
  title = `Agent ${randomUUID().slice(0, 6)}`,
): Promise<string> {
  const row = await container.db
    .insertInto('agents')
    .values({ company_id: companyId, title, task_description: `${title} answers customers` })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function createEndUser(
  container: Container,
  companyId: string,
  externalId = `ext-${randomUUID().slice(0, 8)}`,
) {
  return (
    await upsertEndUser(container.db, companyId, externalId, {
      email: `${externalId}@customers.test`,
      name: `Customer ${externalId}`,
    })
  ).id;
}

export interface QuerySpec {
  agentId: string | null;
  userId: string;
  queryType?: QueryType;
  priority?: Priority;
  status?: QueryStatus;
  createdAt: Date;
  /** Minutes to resolution; null for unresolved. */
  resolvedAfter?: number | null;
  escalated?: boolean;
  satisfaction?: number | null;
  subject?: string;
}

export async function insertQuery(container: Container, companyId: string, spec: QuerySpec): Promise<SeededQuery> {
  const resolvedAt =
    spec.resolvedAfter != null ? new Date(spec.createdAt.getTime() + spec.resolvedAfter * 60_000) : null;
  const escalated = spec.escalated ?? false;
  const status = spec.status ?? (resolvedAt ? 'resolved' : 'in_progress');
  const queryType = spec.queryType ?? 'general_inquiry';
  const priority = spec.priority ?? 'medium';
  const { id } = await insertSupportQuery(container.db, {
    company_id: companyId,
    user_id: spec.userId,
    agent_id: spec.agentId,
    deployment_id: null,
    conversation_id: randomUUID(),
    query_type: queryType,
    priority,
    status,
    subject: spec.subject ?? `Subject ${queryType}`,
    description: 'Seeded for a test',
    created_at: spec.createdAt,
    updated_at: resolvedAt ?? spec.createdAt,
    resolved_at: resolvedAt,
    resolution_method: resolvedAt ? (escalated ? 'human' : 'automated') : null,
    escalated_to_human: escalated,
    customer_satisfaction: spec.satisfaction ?? null,
  });
  return {
    id,
    agentId: spec.agentId,
    userId: spec.userId,
    queryType,
    status,
    priority,
    createdAt: spec.createdAt,
    resolvedAt,
    escalated,
    satisfaction: spec.satisfaction ?? null,
  };
}
