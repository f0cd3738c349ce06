/** SQL of the deployments module. Every function takes the executor first; tenancy is in SQL. */
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import { isPgError, PG_UNIQUE_VIOLATION } from '../../db/errors.js';
import { AppErrors } from '../../http/errors.js';
import { LIVE_STATUSES, type DeploymentStatus } from './deployment-state.js';
import type { DeploymentsTable, LogLevel } from './deployments.tables.js';

export type DeploymentRow = Selectable<DeploymentsTable> & { region_slug: string };

function selectDeployments(db: Executor) {
  return db
    .selectFrom('deployments as d')
    .innerJoin('regions as r', 'r.id', 'd.region_id')
    .selectAll('d')
    .select('r.slug as region_slug');
}

export async function findDeployment(db: Executor, companyId: string, id: string): Promise<DeploymentRow | undefined> {
  return selectDeployments(db).where('d.company_id', '=', companyId).where('d.id', '=', id).executeTakeFirst();
}

/** A deployment by id alone: a channel's inbound route names it, and the row says whose it is. */
export async function findDeploymentById(db: Executor, id: string): Promise<DeploymentRow | undefined> {
  return selectDeployments(db).where('d.id', '=', id).executeTakeFirst();
}

/** The row, locked until the end of the transaction: control calls on one deployment run one at a time. */
export async function lockDeployment(trx: Executor, companyId: string, id: string): Promise<DeploymentRow | undefined> {
  return selectDeployments(trx)
    .where('d.company_id', '=', companyId)
    .where('d.id', '=', id)
    .forUpdate('d')
    .executeTakeFirst();
}

export interface DeploymentFilters {
  deployable_type?: 'agent' | 'workflow';
  status?: DeploymentStatus;
  channel?: string;
  agent_id?: string;
}

export async function listDeployments(
  db: Executor,
  companyId: string,
  filters: DeploymentFilters,
  skip: number,
  limit: number,
) {
  let where = db.selectFrom('deployments as d').where('d.company_id', '=', companyId);
  if (filters.deployable_type) where = where.where('d.deployable_type', '=', filters.deployable_type);
  if (filters.status) where = where.where('d.status', '=', filters.status);
  if (filters.channel) where = where.where('d.channel', '=', filters.channel);
  if (filters.agent_id) where = where.where('d.agent_id', '=', filters.agent_id);
  // One statement: the page with the filtered total as a scalar subquery (a page past the end asks apart).
  const count = where.select((eb) => eb.fn.countAll<number>().as('total'));
  const page = await where
    .innerJoin('regions as r', 'r.id', 'd.region_id')
    .selectAll('d')
    .select('r.slug as region_slug')
    .select(count.as('total'))
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .offset(skip)
    .limit(limit)
    .execute();
  const total = page.length ? Number(page[0]!.total) : (await count.executeTakeFirstOrThrow()).total;
  return { rows: page.map(({ total: _total, ...row }) => row), total };
}

function liveConflict(error: unknown): never {
  if (isPgError(error, PG_UNIQUE_VIOLATION) && error.constraint === 'deployments_live_key') {
    throw AppErrors.conflict(
      'Another deployment of this agent or workflow is already live on this channel and region; stop it first',
    );
  }
  throw error;
}

