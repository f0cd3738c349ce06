/**
 * Workflows of a company: steps (an agent each, and when it applies), a default agent and a
 * router. Members read; developers and above manage. A workflow a live deployment serves cannot
 * be deleted (409); changes to it serve at once. Chat reads it through `routing` (find + route).
 */
import type { Db, Executor } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import { AppError, AppErrors } from '../../http/errors.js';
import type { PageOf } from '../../http/schemas.js';
import { hasRole } from '../../lib/roles.js';
import type { LanguageModels } from '../../ports/llm.js';
import { BUILTIN_KB_MODEL, findAgent } from '../agents/index.js';
import * as repo from './workflows.repo.js';
import {
  createRouter,
  RULES_ROUTER,
  type RoutableWorkflow,
  type RouteDecision,
  type RouteInput,
} from './workflows.router.js';
import type { CreateWorkflowBody, StepInput, UpdateWorkflowBody, Workflow } from './workflows.schemas.js';
import type { WorkflowStep } from './workflows.tables.js';

/** Time a model router may take before the rules decide instead. */
export const DEFAULT_ROUTER_TIMEOUT_MS = 2000;

export interface WorkflowsDeps {
  db: Db;
  llm: Pick<LanguageModels, 'checkModel' | 'stream'>;
  /** The live deployment (deploying, active, paused) serving a workflow, if any (the deployments module). */
  deployments: {
    liveDeploymentOf(companyId: string, deployableId: string): Promise<{ id: string; status: string } | undefined>;
    /** The workflow's deployments record its new default agent (their `agent_id`). */
    workflowDefaultAgentChanged(companyId: string, workflowId: string, agentId: string): Promise<void>;
  } | null;
  routerTimeoutMs?: number;
  /** Called once a workflow changed or went (this instance's serving cache; others hear it from the database). */
  servingChanged?: () => void;
  log?: { warn(obj: object, msg: string): void };
}

const invalid = (field: string, problem: string) =>
  new AppError(400, `Invalid field '${field}': ${problem}`, 'ValidationError');

function requireDeveloper(context: CompanyContext, what: string) {
  if (!hasRole(context.role, 'developer'))
    throw AppErrors.forbidden(`${what} needs the developer role; your role is ${context.role}`);
}

function toStep(input: StepInput): WorkflowStep {
  return {
    name: input.name.trim(),
    agent_id: input.agent_id.toLowerCase(),
    when: {
      query_types: [...(input.when?.query_types ?? [])],
      keywords: (input.when?.keywords ?? []).map((keyword) => keyword.trim()).filter(Boolean),
      languages: [...(input.when?.languages ?? [])],
    },
  };
}

