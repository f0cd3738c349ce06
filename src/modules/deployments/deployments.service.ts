/**
 * Deployments: create, update, delete, the control actions of the state machine
 * (deployment-state.ts), logs, and what chat asks of them. Every status change happens under a
 * row lock, writes a log entry and a team notification in the same transaction, and a start
 * enqueues the roll-out job in that transaction too.
 */
import type { Db, Executor } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import type { PageOf } from '../../http/schemas.js';
import type { JobQueue } from '../../jobs/queue.js';
import { findAgent } from '../agents/index.js';
import {
  channelIntegrationId,
  checkChannel,
  checkConfig,
  checkLanguages,
  type FieldCheck,
} from './deployment-fields.js';
import {
  ACTION_WORDS,
  canUpdate,
  isLive,
  transition,
  type ControlAction,
  type DeploymentAction,
  type DeploymentStatus,
} from './deployment-state.js';
import { DeploymentErrors } from './deployments.errors.js';
import type {
  CollectionsReadiness,
  DeploymentNotification,
  DeploymentNotifier,
  IntegrationChecker,
  WorkflowSource,
} from './deployments.ports.js';
import * as repo from './deployments.repo.js';
import { setWorkflowAgent } from './deployments.workflows.repo.js';
import { claimRollout, requeueRollouts, ROLLOUT_JOB, runRollout, type RolloutJob } from './deployments.rollout.js';
import type {
  CreateDeploymentBody,
  Deployment,
  ListDeploymentsQuery,
  LogEntry,
  UpdateDeploymentBody,
} from './deployments.schemas.js';
import type { LogLevel } from './deployments.tables.js';

/** A roll-out handed back after an unexpected failure (database trouble) runs again after this. */
const ROLLOUT_RELEASE_DELAY_SECONDS = 10;

/** A deployment as a channel's inbound route and its answering job read it. */
export interface ChannelDeployment {
  id: string;
  company_id: string;
  channel: string;
  status: DeploymentStatus;
  deployable_type: 'agent' | 'workflow';
  deployable_id: string;
  agent_id: string;
  languages: string;
  /** The chat key its turns are prepared with. */
  agent_key: string;
  /** `config.integration_id` when it is a UUID. */
  integration_id: string | null;
}

export interface DeploymentsDeps {
  db: Db;
  queue: Pick<JobQueue, 'send'>;
  publicBaseUrl: string;
  notifications?: DeploymentNotifier | null;
  knowledge?: CollectionsReadiness | null;
  /** The integrations' live check, run by the roll-out for each linked integration. */
  integrations?: IntegrationChecker | null;
  /** Workflows (deployable_type workflow): found on create, and their agents checked by the roll-out. */
  workflows?: WorkflowSource | null;
  log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  /** Called once deployments may have changed (this instance's serving cache; others hear it from the database). */
  servingChanged?: () => void;
}

