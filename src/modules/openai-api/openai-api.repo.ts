/**
 * The agents a chat token may use through `/v1`: the company's active agent deployments (a read of
 * the deployments, regions and agents tables; this module writes nothing of its own).
 */
import type { Executor } from '../../db/database.js';

export interface ServableRow {
  agent_id: string;
  channel: string;
  region: string;
  title: string;
  created_at: Date;
}

/** Active agent deployments of the company (of one agent for a bound token), oldest first. */
export async function listServable(db: Executor, companyId: string, agentId: string | null): Promise<ServableRow[]> {
  let query = db
    .selectFrom('deployments as d')
    .innerJoin('regions as r', 'r.id', 'd.region_id')
    .innerJoin('agents as a', (join) =>
      join.onRef('a.id', '=', 'd.agent_id').onRef('a.company_id', '=', 'd.company_id'),
    )
    .select(['d.agent_id', 'd.channel', 'r.slug as region', 'a.title', 'd.created_at'])
    .where('d.company_id', '=', companyId)
    .where('d.deployable_type', '=', 'agent')
    .where('d.status', '=', 'active');
  if (agentId) query = query.where('d.agent_id', '=', agentId);
  return query.orderBy('d.created_at', 'asc').orderBy('d.id', 'asc').limit(1000).execute();
}
