/**
 * The roll-out job: after `start` moved a deployment to deploying, check that it can serve —
 * the agent exists and is complete, its knowledge collections have finished processing, its
 * integrations are active — logging each step, then finish the transition (active or failed)
 * under the row lock. A job only finishes the attempt it was sent for: a deployment stopped and
 * started again meanwhile is left to the newer job.
 */
import type { Db, Executor } from '../../db/database.js';
import { findAgent } from '../agents/index.js';
import { primaryLanguages } from './deployment-fields.js';
import type { CollectionsReadiness } from './deployments.ports.js';
import * as repo from './deployments.repo.js';
import type { LogLevel } from './deployments.tables.js';

export const ROLLOUT_JOB = 'deployments.rollout';

export interface RolloutJob {
  deploymentId: string;
  companyId: string;
  attempt: number;
}

export type RolloutOutcome = { ok: true; summary: string } | { ok: false; error: string };

export interface RolloutDeps {
  db: Db;
  knowledge: CollectionsReadiness | null;
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

type Step = (level: LogLevel, message: string) => Promise<unknown>;
type Finish = (trx: Executor, row: repo.DeploymentRow, outcome: RolloutOutcome) => Promise<void>;

function isCurrent(row: repo.DeploymentRow, job: RolloutJob): boolean {
  return row.status === 'deploying' && row.rollout_attempt === job.attempt;
}

export async function runRollout(deps: RolloutDeps, job: RolloutJob, finish: Finish): Promise<void> {
  const row = await repo.findDeployment(deps.db, job.companyId, job.deploymentId);
  if (!row || !isCurrent(row, job)) {
    deps.log.info(
      { deploymentId: job.deploymentId, attempt: job.attempt, status: row?.status ?? 'deleted' },
      'roll-out skipped: attempt no longer current',
    );
    return;
  }
  const step: Step = (level, message) => repo.insertLogIfExists(deps.db, job.deploymentId, level, message);
  let outcome: RolloutOutcome;
  try {
    outcome = await checkDeployment(deps, row, step);
  } catch (error) {
    deps.log.error({ err: error, deploymentId: job.deploymentId }, 'roll-out check failed');
    outcome = {
      ok: false,
      error: 'Roll-out could not complete because of an internal error; start the deployment again',
    };
  }
  await deps.db.transaction().execute(async (trx) => {
    const current = await repo.lockDeployment(trx, job.companyId, job.deploymentId);
    if (!current) return;
    if (!isCurrent(current, job)) {
      await repo.insertLog(
        trx,
        current.id,
        'warning',
        `Roll-out attempt ${job.attempt} ended after the deployment became ${current.status}; its result is discarded`,
      );
      return;
    }
    await finish(trx, current, outcome);
  });
}

type AgentRow = NonNullable<Awaited<ReturnType<typeof findAgent>>>;
/** A failed check's reason, or null when the step passed (and was logged). */
type Check = Promise<string | null>;

async function checkDeployment(deps: RolloutDeps, row: repo.DeploymentRow, step: Step): Promise<RolloutOutcome> {
  await step(
    'info',
    `Roll-out attempt ${row.rollout_attempt} started: checking the agent, its knowledge and its integrations`,
  );
  const agent = await findAgent(deps.db, row.company_id, row.agent_id);
  if (!agent) return { ok: false, error: `Agent ${row.agent_id} no longer exists` };
  const error =
    (await checkAgent(agent, row, step)) ??
    (await checkCollections(deps.knowledge, agent, row, step)) ??
    (await checkIntegrations(deps.db, agent, row, step));
  return error
    ? { ok: false, error }
    : { ok: true, summary: `serving agent:${row.agent_id}:${row.channel}:${row.region_slug}` };
}

/** Complete: a title, instructions (or a task description) and a model. Languages it lacks are a warning. */
async function checkAgent(agent: AgentRow, row: repo.DeploymentRow, step: Step): Check {
  const missing = [
    ...(agent.title.trim() ? [] : ['title']),
    ...(agent.instructions.trim() || agent.task_description.trim() ? [] : ['instructions (or a task description)']),
    ...(agent.model.trim() ? [] : ['model']),
  ];
  if (missing.length > 0) return `Agent '${agent.title}' (${agent.id}) is incomplete: missing ${missing.join(', ')}`;
  await step('info', `Agent '${agent.title}' is complete (model ${agent.model})`);
  const spoken = primaryLanguages(agent.languages);
  const unsupported = primaryLanguages(row.languages).filter((code) => !spoken.includes(code));
  if (unsupported.length > 0) {
    await step(
      'warning',
      `Agent '${agent.title}' does not list ${unsupported.join(', ')} among its languages (${agent.languages || 'none'})`,
    );
  }
  return null;
}

/** Every collection of the agent exists and has no document still processing or failed. */
async function checkCollections(
  knowledge: CollectionsReadiness | null,
  agent: AgentRow,
  row: repo.DeploymentRow,
  step: Step,
): Check {
  const collections = agent.collection_ids;
  if (collections.length === 0) {
    await step('info', 'Agent uses no knowledge collections');
    return null;
  }
  if (!knowledge) {
    await step(
      'warning',
      `Knowledge readiness of ${collections.length} collection(s) not checked: the knowledge base is not available`,
    );
    return null;
  }
  const readiness = await knowledge.collectionsReadiness(row.company_id, collections);
  const [gone] = readiness.missing;
  if (gone) return `Collection ${gone} no longer exists`;
  const [busy] = readiness.processing;
  if (busy) return `Collection ${busy} is still processing documents; start the deployment again when it has finished`;
  const [broken] = readiness.failed;
  if (broken) return `Collection ${broken} has documents whose processing failed`;
  await step('info', `${collections.length} knowledge collection(s) ready`);
  return null;
}

/** Every integration the agent lists exists in the company, and those it lists or is linked to are active. */
async function checkIntegrations(db: Db, agent: AgentRow, row: repo.DeploymentRow, step: Step): Check {
  const integrations = await repo.agentIntegrations(db, row.company_id, agent.id, agent.integration_ids);
  const absent = agent.integration_ids.find((id) => !integrations.some((integration) => integration.id === id));
  if (absent) return `Integration ${absent} no longer exists`;
  const inactive = integrations.find((integration) => !integration.is_active);
  if (inactive) return `Integration '${inactive.name}' (${inactive.id}) is inactive`;
  await step(
    'info',
    integrations.length === 0
      ? 'Agent uses no integrations'
      : `${integrations.length} integration(s) active: ${integrations.map((i) => i.name).join(', ')}`,
  );
  return null;
}