export function toDeployment(row: repo.DeploymentRow): Deployment {
  return {
    id: row.id,
    deployable_type: row.deployable_type,
    deployable_id: row.deployable_id,
    agent_id: row.agent_id,
    company_id: row.company_id,
    user_id: row.user_id,
    channel: row.channel,
    region_id: row.region_id,
    languages: row.languages,
    status: row.status,
    config: row.config,
    error: row.error,
    agent_key: `agent:${row.deployable_id}:${row.channel}:${row.region_slug}`,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function field(name: string, check: FieldCheck): string {
  if (!check.ok) throw DeploymentErrors.invalidField(name, check.problem);
  return check.value;
}

/** The agent's languages as a deployment default; an agent with none (or malformed ones) gives "". */
function agentLanguages(raw: string): string {
  const check = checkLanguages(raw);
  return check.ok ? check.value : '';
}

const PRIORITY: Record<DeploymentAction, DeploymentNotification['priority']> = {
  start: 'low',
  succeed: 'medium',
  fail: 'high',
  stop: 'medium',
  pause: 'medium',
  resume: 'low',
};

export interface TransitionOptions {
  actorId: string | null;
  /** The failure reason, for `fail`. */
  error?: string;
  /** Why, appended to the log entry and the notification. */
  reason?: string;
}

export function createDeploymentsService(deps: DeploymentsDeps) {
  const { db, queue } = deps;

  async function regionSlug(executor: Executor, regionId: string): Promise<string> {
    const region = await repo.findRegion(executor, regionId);
    if (!region)
      throw DeploymentErrors.invalidField('region_id', `unknown region ${regionId} (see GET /api/public/regions)`);
    return region.slug;
  }

  async function ensureKeyFree(
    executor: Executor,
    row: {
      id?: string;
      deployable_type: 'agent' | 'workflow';
      deployable_id: string;
      channel: string;
      region_id: string;
    },
    slug: string,
  ) {
    const other = await repo.findLiveDeployment(
      executor,
      { deployableId: row.deployable_id, channel: row.channel, regionId: row.region_id },
      row.id,
    );
    if (other) throw DeploymentErrors.liveConflict(other.id, other.status, row.deployable_type, row.channel, slug);
  }

  async function lockOrThrow(trx: Executor, companyId: string, id: string) {
    const row = await repo.lockDeployment(trx, companyId, id);
    if (!row) throw DeploymentErrors.notFound(id);
    return row;
  }

  /** Moves a locked row by `action`: 409 when the state machine forbids it. Returns the new row. */
  async function applyTransition(
    trx: Executor,
    row: repo.DeploymentRow,
    action: DeploymentAction,
    options: TransitionOptions,
  ) {
    const result = transition(row.status, action);
    if (!result.allowed) throw DeploymentErrors.invalidTransition(row.status, action, result.allowedFrom);
    if (action === 'start') await ensureKeyFree(trx, row, row.region_slug);
    const starting = action === 'start';
    await repo.updateDeployment(trx, row.company_id, row.id, {
      status: result.to,
      error: action === 'fail' ? (options.error ?? 'Roll-out failed') : starting ? null : row.error,
      ...(starting ? { rollout_attempt: row.rollout_attempt + 1, started_by: options.actorId } : {}),
    });
    const summary = `Deployment ${ACTION_WORDS[action]}: ${result.from} → ${result.to}`;
    const detail = options.error ?? options.reason;
    await repo.insertLog(
      trx,
      row.id,
      action === 'fail' ? 'error' : 'info',
      detail ? `${summary} (${detail})` : summary,
    );
    await deps.notifications?.notify(trx, {
      companyId: row.company_id,
      senderId: options.actorId,
      notificationType: 'system',
      category: 'deployment',
      priority: PRIORITY[action],
      title: `Deployment ${ACTION_WORDS[action]}`,
      message: `Deployment ${row.id} of ${row.deployable_type} ${row.deployable_id} on ${row.channel} in ${row.region_slug} ${action === 'succeed' ? 'is active' : `is ${result.to}`}${detail ? `: ${detail}` : ''}`,
      metadata: {
        deployment_id: row.id,
        agent_id: row.agent_id,
        action_type: `deployment_${action}`,
        status: result.to,
        previous_status: result.from,
      },
      actionUrl: `${deps.publicBaseUrl}/api/public/deployments/${row.id}`,
    });
    if (starting) {
      const job: RolloutJob = { deploymentId: row.id, companyId: row.company_id, attempt: row.rollout_attempt + 1 };
      await queue.send(trx, ROLLOUT_JOB, job, { singletonKey: `${row.id}:${job.attempt}` });
    }
    return (await repo.findDeployment(trx, row.company_id, row.id))!;
  }

  const changing = <T>(work: Promise<T>): Promise<T> => work.finally(() => deps.servingChanged?.());

  const rolloutDeps = {
    db,
    knowledge: deps.knowledge ?? null,
    integrations: deps.integrations ?? null,
    workflows: deps.workflows ?? null,
    log: deps.log,
  };

  /** What a deployment serves: the agent, or the workflow (its default agent is the record's agent_id). */
  async function deployable(trx: Executor, companyId: string, body: CreateDeploymentBody) {
    if (body.deployable_type === 'workflow') {
      const workflow = deps.workflows ? await deps.workflows.find(companyId, body.deployable_id) : undefined;
      if (!workflow)
        throw DeploymentErrors.invalidField('deployable_id', `no workflow ${body.deployable_id} in your company`);
      const agent = await findAgent(trx, companyId, workflow.default_agent_id);
      return { id: workflow.id, agentId: workflow.default_agent_id, languages: agent?.languages ?? '' };
    }
    const agent = await findAgent(trx, companyId, body.deployable_id);
    if (!agent) throw DeploymentErrors.invalidField('deployable_id', `no agent ${body.deployable_id} in your company`);
    return { id: agent.id, agentId: agent.id, languages: agent.languages };
  }
  const sendRollout = (trx: Executor, job: RolloutJob, delaySeconds: number) =>
    queue.send(trx, ROLLOUT_JOB, job, delaySeconds ? { startAfterSeconds: delaySeconds } : {});
  /** Runs a claimed roll-out and finishes its transition (active or failed). */
  const finishRollout = (claimed: repo.DeploymentRow) =>
    changing(
      runRollout(rolloutDeps, claimed, async (trx, row, outcome) => {
        await applyTransition(trx, row, outcome.ok ? 'succeed' : 'fail', {
          actorId: row.started_by,
          ...(outcome.ok ? { reason: outcome.summary } : { error: outcome.error }),
        });
      }),
    );

  const service = {
    async create(context: CompanyContext, body: CreateDeploymentBody): Promise<Deployment> {
      const channel = field('channel', checkChannel(body.channel));
      const config = body.config === undefined ? '{}' : field('config', checkConfig(body.config));
      const id = await db.transaction().execute(async (trx) => {
        const served = await deployable(trx, context.companyId, body);
        await regionSlug(trx, body.region_id);
        const languages =
          body.languages !== undefined
            ? field('languages', checkLanguages(body.languages))
            : agentLanguages(served.languages);
        const newId = await repo.insertDeployment(trx, {
          company_id: context.companyId,
          user_id: context.userId,
          deployable_type: body.deployable_type,
          deployable_id: served.id,
          agent_id: served.agentId,
          channel,
          region_id: body.region_id,
          languages,
          config,
        });
        await repo.insertLog(
          trx,
          newId,
          'info',
          `Deployment created (pending) for ${body.deployable_type} ${served.id} on ${channel}`,
        );
        return newId;
      });
      return service.get(context, id);
    },

    async list(context: CompanyContext, query: ListDeploymentsQuery): Promise<PageOf<Deployment>> {
      const { skip, limit, ...filters } = query;
      const { rows, total } = await repo.listDeployments(db, context.companyId, filters, skip, limit);
      return { data: rows.map(toDeployment), total, skip, limit };
    },

    async get(context: CompanyContext, id: string): Promise<Deployment> {
      const row = await repo.findDeployment(db, context.companyId, id);
      if (!row) throw DeploymentErrors.notFound(id);
      return toDeployment(row);
    },

    /** Changes settings; on a live deployment they apply at once (and the change is logged). */
    async update(context: CompanyContext, id: string, body: UpdateDeploymentBody): Promise<Deployment> {
      const changes: { channel?: string; region_id?: string; languages?: string; config?: string } = {};
      if (body.channel !== undefined) changes.channel = field('channel', checkChannel(body.channel));
      if (body.languages !== undefined) changes.languages = field('languages', checkLanguages(body.languages));
      if (body.config !== undefined) changes.config = field('config', checkConfig(body.config));
      if (body.region_id !== undefined) changes.region_id = body.region_id;
      const row = await changing(
        db.transaction().execute(async (trx) => {
          const current = await lockOrThrow(trx, context.companyId, id);
          if (!canUpdate(current.status)) throw DeploymentErrors.deployingNoUpdate();
          const slug = changes.region_id ? await regionSlug(trx, changes.region_id) : current.region_slug;
          const changed = (Object.keys(changes) as (keyof typeof changes)[]).filter(
            (key) => changes[key] !== current[key],
          );
          if (changed.length === 0) return current;
          const next = { ...current, ...changes };
          if (isLive(current.status)) await ensureKeyFree(trx, next, slug);
          await repo.updateDeployment(trx, context.companyId, id, changes);
          const described = changed.map((key) =>
            key === 'config' ? 'config' : `${key} ${current[key] || '""'} → ${changes[key]}`,
          );
          const when = isLive(current.status) ? ` while ${current.status}; applied at once` : '';
          await repo.insertLog(trx, id, 'info', `Settings updated${when}: ${described.join(', ')}`);
          return (await repo.findDeployment(trx, context.companyId, id))!;
        }),
      );
      return toDeployment(row);
    },

    /** Deletes a deployment; a live one (deploying, active, paused) is stopped first. */
    async remove(context: CompanyContext, id: string): Promise<void> {
      await changing(
        db.transaction().execute(async (trx) => {
          const row = await lockOrThrow(trx, context.companyId, id);
          if (isLive(row.status))
            await applyTransition(trx, row, 'stop', {
              actorId: context.userId,
              reason: 'the deployment is being deleted',
            });
          await repo.deleteDeployment(trx, context.companyId, id);
        }),
      );
    },

    async control(context: CompanyContext, id: string, action: ControlAction): Promise<Deployment> {
      const row = await changing(
        db.transaction().execute(async (trx) => {
          const current = await lockOrThrow(trx, context.companyId, id);
          return applyTransition(trx, current, action, { actorId: context.userId });
        }),
      );
      return toDeployment(row);
    },

    async logs(
      context: CompanyContext,
      id: string,
      since: Date | undefined,
      limit: number,
    ): Promise<{ logs: LogEntry[] }> {
      const row = await repo.findDeployment(db, context.companyId, id);
      if (!row) throw DeploymentErrors.notFound(id);
      const entries = await repo.listLogs(db, id, since, limit);
      return {
        logs: entries.map((entry) => ({
          timestamp: entry.created_at.toISOString(),
          level: entry.level,
          message: entry.message,
        })),
      };
    },

    /**
     * The deployment an agent_key reaches: the live one of this agent, channel and region slug.
     * None → 404; paused (or still deploying) → 409.
     */
    async resolveForChat(companyId: string, agentId: string, channel: string, regionSlug: string): Promise<Deployment> {
      const row = await repo.findLiveForChat(db, companyId, agentId, channel, regionSlug);
      if (!row) throw DeploymentErrors.noActiveDeployment(agentId, channel, regionSlug);
      if (row.status !== 'active') throw DeploymentErrors.notServing(row.id, row.status);
      return toDeployment(row);
    },

    /** The live deployment (deploying, active, paused) of an agent or workflow, if any. */
    async liveDeploymentOf(
      companyId: string,
      deployableId: string,
    ): Promise<{ id: string; status: string } | undefined> {
      return repo.findLiveOf(db, companyId, deployableId);
    },

    /** A workflow's default agent changed: its deployments record the new one as `agent_id`. */
    async workflowDefaultAgentChanged(companyId: string, workflowId: string, agentId: string): Promise<void> {
      await changing(setWorkflowAgent(db, companyId, workflowId, agentId));
    },

    /**
     * The deployment a channel's inbound route names (by id alone: the vendor's request carries no
     * company), with what a channel needs to serve it; undefined when there is none.
     */
    async forChannel(deploymentId: string): Promise<ChannelDeployment | undefined> {
      const row = await repo.findDeploymentById(db, deploymentId);
      if (!row) return undefined;
      return {
        id: row.id,
        company_id: row.company_id,
        channel: row.channel,
        status: row.status,
        deployable_type: row.deployable_type,
        deployable_id: row.deployable_id,
        agent_id: row.agent_id,
        languages: row.languages,
        agent_key: `agent:${row.deployable_id}:${row.channel}:${row.region_slug}`,
        integration_id: channelIntegrationId(row.config),
      };
    },

    /** A runtime event (a chat served, an error) in the deployment's log; ignored once it is deleted. */
    async logEvent(deploymentId: string, level: LogLevel, message: string): Promise<void> {
      await repo.insertLogIfExists(db, deploymentId, level, message.slice(0, 4000));
    },

    /** Runs roll-out `job` in this call (tests and tools; the queue's workers use `rolloutTask`). */
    async runRollout(job: RolloutJob): Promise<void> {
      const claimed = await claimRollout(rolloutDeps, db, job, null);
      if (claimed) await finishRollout(claimed);
    },

    /** The roll-out as a task job of the queue (deployments.jobs.ts). */
    rolloutTask: {
      claim: (trx: Executor, job: RolloutJob, workerId: number | null) => claimRollout(rolloutDeps, trx, job, workerId),
      run: finishRollout,
      requeue: (trx: Executor, workerIds: readonly number[]) => requeueRollouts(trx, sendRollout, { workerIds }),
      release: async (trx: Executor, row: repo.DeploymentRow) => {
        await requeueRollouts(
          trx,
          sendRollout,
          { only: { id: row.id, attempt: row.rollout_attempt } },
          ROLLOUT_RELEASE_DELAY_SECONDS,
        );
      },
    },
  };
  return service;
}

export type DeploymentsService = ReturnType<typeof createDeploymentsService>;
export type { DeploymentStatus };
