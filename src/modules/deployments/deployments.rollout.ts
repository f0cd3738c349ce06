/**
 * The roll-out job: after `start` moved a deployment to deploying, check that it can serve —
 * the agent exists and is complete, its knowledge collections have finished processing, its
 * integrations are active and pass their live check — logging each step, then finish the transition (active or failed)
 * under the row lock. A job only finishes the attempt it was sent for: a deployment stopped and
 * started again meanwhile is left to the newer job. A worker takes an attempt (its worker id on
 * the row) when it fetches the job; if it dies, a sweep hands the attempt back to the queue
 * (src/jobs/queue.ts) and only the worker holding the attempt may finish it.
 */
import type { Db, Executor } from '../../db/database.js';
import { BUILTIN_KB_MODEL, findAgent } from '../agents/index.js';
import { channelIntegrationId, DELIVERING_CHANNELS, primaryLanguages } from './deployment-fields.js';
import type { CollectionsReadiness, IntegrationChecker, WorkflowSource } from './deployments.ports.js';
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
  /** The integrations' live check; null: not wired (the checks are skipped with a warning). */
  integrations: IntegrationChecker | null;
  /** Workflows; null: a workflow deployment fails its roll-out (nothing to check it against). */
  workflows: WorkflowSource | null;
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

type Step = (level: LogLevel, message: string) => Promise<unknown>;
type Finish = (trx: Executor, row: repo.DeploymentRow, outcome: RolloutOutcome) => Promise<void>;

/** Still deploying the attempt `claimed` was taken for, by the same worker (not handed back meanwhile). */
function isCurrent(row: repo.DeploymentRow, claimed: repo.DeploymentRow): boolean {
  return (
    row.status === 'deploying' &&
    row.rollout_attempt === claimed.rollout_attempt &&
    row.rollout_claimed_attempt === claimed.rollout_attempt &&
    row.rollout_worker_id === claimed.rollout_worker_id
  );
}

/**
 * Takes the job's attempt for `workerId` (in the job's fetch transaction): the row, or undefined
 * when the attempt is no longer current or another worker has it.
 */
export async function claimRollout(
  deps: Pick<RolloutDeps, 'log'>,
  trx: Executor,
  job: RolloutJob,
  workerId: number | null,
): Promise<repo.DeploymentRow | undefined> {
  const row = await repo.claimRollout(trx, job.companyId, job.deploymentId, job.attempt, workerId);
  if (!row) {
    deps.log.info(
      { deploymentId: job.deploymentId, attempt: job.attempt },
      'roll-out skipped: attempt no longer current or already taken',
    );
  }
  return row;
}

/** Runs a claimed roll-out: the checks, then `finish` under the row lock if it is still current. */
export async function runRollout(deps: RolloutDeps, claimed: repo.DeploymentRow, finish: Finish): Promise<void> {
  const step: Step = (level, message) => repo.insertLogIfExists(deps.db, claimed.id, level, message);
  let outcome: RolloutOutcome;
  try {
    outcome = await checkDeployment(deps, claimed, step);
  } catch (error) {
    deps.log.error({ err: error, deploymentId: claimed.id }, 'roll-out check failed');
    outcome = {
      ok: false,
      error: 'Roll-out could not complete because of an internal error; start the deployment again',
    };
  }
  await deps.db.transaction().execute(async (trx) => {
    const current = await repo.lockDeployment(trx, claimed.company_id, claimed.id);
    if (!current) return;
    if (!isCurrent(current, claimed)) {
      await repo.insertLog(
        trx,
        current.id,
        'warning',
        `Roll-out attempt ${claimed.rollout_attempt} ended after the deployment became ${current.status}; its result is discarded`,
      );
      return;
    }
    await finish(trx, current, outcome);
  });
}

/**
 * Hands back to the queue the roll-outs of dead workers (`workerIds`) or one roll-out whose run
 * failed unexpectedly (`only`, tried again after `delaySeconds`), logging it; how many.
 */
