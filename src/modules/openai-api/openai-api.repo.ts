/**
 * The agents and workflows a chat token may use through `/v1`: the company's active deployments
 * (the deployments module's reader), and the conversation of a stored answer (this module writes
 * nothing of its own).
 */
import type { Executor } from '../../db/database.js';
import { listServableDeployments } from '../deployments/index.js';

export interface ServableRow {
  /** The key's id: the deployed agent's, or the workflow's. */
  agent_id: string;
  channel: string;
  region: string;
  title: string;
  created_at: Date;
}

/** The most keys `/v1/models` lists. */
const MAX_SERVABLE = 1000;

/**
 * Active deployments of the company, oldest first: its agents and workflows (a bound token: its
 * agent's only, as it may not use a workflow's key); the deployments module's reader.
 */
export async function listServable(db: Executor, companyId: string, agentId: string | null): Promise<ServableRow[]> {
  const rows = await listServableDeployments(db, companyId, agentId, MAX_SERVABLE);
  return rows.map(({ deployable_id, ...row }) => ({ ...row, agent_id: deployable_id }));
}

/** The conversation of one of the company's stored answers (a response id's message), or undefined. */
export async function conversationOfAnswer(
  db: Executor,
  companyId: string,
  messageId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('conversation_messages')
    .select('conversation_id')
    .where('company_id', '=', companyId)
    .where('id', '=', messageId)
    .where('role', '=', 'assistant')
    .executeTakeFirst();
  return row?.conversation_id;
}
