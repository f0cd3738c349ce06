/**
 * An agent's tool rules: which integration tool the built-in responder (`builtin:kb`) calls for
 * which rule (the order look-up, the escalation's ticket). Stored as JSON on the agent; a rule
 * names an integration of the agent and one of the tools it offers the agent, checked when the
 * agent is written (the integration must be the agent's, active, and list that tool).
 */
import { AppErrors } from '../../http/errors.js';
import { TOOL_RULES, type ToolRule, type ToolRules } from './agents.schemas.js';

/** The tools an agent's integrations offer it (the integrations module's listing, narrowed). */
export interface OfferedTools {
  forAgent(
    companyId: string,
    agent: { id: string; integration_ids: readonly string[] },
  ): Promise<readonly { integrationId: string; tool: string; inputSchema: Record<string, unknown> }[]>;
}

/** No agent yet (a create): no integration is linked to it by `agent_id`. */
const NO_AGENT = '00000000-0000-0000-0000-000000000000';

function ruleOf(value: unknown): ToolRule | null {
  const rule = value as Partial<ToolRule> | null | undefined;
  if (!rule || typeof rule.integration_id !== 'string' || typeof rule.tool !== 'string') return null;
  return {
    integration_id: rule.integration_id.toLowerCase(),
    tool: rule.tool,
    ...(typeof rule.input_key === 'string' ? { input_key: rule.input_key } : {}),
  };
}

/** The stored rules as the API shows them (every rule named, null when unset). */
export function toToolRules(value: Record<string, unknown> | null | undefined): ToolRules {
  return { order_lookup: ruleOf(value?.order_lookup), escalation_ticket: ruleOf(value?.escalation_ticket) };
}

/** The stored rules with a body's: a rule given is set (null clears it), one not given is kept. */
export function mergeToolRules(stored: Record<string, unknown>, input: Partial<ToolRules> | undefined): ToolRules {
  const rules = toToolRules(stored);
  for (const name of TOOL_RULES) if (input && input[name] !== undefined) rules[name] = ruleOf(input[name]);
  return rules;
}

/** Refuses (400) a rule whose tool the agent's integrations do not offer, or whose input key the tool does not take. */
export async function checkToolRules(
  tools: OfferedTools | null,
  companyId: string,
  agent: { id: string | null; integration_ids: readonly string[] },
  rules: ToolRules,
): Promise<void> {
  const set = TOOL_RULES.filter((name) => rules[name]);
  if (!set.length) return;
  const offered = tools
    ? await tools.forAgent(companyId, { id: agent.id ?? NO_AGENT, integration_ids: agent.integration_ids })
    : [];
  for (const name of set) {
    const rule = rules[name]!;
    const field = `Invalid field 'tool_rules.${name}'`;
    const ofIntegration = offered.filter((tool) => tool.integrationId === rule.integration_id);
    if (!ofIntegration.length)
      throw AppErrors.validation(
        `${field}: integration ${rule.integration_id} offers this agent no tools (it must be in integration_ids or linked to the agent, active, and an MCP server's tools listed by its live check)`,
      );
    const tool = ofIntegration.find((candidate) => candidate.tool === rule.tool);
    if (!tool) {
      const names = ofIntegration.map((candidate) => candidate.tool);
      throw AppErrors.validation(
        `${field}: integration ${rule.integration_id} offers no tool '${rule.tool}' (it offers: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''})`,
      );
    }
    if (rule.input_key !== undefined) {
      if (name !== 'order_lookup') throw AppErrors.validation(`${field}: input_key applies to order_lookup only`);
      const properties = Object.keys((tool.inputSchema.properties ?? {}) as Record<string, unknown>);
      if (!properties.includes(rule.input_key))
        throw AppErrors.validation(
          `${field}: the tool '${rule.tool}' has no input '${rule.input_key}' (it takes: ${properties.join(', ') || 'nothing'})`,
        );
    }
  }
}
