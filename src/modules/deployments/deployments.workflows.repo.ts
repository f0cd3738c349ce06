/** SQL of workflow deployments that agent deployments do not need. */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

/** Every deployment of the workflow records `agentId` (its default agent) as its agent. */
export async function setWorkflowAgent(db: Executor, companyId: string, workflowId: string, agentId: string) {
  await db
    .updateTable('deployments')
    .set({ agent_id: agentId, updated_at: sql`now()` })
    .where('company_id', '=', companyId)
    .where('deployable_type', '=', 'workflow')
    .where('deployable_id', '=', workflowId)
    .where('agent_id', '<>', agentId)
    .execute();
}
