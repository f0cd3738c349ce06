/**
 * The tools an agent gets from its integrations (DESIGN §10), for the chat runtime: the active
 * integrations named in the agent's `integration_ids` or linked to it by their `agent_id`, each
 * contributing its connector's tools under a provider-safe name, and the calls themselves. The
 * listing reads only the non-secret part of a config; a call opens the secrets for that call
 * alone, and whatever comes back (summary, data, failure words) has every secret value masked.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Db } from '../../db/database.js';
import { startTimeLimit } from '../../lib/abort-limit.js';
import { ConnectorError, type AgentTool, type AgentToolResult } from '../../ports/connectors.js';
import type { ConnectorRegistry } from './integrations.registry.js';
import * as repo from './integrations.repo.js';
import { scrubSecrets, secretContext, type IntegrationSecrets } from './integrations.secrets.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** Provider limits on tool names (OpenAI and Anthropic): ^[a-zA-Z0-9_-]{1,64}$. */
const MAX_NAME = 64;

function safeName(text: string): string {
  return text.replace(/[^a-zA-Z0-9_-]+/g, '_').slice(0, MAX_NAME);
}

/**
 * `<type>_<tool>` (`slack_post_message`); when the agent has two integrations of one type, each
 * adds the first eight characters of its id (`slack_3f2a9c1d_post_message`).
 */
export function toolName(type: string, tool: string, integrationId: string, typeIsShared: boolean): string {
  const middle = typeIsShared ? `_${integrationId.replace(/-/g, '').slice(0, 8)}` : '';
  const prefix = safeName(`${type}${middle}_`);
  return `${prefix}${safeName(tool)}`.slice(0, MAX_NAME);
}

/** A TypeBox schema as plain JSON schema (its symbol keys dropped). */
function plainSchema(schema: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema ?? { type: 'object' })) as Record<string, unknown>;
}

/** Data with every secret value masked (vendors may echo what they were sent). */
function cleanData(data: unknown, clean: (text: string) => string): unknown {
  if (data === undefined) return null;
  const text = JSON.stringify(data);
  const cleaned = clean(text);
  if (cleaned === text) return data;
  try {
    return JSON.parse(cleaned) as unknown;
  } catch {
    return cleaned;
  }
}

export function createAgentTools(deps: {
  db: Db;
  registry: ConnectorRegistry;
  secrets: IntegrationSecrets;
  /** INTEGRATION_TIMEOUT_MS: the bound of one call. */
  timeoutMs: number;
  log: { warn(object: object, message: string): void };
}) {
  const { db, registry, secrets } = deps;
  const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });
  addFormats(ajv, ['email', 'uri', 'uuid', 'date', 'date-time']);
  const validators = new Map<string, ValidateFunction>();
  function validator(schema: Record<string, unknown>): ValidateFunction {
    const key = JSON.stringify(schema);
    let found = validators.get(key);
    if (!found) {
      found = ajv.compile(schema);
      // Bounded: custom_api schemas change with their integrations' configs.
      if (validators.size >= 500) validators.delete(validators.keys().next().value!);
      validators.set(key, found);
    }
    return found;
  }

  return {
    async forAgent(companyId: string, agent: { id: string; integration_ids: readonly string[] }) {
      const rows = await repo.activeForAgent(db, companyId, agent);
      const perType = new Map<string, number>();
      for (const row of rows) perType.set(row.type, (perType.get(row.type) ?? 0) + 1);
      const tools: AgentTool[] = [];
      for (const row of rows) {
        const definition = registry.get(row.type);
        if (!definition) continue;
        // Tools are listed from the stored config: secrets stay sealed (tools name only plain keys).
        for (const tool of registry.tools(row.type, row.config, row.discovered_tools)) {
          tools.push({
            name: toolName(row.type, tool.name, row.id, (perType.get(row.type) ?? 0) > 1),
            description: `${definition.name} (${row.name}): ${tool.description}`.slice(0, 1000),
            inputSchema: plainSchema(tool.input),
            integrationId: row.id,
            integrationType: row.type,
            tool: tool.name,
            notification: tool.notification,
          });
        }
      }
      return tools;
    },

    async run(
      companyId: string,
      tool: Pick<AgentTool, 'integrationId' | 'integrationType' | 'tool'>,
      input: Record<string, unknown>,
      signal: AbortSignal,
    ): Promise<AgentToolResult> {
      const row = await db
        .selectFrom('integrations')
        .select(['id', 'company_id', 'type', 'config', 'is_active', 'discovered_tools'])
        .where('company_id', '=', companyId)
        .where('id', '=', tool.integrationId)
        .executeTakeFirst();
      const definition = row ? registry.get(row.type) : undefined;
      if (!row || !row.is_active || !definition || row.type !== tool.integrationType) {
        return { ok: false, summary: `The ${tool.integrationType} integration is not available`, retryable: false };
      }
      const config = secrets.open(row.config, definition.secretKeys, (key) =>
        secretContext(row.company_id, row.id, key),
      );
      const clean = (text: string) => scrubSecrets(text, config, definition.secretKeys);
      const found = registry
        .tools(row.type, config, row.discovered_tools)
        .find((candidate) => candidate.name === tool.tool);
      if (!found) return { ok: false, summary: `${definition.name}: no tool ${tool.tool}`, retryable: false };
      const check = validator(plainSchema(found.input));
      if (!check(input)) {
        const [error] = check.errors ?? [];
        const where = error?.instancePath ? `${error.instancePath.slice(1)} ` : '';
        return {
          ok: false,
          summary: clean(
            `${definition.name}: invalid input for ${tool.tool}: ${where}${error?.message ?? 'is invalid'}`,
          ),
          retryable: false,
        };
      }
      const limit = startTimeLimit(signal, deps.timeoutMs);
      try {
        const outcome = await found.run(input, { config, signal: limit.signal });
        return { ok: true, summary: clean(outcome.summary), data: cleanData(outcome.data, clean) };
      } catch (error) {
        if (error instanceof ConnectorError)
          return { ok: false, summary: clean(error.message), retryable: error.retryable };
        if (signal.aborted)
          return { ok: false, summary: `${definition.name}: the call was cancelled`, retryable: true };
        if (limit.timedOut)
          return { ok: false, summary: `${definition.name}: no answer within ${deps.timeoutMs} ms`, retryable: true };
        deps.log.warn(
          { integration_id: row.id, type: row.type, tool: tool.tool, error: (error as Error).name },
          'tool call failed unexpectedly',
        );
        return { ok: false, summary: `${definition.name}: the call failed unexpectedly`, retryable: false };
      } finally {
        limit.release();
      }
    },
  };
}

export type AgentToolsService = ReturnType<typeof createAgentTools>;
