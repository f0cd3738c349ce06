/**
 * Agents of a company: what they know (collections), what they may use (integrations), which
 * model answers (a configured provider's model, or the built-in knowledge-base responder) and
 * how they escalate. Members read; developers and above manage. Regions are a read-only list.
 */
import type { RawBuilder } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import { AppErrors } from '../../http/errors.js';
import type { PageOf } from '../../http/schemas.js';
import { hasRole } from '../../lib/roles.js';
import type { LanguageModels } from '../../ports/llm.js';
import * as repo from './agents.repo.js';
import type {
  Agent,
  CreateAgentBody,
  Escalation,
  PerformanceMetrics,
  Region,
  UpdateAgentBody,
} from './agents.schemas.js';
import { checkToolRules, mergeToolRules, toToolRules, type OfferedTools } from './agents.tool-rules.js';

/** The model name of the offline responder that answers from the knowledge base. */
export const BUILTIN_KB_MODEL = 'builtin:kb';

export interface AgentsDeps {
  db: Db;
  llm: Pick<LanguageModels, 'checkModel'>;
  /** The knowledge base: which collection ids are not the company's. Null: none are. */
  collections: {
    collectionsReadiness(companyId: string, ids: string[]): Promise<{ missing: readonly string[] }>;
  } | null;
  /** Support queries: each agent's all-time performance_metrics, the figures support queries show. */
  performance: {
    performanceOfAgents(
      executor: Executor,
      companyId: string,
      agentIds: string[],
    ): Promise<Map<string, PerformanceMetrics>>;
    /** The same figures read in the list's own statement (a lateral subquery on `a`). */
    performanceSql(companyId: string): {
      lateral: RawBuilder<unknown>;
      metrics(row: Record<string, unknown>): PerformanceMetrics;
    };
  } | null;
  /** The tools the agent's integrations offer (a tool rule must name one). Null: no integrations module. */
  tools?: OfferedTools | null;
  /** Called once an agent changed or went (this instance's serving cache; others hear it from the database). */
  servingChanged?: () => void;
}

const NO_METRICS: PerformanceMetrics = {
  total_queries_handled: 0,
  avg_resolution_time: 0,
  success_rate: 0,
  customer_satisfaction_avg: 0,
};
export function toEscalation(value: Record<string, unknown>): Escalation {
  return {
    enabled: typeof value.enabled === 'boolean' ? value.enabled : true,
    contact_email: typeof value.contact_email === 'string' ? value.contact_email : null,
    message: typeof value.message === 'string' ? value.message : '',
  };
}

