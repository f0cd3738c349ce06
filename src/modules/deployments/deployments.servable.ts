/**
 * The deployments a credential may talk to: the company's active agent and workflow deployments
 * with their region's word and the deployed agent's title (or the workflow's name), oldest first.
 * One reader for the protocol modules that list agent keys (the MCP server's `ask_agent`, the
 * OpenAI-compatible `/v1/models`); each makes its own keys and pages of it.
 */
import type { Executor } from '../../db/database.js';

export interface ServableDeployment {
  /** The deployed agent's id, or the workflow's (the agent key's second word). */
  deployable_id: string;
  channel: string;
  /** The region's slug (the agent key's last word). */
  region: string;
  /** The agent's title, or the workflow's name. */
  title: string;
  created_at: Date;
}

/**
 * Active deployments of the company whose agent or workflow exists, oldest first, at most
 * `limit`; with `agentId` (a chat token bound to an agent) that agent's only: it may not use a
 * workflow's key.
 */
export async function listServableDeployments(
  db: Executor,
  companyId: string,
  agentId: string | null,
  limit: number,
): Promise<ServableDeployment[]> {
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
      'd.deployable_id',
      'd.channel',
      'r.slug as region',
      eb.fn.coalesce('a.title', 'w.name').$castTo<string>().as('title'),
      'd.created_at',
    ])
    .where('d.company_id', '=', companyId)
    .where('d.status', '=', 'active')
    .where((eb) => eb.or([eb('a.id', 'is not', null), eb('w.id', 'is not', null)]));
  if (agentId) query = query.where('d.deployable_type', '=', 'agent').where('d.agent_id', '=', agentId);
  return query.orderBy('d.created_at', 'asc').orderBy('d.id', 'asc').limit(limit).execute();
}
