/**
 * The agents and workflows a chat token may use through `/v1`: the company's active deployments
 * (a read of the deployments, regions, agents and workflows tables; this module writes nothing of
 * its own).
 */
import type { Executor } from '../../db/database.js';

export interface ServableRow {
  /** The key's id: the deployed agent's, or the workflow's. */
  agent_id: string;
  channel: string;
  region: string;
  title: string;
  created_at: Date;
}

/**
 * Active deployments of the company, oldest first: its agents and workflows (a bound token: its
 * agent's only, as it may not use a workflow's key).
 */
export async function listServable(db: Executor, companyId: string, agentId: string | null): Promise<ServableRow[]> {
  let query = db
    .selectFrom('deployments as d')
    .innerJoin('regions as r', 'r.id', 'd.region_id')
    .leftJoin('agents as a', (join) =>
      join
        .onRef('a.id', '=', 'd.deployable_id')
        .onRef('a.company_id', '=', 'd.company_id')
        .on('d.deployable_type', '=', 'agent'),
    )
    .leftJoin('workflows as w', (join) =>
      join
        .onRef('w.id', '=', 'd.deployable_id')
        .onRef('w.company_id', '=', 'd.company_id')
        .on('d.deployable_type', '=', 'workflow'),
    )
    .select((eb) => [
      'd.deployable_id as agent_id',
      'd.channel',
      'r.slug as region',
      eb.fn.coalesce('a.title', 'w.name').$castTo<string>().as('title'),
      'd.created_at',
    ])
    .where('d.company_id', '=', companyId)
    .where('d.status', '=', 'active')
    .where((eb) => eb.or([eb('a.id', 'is not', null), eb('w.id', 'is not', null)]));
  if (agentId) query = query.where('d.deployable_type', '=', 'agent').where('d.agent_id', '=', agentId);
  return query.orderBy('d.created_at', 'asc').orderBy('d.id', 'asc').limit(1000).execute();
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