export function toAgent(row: repo.AgentRow, metrics: PerformanceMetrics = NO_METRICS): Agent {
  return {
    id: row.id,
    company_id: row.company_id,
    title: row.title,
    task_description: row.task_description,
    instructions: row.instructions,
    model: row.model,
    temperature: row.temperature,
    collection_ids: row.collection_ids,
    integration_ids: row.integration_ids,
    languages: row.languages.split(',').filter(Boolean),
    welcome_message: row.welcome_message,
    escalation: toEscalation(row.escalation),
    tool_rules: toToolRules(row.tool_rules),
    performance_metrics: metrics,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function toRegion(row: { id: string; slug: string; name: string; created_at: Date }): Region {
  return { id: row.id, slug: row.slug, name: row.name, created_at: row.created_at.toISOString() };
}

function requireDeveloper(context: CompanyContext, what: string) {
  if (!hasRole(context.role, 'developer')) {
    throw AppErrors.forbidden(`${what} needs the developer role; your role is ${context.role}`);
  }
}

export function createAgentsService(deps: AgentsDeps) {
  const { db, llm } = deps;

  async function validate(context: CompanyContext, body: UpdateAgentBody, current?: repo.AgentRow) {
    if (body.model !== undefined && body.model !== BUILTIN_KB_MODEL) {
      const problem = llm.checkModel(body.model);
      if (problem) throw AppErrors.validation(`Invalid field 'model': ${problem}`);
    }
    const collectionIds = body.collection_ids ?? [];
    const missingCollections = !collectionIds.length
      ? []
      : deps.collections
        ? (await deps.collections.collectionsReadiness(context.companyId, collectionIds)).missing
        : collectionIds;
    if (missingCollections.length)
      throw AppErrors.validation(
        `Invalid field 'collection_ids': collection not found: ${missingCollections.join(', ')}`,
      );
    const missingIntegrations = await repo.missingIntegrations(db, context.companyId, body.integration_ids ?? []);
    if (missingIntegrations.length)
      throw AppErrors.validation(
        `Invalid field 'integration_ids': integration not found: ${missingIntegrations.join(', ')}`,
      );
    // The rules as they will be, checked against the tools the agent will have (a rule given, or
    // the integrations changed under rules already set).
    const rules = mergeToolRules(current?.tool_rules ?? {}, body.tool_rules);
    if (
      body.tool_rules !== undefined ||
      (body.integration_ids !== undefined && (rules.order_lookup || rules.escalation_ticket))
    )
      await checkToolRules(
        deps.tools ?? null,
        context.companyId,
        {
          id: current?.id ?? null,
          integration_ids: body.integration_ids ?? current?.integration_ids ?? [],
        },
        rules,
      );
  }

  /** The columns of a validated body, named one by one (the body itself never reaches SQL). */
  function columns(body: UpdateAgentBody, current?: repo.AgentRow): repo.AgentSettings {
    const { languages, escalation, tool_rules: toolRules } = body;
    const was = toEscalation(current?.escalation ?? {});
    return {
      title: body.title,
      task_description: body.task_description,
      instructions: body.instructions,
      model: body.model,
      temperature: body.temperature,
      collection_ids: body.collection_ids,
      integration_ids: body.integration_ids,
      welcome_message: body.welcome_message,
      ...(languages ? { languages: languages.join(',') } : {}),
      ...(escalation
        ? {
            escalation: JSON.stringify({
              enabled: escalation.enabled ?? was.enabled,
              contact_email: escalation.contact_email === undefined ? was.contact_email : escalation.contact_email,
              message: escalation.message ?? was.message,
            }) as never,
          }
        : {}),
      ...(toolRules
        ? { tool_rules: JSON.stringify(mergeToolRules(current?.tool_rules ?? {}, toolRules)) as never }
        : {}),
    };
  }

  async function withMetrics(context: CompanyContext, rows: repo.AgentRow[]): Promise<Agent[]> {
    const metrics = deps.performance
      ? await deps.performance.performanceOfAgents(
          db,
          context.companyId,
          rows.map((row) => row.id),
        )
      : new Map<string, PerformanceMetrics>();
    return rows.map((row) => toAgent(row, metrics.get(row.id)));
  }

  return {
    async create(context: CompanyContext, body: CreateAgentBody): Promise<Agent> {
      requireDeveloper(context, 'Creating agents');
      await validate(context, body);
      const row = await repo.insertAgent(db, {
        ...columns(body),
        title: body.title,
        company_id: context.companyId,
        created_by: context.userId,
      });
      return toAgent(row);
    },

    async list(context: CompanyContext, skip: number, limit: number): Promise<PageOf<Agent>> {
      // One statement: the page, the total and each agent's figures.
      const performance = deps.performance?.performanceSql(context.companyId) ?? null;
      const { rows, total } = await repo.listAgents(db, context.companyId, skip, limit, performance?.lateral ?? null);
      const data = rows.map((row) =>
        toAgent(row, performance && row.counters ? performance.metrics(row.counters) : NO_METRICS),
      );
      return { data, total, skip, limit };
    },

    async get(context: CompanyContext, agentId: string): Promise<Agent> {
      const row = await repo.findAgent(db, context.companyId, agentId);
      if (!row) throw AppErrors.notFound('Agent', agentId);
      const [agent] = await withMetrics(context, [row]);
      return agent ?? toAgent(row);
    },

    async update(context: CompanyContext, agentId: string, body: UpdateAgentBody): Promise<Agent> {
      requireDeveloper(context, 'Updating agents');
      const current = await repo.findAgent(db, context.companyId, agentId);
      if (!current) throw AppErrors.notFound('Agent', agentId);
      await validate(context, body, current);
      const row = await repo
        .updateAgent(db, context.companyId, agentId, columns(body, current))
        .finally(() => deps.servingChanged?.());
      if (!row) throw AppErrors.notFound('Agent', agentId);
      const [agent] = await withMetrics(context, [row]);
      return agent ?? toAgent(row);
    },

    async remove(context: CompanyContext, agentId: string): Promise<void> {
      requireDeveloper(context, 'Deleting agents');
      const deleted = await repo.deleteAgent(db, context.companyId, agentId).finally(() => deps.servingChanged?.());
      if (!deleted) throw AppErrors.notFound('Agent', agentId);
    },

    async regions(): Promise<PageOf<Region>> {
      const rows = await repo.listRegions(db);
      return { data: rows.map(toRegion), total: rows.length, skip: 0, limit: rows.length };
    },
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;