export function toWorkflow(row: repo.WorkflowRow): Workflow {
  return {
    id: row.id,
    company_id: row.company_id,
    name: row.name,
    description: row.description,
    steps: row.steps,
    default_agent_id: row.default_agent_id,
    router: row.router,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function toRoutable(row: repo.WorkflowRow): RoutableWorkflow {
  return {
    id: row.id,
    company_id: row.company_id,
    name: row.name,
    description: row.description,
    default_agent_id: row.default_agent_id,
    router: row.router,
    steps: row.steps,
  };
}

export function createWorkflowsService(deps: WorkflowsDeps) {
  const { db } = deps;
  const router = createRouter({
    llm: deps.llm,
    timeoutMs: deps.routerTimeoutMs ?? DEFAULT_ROUTER_TIMEOUT_MS,
    ...(deps.log ? { log: deps.log } : {}),
  });

  async function checkAgent(executor: Executor, companyId: string, field: string, agentId: string) {
    if (!(await findAgent(executor, companyId, agentId))) throw invalid(field, `no agent ${agentId} in your company`);
  }

  /** The columns of a validated body: steps normalised, agents of the company, a router that exists. */
  async function validate(context: CompanyContext, body: UpdateWorkflowBody): Promise<repo.WorkflowSettings> {
    if (body.name !== undefined && !body.name.trim()) throw invalid('name', 'must not be blank');
    const steps = body.steps?.map(toStep);
    if (steps) {
      const seen = new Set<string>();
      for (const [index, step] of steps.entries()) {
        if (!step.name) throw invalid(`steps.${index}.name`, 'must not be blank');
        const key = step.name.toLowerCase();
        if (seen.has(key)) throw invalid(`steps.${index}.name`, `step name '${step.name}' is used twice`);
        seen.add(key);
      }
      for (const [index, step] of steps.entries())
        await checkAgent(db, context.companyId, `steps.${index}.agent_id`, step.agent_id);
    }
    if (body.default_agent_id !== undefined)
      await checkAgent(db, context.companyId, 'default_agent_id', body.default_agent_id);
    const routerName = body.router?.trim();
    if (routerName !== undefined && routerName !== RULES_ROUTER) {
      if (routerName === BUILTIN_KB_MODEL)
        throw invalid('router', `'${BUILTIN_KB_MODEL}' cannot route; use 'rules' or a configured model`);
      const problem = deps.llm.checkModel(routerName);
      if (problem) throw invalid('router', `'rules' or a configured model: ${problem}`);
    }
    return {
      name: body.name?.trim(),
      description: body.description,
      steps,
      default_agent_id: body.default_agent_id?.toLowerCase(),
      router: routerName,
    };
  }

  async function getRow(context: CompanyContext, id: string) {
    const row = await repo.findWorkflow(db, context.companyId, id);
    if (!row) throw AppErrors.notFound('Workflow', id);
    return row;
  }

  const changing = <T>(work: Promise<T>): Promise<T> => work.finally(() => deps.servingChanged?.());

  return {
    async create(context: CompanyContext, body: CreateWorkflowBody): Promise<Workflow> {
      requireDeveloper(context, 'Creating workflows');
      const values = await validate(context, body);
      const row = await repo.insertWorkflow(db, {
        ...values,
        name: values.name!,
        steps: values.steps!,
        default_agent_id: values.default_agent_id!,
        company_id: context.companyId,
        created_by: context.userId,
      });
      return toWorkflow(row);
    },

    async list(context: CompanyContext, skip: number, limit: number): Promise<PageOf<Workflow>> {
      const { rows, total } = await repo.listWorkflows(db, context.companyId, skip, limit);
      return { data: rows.map(toWorkflow), total, skip, limit };
    },

    async get(context: CompanyContext, id: string): Promise<Workflow> {
      return toWorkflow(await getRow(context, id));
    },

    async update(context: CompanyContext, id: string, body: UpdateWorkflowBody): Promise<Workflow> {
      requireDeveloper(context, 'Updating workflows');
      const current = await getRow(context, id);
      const values = await validate(context, body);
      const row = await changing(repo.updateWorkflow(db, context.companyId, id, values));
      if (!row) throw AppErrors.notFound('Workflow', id);
      if (row.default_agent_id !== current.default_agent_id)
        await deps.deployments?.workflowDefaultAgentChanged(context.companyId, id, row.default_agent_id);
      return toWorkflow(row);
    },

    /** Deletes a workflow; 409 while a live deployment (deploying, active, paused) serves it. */
    async remove(context: CompanyContext, id: string): Promise<void> {
      requireDeveloper(context, 'Deleting workflows');
      await changing(
        db.transaction().execute(async (trx) => {
          if (!(await repo.lockWorkflow(trx, context.companyId, id))) throw AppErrors.notFound('Workflow', id);
          const live = await deps.deployments?.liveDeploymentOf(context.companyId, id);
          if (live)
            throw AppErrors.conflict(
              `Workflow ${id} is served by deployment ${live.id} (${live.status}); stop or delete that deployment first`,
            );
          await repo.deleteWorkflow(trx, context.companyId, id);
        }),
      );
    },

    /** What chat and deployments read: the workflow to route, and the router. */
    routing: {
      async find(companyId: string, id: string): Promise<RoutableWorkflow | undefined> {
        const row = await repo.findWorkflow(db, companyId, id);
        return row ? toRoutable(row) : undefined;
      },
      route: (workflow: RoutableWorkflow, input: RouteInput): Promise<RouteDecision> => router.route(workflow, input),
    },
  };
}

export type WorkflowsService = ReturnType<typeof createWorkflowsService>;