/** Columns are named one by one: an id or a timestamp in `values` never reaches the table. */
export async function insertDeployment(
  db: Executor,
  values: Omit<Insertable<DeploymentsTable>, 'id' | 'created_at' | 'updated_at' | 'rollout_attempt' | 'started_by'>,
): Promise<string> {
  const row = await db
    .insertInto('deployments')
    .values({
      company_id: values.company_id,
      user_id: values.user_id,
      deployable_type: values.deployable_type,
      deployable_id: values.deployable_id,
      agent_id: values.agent_id,
      channel: values.channel,
      region_id: values.region_id,
      languages: values.languages,
      status: values.status,
      config: values.config,
      error: values.error,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Settings and state of a deployment, the columns an update may write (named one by one). */
export type DeploymentChanges = Pick<
  Updateable<DeploymentsTable>,
  'channel' | 'region_id' | 'languages' | 'config' | 'status' | 'error' | 'rollout_attempt' | 'started_by'
>;

export async function updateDeployment(
  db: Executor,
  companyId: string,
  id: string,
  values: DeploymentChanges,
): Promise<void> {
  await db
    .updateTable('deployments')
    .set({
      channel: values.channel,
      region_id: values.region_id,
      languages: values.languages,
      config: values.config,
      status: values.status,
      error: values.error,
      rollout_attempt: values.rollout_attempt,
      started_by: values.started_by,
      updated_at: sql`now()`,
    })
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .execute()
    .catch(liveConflict);
}

export async function deleteDeployment(db: Executor, companyId: string, id: string): Promise<void> {
  await db.deleteFrom('deployments').where('company_id', '=', companyId).where('id', '=', id).execute();
}

/**
 * The live deployment (deploying, active or paused) holding this key — the deployed agent or
 * workflow (`deployableId`), channel and region — other than `exceptId`.
 */
export async function findLiveDeployment(
  db: Executor,
  key: { deployableId: string; channel: string; regionId: string },
  exceptId?: string,
) {
  let query = db
    .selectFrom('deployments')
    .select(['id', 'status', 'company_id'])
    .where('deployable_id', '=', key.deployableId)
    .where('channel', '=', key.channel)
    .where('region_id', '=', key.regionId)
    .where('status', 'in', LIVE_STATUSES);
  if (exceptId) query = query.where('id', '<>', exceptId);
  return query.executeTakeFirst();
}

/**
 * What chat resolves an agent_key to: the live deployment of the agent or workflow (`deployableId`,
 * the key's id) on that channel and region slug.
 */
export async function findLiveForChat(
  db: Executor,
  companyId: string,
  deployableId: string,
  channel: string,
  regionSlug: string,
) {
  return selectDeployments(db)
    .where('d.company_id', '=', companyId)
    .where('d.deployable_id', '=', deployableId)
    .where('d.channel', '=', channel)
    .where('r.slug', '=', regionSlug)
    .where('d.status', 'in', LIVE_STATUSES)
    .executeTakeFirst();
}

export async function findRegion(db: Executor, id: string) {
  return db.selectFrom('regions').select(['id', 'slug']).where('id', '=', id).executeTakeFirst();
}

export async function insertLog(db: Executor, deploymentId: string, level: LogLevel, message: string): Promise<void> {
  await db.insertInto('deployment_logs').values({ deployment_id: deploymentId, level, message }).execute();
}

/** A log entry for a deployment that may have been deleted meanwhile: written only while it exists. */
export async function insertLogIfExists(
  db: Executor,
  deploymentId: string,
  level: LogLevel,
  message: string,
): Promise<boolean> {
  const result = await db
    .insertInto('deployment_logs')
    .columns(['deployment_id', 'level', 'message'])
    .expression((eb) =>
      eb
        .selectFrom('deployments')
        .select([eb.ref('id').as('deployment_id'), eb.val(level).as('level'), eb.val(message).as('message')])
        .where('id', '=', deploymentId),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * Log entries, oldest first. With `since`: the first `limit` entries at or after it (a reader
 * pages forward by passing the last timestamp it saw). Without: the latest `limit` entries.
 */
export async function listLogs(db: Executor, deploymentId: string, since: Date | undefined, limit: number) {
  const base = db
    .selectFrom('deployment_logs')
    .select(['id', 'level', 'message', 'created_at'])
    .where('deployment_id', '=', deploymentId);
  if (since) {
    return base.where('created_at', '>=', since).orderBy('created_at').orderBy('id').limit(limit).execute();
  }
  const newest = await base.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return newest.reverse();
}

/** The integrations an agent uses: listed in its integration_ids, or linked to it by agent_id. */
export async function agentIntegrations(db: Executor, companyId: string, agentId: string, ids: readonly string[]) {
  return db
    .selectFrom('integrations')
    .select(['id', 'name', 'type', 'is_active'])
    .where('company_id', '=', companyId)
    .where((eb) =>
      ids.length > 0 ? eb.or([eb('id', 'in', ids), eb('agent_id', '=', agentId)]) : eb('agent_id', '=', agentId),
    )
    .orderBy('name')
    .execute();
}

// ---------------------------------------------------------------- roll-out ownership

/**
 * Takes roll-out `attempt` for `workerId` (null: a direct call): only while the deployment is
 * deploying that attempt and no worker has taken it. The row, or undefined.
 */
export async function claimRollout(
  db: Executor,
  companyId: string,
  id: string,
  attempt: number,
  workerId: number | null,
): Promise<DeploymentRow | undefined> {
  const claimed = await db
    .updateTable('deployments')
    .set({ rollout_worker_id: workerId, rollout_claimed_attempt: attempt })
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .where('status', '=', 'deploying')
    .where('rollout_attempt', '=', attempt)
    .where((eb) => eb.or([eb('rollout_claimed_attempt', 'is', null), eb('rollout_claimed_attempt', '<>', attempt)]))
    .returning('id')
    .executeTakeFirst();
  return claimed ? findDeployment(db, companyId, id) : undefined;
}

/**
 * Hands back the roll-outs being run by one of `workerIds` (dead workers), or the one roll-out
 * `only` (its run failed unexpectedly): the attempt may be taken again. Their ids, companies and
 * attempts, for the jobs that take them.
 */
export async function releaseRollouts(
  db: Executor,
  owners: { workerIds: readonly number[] } | { only: { id: string; attempt: number } },
): Promise<{ id: string; company_id: string; rollout_attempt: number }[]> {
  if ('workerIds' in owners && owners.workerIds.length === 0) return [];
  return db
    .updateTable('deployments')
    .set({ rollout_worker_id: null, rollout_claimed_attempt: null })
    .where('status', '=', 'deploying')
    .where((eb) =>
      'workerIds' in owners
        ? eb('rollout_worker_id', 'in', [...owners.workerIds])
        : eb.and([eb('id', '=', owners.only.id), eb('rollout_claimed_attempt', '=', owners.only.attempt)]),
    )
    .returning(['id', 'company_id', 'rollout_attempt'])
    .execute();
}

/** A live deployment (deploying, active or paused) of the agent or workflow `deployableId`, if any. */
export async function findLiveOf(db: Executor, companyId: string, deployableId: string) {
  return db
    .selectFrom('deployments')
    .select(['id', 'status'])
    .where('company_id', '=', companyId)
    .where('deployable_id', '=', deployableId)
    .where('status', 'in', LIVE_STATUSES)
    .executeTakeFirst();
}