export async function requeueRollouts(
  trx: Executor,
  send: (trx: Executor, job: RolloutJob, delaySeconds: number) => Promise<unknown>,
  owners: Parameters<typeof repo.releaseRollouts>[1],
  delaySeconds = 0,
): Promise<number> {
  const rows = await repo.releaseRollouts(trx, owners);
  for (const row of rows) {
    await repo.insertLog(
      trx,
      row.id,
      'warning',
      'workerIds' in owners
        ? `Roll-out attempt ${row.rollout_attempt} was interrupted (its worker stopped); it runs again`
        : `Roll-out attempt ${row.rollout_attempt} was interrupted by an internal error; it runs again`,
    );
    await send(trx, { deploymentId: row.id, companyId: row.company_id, attempt: row.rollout_attempt }, delaySeconds);
  }
  return rows.length;
}

type AgentRow = NonNullable<Awaited<ReturnType<typeof findAgent>>>;

/**
 * A channel that delivers through a vendor (slack, whatsapp, teams) names its integration in
 * `config.integration_id`: it must exist, be of the channel's kind, be active, hold the secrets
 * the channel needs, and pass its live check.
 */
async function checkChannelIntegration(deps: RolloutDeps, row: repo.DeploymentRow, step: Step): Check {
  const needs = DELIVERING_CHANNELS[row.channel];
  if (!needs) return null;
  const id = channelIntegrationId(row.config);
  if (!id) {
    return `Channel ${row.channel} needs config.integration_id: the id of a ${needs.type} integration of your company`;
  }
  const checker = deps.integrations;
  if (!checker?.integrationFacts) return `Channel ${row.channel} cannot be checked: integrations are not available`;
  const facts = await checker.integrationFacts(row.company_id, id);
  if (!facts) return `Integration ${id} (config.integration_id) does not exist in your company`;
  const name = `Integration '${facts.name}' (${facts.type})`;
  if (facts.type !== needs.type)
    return `${name} cannot serve channel ${row.channel}: it needs a ${needs.type} integration`;
  if (!facts.is_active) return `${name} is inactive`;
  const missing = needs.secrets.filter((key) => !facts.keys.includes(key));
  if (missing.length) return `${name} lacks ${missing.join(', ')}, which channel ${row.channel} needs`;
  const result = await checker.checkIntegration(row.company_id, id);
  if (!result) return `Integration ${id} (config.integration_id) does not exist in your company`;
  if (!result.ok) {
    await step('error', `${name} failed its live check: ${result.detail}`);
    return `${name} failed its live check: ${result.detail}`;
  }
  await step(
    'info',
    `Channel ${row.channel} answers through ${name}: live check passed in ${result.latency_ms} ms (${result.detail})`,
  );
  return null;
}
/** A failed check's reason, or null when the step passed (and was logged). */
type Check = Promise<string | null>;

async function checkDeployment(deps: RolloutDeps, row: repo.DeploymentRow, step: Step): Promise<RolloutOutcome> {
  const channelError = await checkChannelIntegration(deps, row, step);
  if (channelError) return { ok: false, error: channelError };
  if (row.deployable_type === 'workflow') return checkWorkflow(deps, row, step);
  await step(
    'info',
    `Roll-out attempt ${row.rollout_attempt} started: checking the agent, its knowledge and its integrations`,
  );
  const agent = await findAgent(deps.db, row.company_id, row.agent_id);
  if (!agent) return { ok: false, error: `Agent ${row.agent_id} no longer exists` };
  const error =
    (await checkAgent(agent, row, step)) ??
    (await checkCollections(deps.knowledge, agent, row, step)) ??
    (await checkIntegrations(deps, agent, row, step));
  return error
    ? { ok: false, error }
    : { ok: true, summary: `serving agent:${row.agent_id}:${row.channel}:${row.region_slug}` };
}

/**
 * A workflow serves when every agent it names (each step's and the default) would pass an agent
 * roll-out: each is checked in turn, its log lines prefixed with the step, and the first failure
 * fails the roll-out with the step named.
 */
