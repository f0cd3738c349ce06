import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Page, SkipLimit, Timestamp, Uuid } from '../../http/schemas.js';

const LanguageCode = Type.String({
  pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$',
  description: 'ISO 639 code, e.g. en, ar',
});

export const Escalation = Type.Object(
  {
    enabled: Type.Boolean({ default: true, description: 'Offer a human when the agent cannot answer.' }),
    contact_email: Nullable(Type.String({ format: 'email', maxLength: 320 })),
    message: Type.String({ maxLength: 2000, description: 'Said when escalating; a default is used when empty.' }),
  },
  { description: 'Escalation settings' },
);
export type Escalation = Static<typeof Escalation>;

/** Bodies refuse unknown fields (a 400 naming them): ids, tenancy and timestamps are never input. */
const closed = { additionalProperties: false } as const;

const EscalationInput = Type.Partial(Escalation, closed);

/** The rules `builtin:kb` acts by (DESIGN §10): the order look-up, the escalation's help-desk ticket. */
export const TOOL_RULES = ['order_lookup', 'escalation_ticket'] as const;
export type ToolRuleName = (typeof TOOL_RULES)[number];

export const ToolRule = Type.Object(
  {
    integration_id: Uuid({ description: "One of the agent's integrations" }),
    tool: Type.String({
      pattern: '^[A-Za-z0-9_.-]{1,128}$',
      description: "The integration's own tool name (`lookup_order`; an MCP server's tool as its live check lists it)",
    }),
    input_key: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_.-]{1,128}$',
        description:
          "The tool's input field the order number goes in (order look-up only; omitted: the field whose name says order, number, id or ref)",
      }),
    ),
  },
  { ...closed, description: 'An integration tool the built-in responder calls for this rule' },
);
export type ToolRule = Static<typeof ToolRule>;

export const ToolRules = Type.Object(
  { order_lookup: Nullable(ToolRule), escalation_ticket: Nullable(ToolRule) },
  {
    description:
      "Which integration tool `builtin:kb` calls for which rule: `order_lookup` (a question naming an order number) and `escalation_ticket` (a customer asking for a person). Null: the integrations' tool of the usual name (lookup_order, get_order, find_order; create_ticket).",
  },
);
export type ToolRules = Static<typeof ToolRules>;

/** Rules given are set (null: cleared); rules not given are kept. */
const ToolRulesInput = Type.Partial(ToolRules, {
  ...closed,
  examples: [
    {
      order_lookup: {
        integration_id: '3f2a9c1d-5b6e-4f70-8a91-0c2d3e4f5a6b',
        tool: 'order_status',
        input_key: 'reference',
      },
    },
  ],
});

const agentFields = {
  task_description: Type.String({ maxLength: 4000 }),
  instructions: Type.String({ maxLength: 20_000, description: 'System instructions given to the model.' }),
  model: Type.String({
    minLength: 1,
    maxLength: 200,
    description: '`builtin:kb` or `<provider>:<model>` of a configured provider',
  }),
  temperature: Type.Number({ minimum: 0, maximum: 2 }),
  collection_ids: Type.Array(Uuid(), { maxItems: 100, uniqueItems: true }),
  integration_ids: Type.Array(Uuid(), { maxItems: 100, uniqueItems: true }),
  languages: Type.Array(LanguageCode, { minItems: 1, maxItems: 20, uniqueItems: true }),
  welcome_message: Type.String({ maxLength: 2000 }),
  escalation: EscalationInput,
  tool_rules: ToolRulesInput,
};

export const CreateAgentBody = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    ...Type.Partial(Type.Object(agentFields)).properties,
  },
  closed,
);
export type CreateAgentBody = Static<typeof CreateAgentBody>;

export const UpdateAgentBody = Type.Partial(
  Type.Object({ title: Type.String({ minLength: 1, maxLength: 200 }), ...agentFields }),
  { minProperties: 1, ...closed },
);
export type UpdateAgentBody = Static<typeof UpdateAgentBody>;

export const PerformanceMetrics = Type.Object({
  total_queries_handled: Type.Integer(),
  avg_resolution_time: Type.Number({ description: 'minutes from the first message to the first resolved answer' }),
  success_rate: Type.Number({ description: 'percent of conversations the agent resolved' }),
  customer_satisfaction_avg: Type.Number({ description: 'mean feedback rating, 1–5 (0 without feedback)' }),
});
export type PerformanceMetrics = Static<typeof PerformanceMetrics>;

export const Agent = Type.Object(
  {
    id: Uuid(),
    company_id: Uuid(),
    title: Type.String(),
    task_description: Type.String(),
    instructions: Type.String(),
    model: Type.String(),
    temperature: Type.Number(),
    collection_ids: Type.Array(Uuid()),
    integration_ids: Type.Array(Uuid()),
    languages: Type.Array(Type.String()),
    welcome_message: Type.String(),
    escalation: Escalation,
    tool_rules: ToolRules,
    performance_metrics: PerformanceMetrics,
    created_by: Nullable(Uuid()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { $id: 'Agent' },
);
export type Agent = Static<typeof Agent>;

export const AgentPage = Page(Type.Ref(Agent));

export const ListAgentsQuery = Type.Object({ ...SkipLimit(20, 100) });

export const Region = Type.Object(
  { id: Uuid(), slug: Type.String(), name: Type.String(), created_at: Timestamp() },
  { $id: 'Region' },
);
export type Region = Static<typeof Region>;

export const RegionPage = Page(Type.Ref(Region));