async function checkWorkflow(deps: RolloutDeps, row: repo.DeploymentRow, step: Step): Promise<RolloutOutcome> {
  await step('info', `Roll-out attempt ${row.rollout_attempt} started: checking workflow ${row.deployable_id}`);
  const workflow = deps.workflows ? await deps.workflows.find(row.company_id, row.deployable_id) : undefined;
  if (!workflow) return { ok: false, error: `Workflow ${row.deployable_id} no longer exists` };
  if (workflow.steps.length === 0) return { ok: false, error: `Workflow '${workflow.name}' has no steps` };
  const roles = new Map<string, string[]>();
  for (const entry of workflow.steps)
    roles.set(entry.agent_id, [...(roles.get(entry.agent_id) ?? []), `step '${entry.name}'`]);
  roles.set(workflow.default_agent_id, [...(roles.get(workflow.default_agent_id) ?? []), 'default agent']);
  for (const [agentId, names] of roles) {
    const label = names.join(', ');
    const prefixed: Step = (level, message) => step(level, `Workflow ${label}: ${message}`);
    const agent = await findAgent(deps.db, row.company_id, agentId);
    if (!agent) return { ok: false, error: `Workflow ${label}: agent ${agentId} no longer exists` };
    const error =
      (await checkAgent(agent, row, prefixed)) ??
      (await checkCollections(deps.knowledge, agent, row, prefixed)) ??
      (await checkIntegrations(deps, agent, row, prefixed));
    if (error) return { ok: false, error: `Workflow ${label}: ${error}` };
  }
  return {
    ok: true,
    summary: `serving agent:${row.deployable_id}:${row.channel}:${row.region_slug} (workflow '${workflow.name}', ${roles.size} agent(s))`,
  };
}

/**
 * Nothing about the agent's own settings stops it from serving, so missing ones are warnings
 * that say what it serves with: without instructions or a task description, the platform's
 * standing instructions (answer from the knowledge passages in the user's language, say so and
 * escalate when they do not answer); without a model, the built-in knowledge-base responder
 * (as chat does for a model whose provider is gone). Languages it lacks are a warning too.
 */
async function checkAgent(agent: AgentRow, row: repo.DeploymentRow, step: Step): Check {
  const name = agent.title.trim() ? `'${agent.title}'` : `${agent.id} (untitled)`;
  if (!agent.title.trim()) {
    await step('warning', `Agent ${name} has no title: it introduces itself as an assistant of the company`);
  }
  if (!agent.instructions.trim() && !agent.task_description.trim()) {
    await step(
      'warning',
      `Agent ${name} has no instructions or task description: it serves with the platform's default instructions`,
    );
  }
  if (!agent.model.trim()) {
    await step('warning', `Agent ${name} has no model: the built-in knowledge-base responder answers`);
  }
  await step('info', `Agent ${name} is ready (model ${agent.model.trim() || BUILTIN_KB_MODEL})`);
  const spoken = primaryLanguages(agent.languages);
  const unsupported = primaryLanguages(row.languages).filter((code) => !spoken.includes(code));
  if (unsupported.length > 0) {
    await step(
      'warning',
      `Agent ${name} does not list ${unsupported.join(', ')} among its languages (${agent.languages || 'none'})`,
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

/**
 * Every integration the agent lists exists in the company, those it lists or is linked to are
 * active, and each passes its live check (one vendor call each, run outside any transaction): one
 * log line per integration, and the first failed check fails the roll-out with its words.
 */
async function checkIntegrations(deps: RolloutDeps, agent: AgentRow, row: repo.DeploymentRow, step: Step): Check {
  const integrations = await repo.agentIntegrations(deps.db, row.company_id, agent.id, agent.integration_ids);
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
  if (integrations.length === 0) return null;
  const checker = deps.integrations;
  if (!checker) {
    await step(
      'warning',
      `Live checks of ${integrations.length} integration(s) skipped: integrations are not available`,
    );
    return null;
  }
  const results = await Promise.all(
    integrations.map((integration) => checker.checkIntegration(row.company_id, integration.id)),
  );
  let failure: string | null = null;
  for (const [index, integration] of integrations.entries()) {
    const result = results[index];
    const name = `Integration '${integration.name}' (${integration.type})`;
    if (!result) {
      failure ??= `Integration '${integration.name}' (${integration.id}) no longer exists`;
    } else if (result.ok) {
      await step('info', `${name} passed its live check in ${result.latency_ms} ms: ${result.detail}`);
    } else {
      await step('error', `${name} failed its live check: ${result.detail}`);
      failure ??= `${name} failed its live check: ${result.detail}`;
    }
  }
  return failure;
}
