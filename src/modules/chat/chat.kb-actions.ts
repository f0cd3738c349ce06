/**
 * What the built-in responder (`builtin:kb`) does by rule with the agent's tools (DESIGN §10):
 * an order reference in the question with an order-lookup tool → the order's status and
 * tracking; an escalation → a help-desk ticket with the transcript, a message to the team and an
 * e-mail to the escalation contact, whichever of them the agent's integrations offer (in
 * parallel). The reply says what was done. The agent's `tool_rules` name the tool of a rule (an
 * MCP server's `order_status`, say); without one, the tool of the usual name is used.
 */
import type { ToolRule } from '../agents/index.js';
import type { LlmMessage } from '../../ports/llm.js';
import type { Language } from './chat.kb-responder.js';
import type { AgentTool, AgentTools } from './chat.ports.js';
import { callTool, type ToolCallDone } from './chat.tools.js';

/** Connector tools (and MCP servers' tools of these names) that look up an order by its number. */
const ORDER_TOOLS = new Set(['lookup_order', 'get_order', 'find_order']);
/** Connector tools that open a help-desk ticket. */
const TICKET_TOOLS = new Set(['create_ticket']);

/**
 * The order number a question names: "order #1042", "where is my order 1042", "order number
 * 1042", "order no. 1042", "#1042" in a question about an order; Arabic "طلب رقم 1042".
 */
export function orderReference(query: string): string | null {
  const direct =
    /\border(?:\s+(?:number|num|no\.?|id|ref(?:erence)?))?\s*(?:is\s*)?[:#]?\s*#?([A-Za-z]{0,4}\d{2,12})\b/i.exec(
      query,
    ) ?? /(?:طلب|الطلب|طلبي)\s*(?:رقم)?\s*#?(\d{2,12})/.exec(query);
  if (direct) return direct[1]!;
  if (/\border|\bpackage|\bdelivery|\bshipment|طلب|شحن/i.test(query)) {
    const hash = /#(\d{2,12})\b/.exec(query);
    if (hash) return hash[1]!;
  }
  return null;
}

interface ActionPhrases {
  order(summary: string): string;
  orderFailed(ref: string): string;
  ticket(id: string | null): string;
  team: string;
}

const SAY: Record<Language, ActionPhrases> = {
  en: {
    order: (summary) => `Here is what I found: ${summary}.`,
    orderFailed: (ref) => `I couldn't look up order #${ref} right now.`,
    ticket: (id) => (id ? `I opened ticket #${id} for you.` : 'I opened a ticket for you.'),
    team: "I've let the team know.",
  },
  ar: {
    order: (summary) => `إليك ما وجدته: ${summary}.`,
    orderFailed: (ref) => `تعذّر عليّ الاطلاع على الطلب رقم ${ref} الآن.`,
    ticket: (id) => (id ? `فتحت لك التذكرة رقم ${id}.` : 'فتحت لك تذكرة.'),
    team: 'أبلغت الفريق.',
  },
  fr: {
    order: (summary) => `Voici ce que j'ai trouvé : ${summary}.`,
    orderFailed: (ref) => `Je n'ai pas pu consulter la commande n° ${ref} pour le moment.`,
    ticket: (id) => (id ? `J'ai ouvert le ticket n° ${id} pour vous.` : "J'ai ouvert un ticket pour vous."),
    team: "J'ai prévenu l'équipe.",
  },
  de: {
    order: (summary) => `Das habe ich gefunden: ${summary}.`,
    orderFailed: (ref) => `Ich konnte die Bestellung #${ref} gerade nicht abrufen.`,
    ticket: (id) => (id ? `Ich habe das Ticket #${id} für Sie eröffnet.` : 'Ich habe ein Ticket für Sie eröffnet.'),
    team: 'Ich habe das Team informiert.',
  },
  es: {
    order: (summary) => `Esto es lo que he encontrado: ${summary}.`,
    orderFailed: (ref) => `No he podido consultar el pedido n.º ${ref} en este momento.`,
    ticket: (id) => (id ? `He abierto el ticket n.º ${id} para usted.` : 'He abierto un ticket para usted.'),
    team: 'He avisado al equipo.',
  },
  pt: {
    order: (summary) => `Eis o que encontrei: ${summary}.`,
    orderFailed: (ref) => `Não consegui consultar a encomenda n.º ${ref} neste momento.`,
    ticket: (id) => (id ? `Abri o pedido de suporte n.º ${id} para si.` : 'Abri um pedido de suporte para si.'),
    team: 'Avisei a equipa.',
  },
  it: {
    order: (summary) => `Ecco cosa ho trovato: ${summary}.`,
    orderFailed: (ref) => `Non sono riuscito a consultare l'ordine n. ${ref} in questo momento.`,
    ticket: (id) => (id ? `Ho aperto il ticket n. ${id} per lei.` : 'Ho aperto un ticket per lei.'),
    team: 'Ho avvisato il team.',
  },
};

export function actionPhrases(language: Language) {
  return SAY[language];
}

/** The transcript of the conversation so far, for a ticket or a message to the team. */
export function transcript(history: readonly LlmMessage[], query: string, agentTitle: string): string {
  const lines = history
    .filter((message) => message.role === 'user' || message.role === 'assistant')
    .map((message) => `${message.role === 'user' ? 'Customer' : agentTitle || 'Agent'}: ${message.content}`);
  lines.push(`Customer: ${query}`);
  return lines.join('\n').slice(-20_000);
}

/** Input for a tool from the values a rule has, by the names its schema uses; null if a required key has none. */
export function fillInput(
  tool: AgentTool,
  values: { subject: string; text: string; to: string | null },
): Record<string, unknown> | null {
  const schema = tool.inputSchema as { properties?: Record<string, { maxLength?: number }>; required?: string[] };
  const input: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    let value: string | null = null;
    if (/^(subject|title|summary)$/.test(key)) value = values.subject;
    else if (/^(text|body|description|comment|content|message|details)$/.test(key)) value = values.text;
    else if (/^(to|recipient|recipient_email)$/.test(key)) value = values.to;
    if (value === null) continue;
    input[key] = property.maxLength ? value.slice(0, property.maxLength) : value;
  }
  return (schema.required ?? []).every((key) => key in input) ? input : null;
}

/** The ticket number in a help-desk tool's data (`{id}`, `{ticket: {id}}`, `{ticket_id}`). */
export function ticketId(data: unknown): string | null {
  const record = (data ?? {}) as Record<string, unknown>;
  const ticket = (record.ticket ?? {}) as Record<string, unknown>;
  const id = ticket.id ?? record.ticket_id ?? record.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
}

/**
 * The tool of a rule: the one the agent's rule names (undefined when its integration no longer
 * offers it: the rule is not acted on), else the first of the usual names.
 */
export function ruleTool(
  available: readonly AgentTool[],
  rule: ToolRule | null,
  usual: ReadonlySet<string>,
): AgentTool | undefined {
  if (rule) return available.find((tool) => tool.integrationId === rule.integration_id && tool.tool === rule.tool);
  return available.find((tool) => usual.has(tool.tool));
}

export async function lookUpOrder(
  tools: AgentTools,
  companyId: string,
  available: readonly AgentTool[],
  reference: string,
  signal: AbortSignal,
  rule: ToolRule | null = null,
): Promise<ToolCallDone | null> {
  const tool = ruleTool(available, rule, ORDER_TOOLS);
  if (!tool) return null;
  const input = rule?.input_key ? { [rule.input_key]: reference } : orderInput(tool, reference);
  return callTool(tools, companyId, tool, input, signal);
}

/**
 * The input of an order look-up by the name its schema gives the order's number: a connector's
 * `order_number`, or an MCP server's own (`order`, `order_id`, `number` …).
 */
export function orderInput(tool: AgentTool, reference: string): Record<string, unknown> {
  const schema = tool.inputSchema as { properties?: Record<string, unknown>; required?: string[] };
  const keys = Object.keys(schema.properties ?? {});
  const key =
    keys.find((name) => /order/i.test(name)) ?? keys.find((name) => /number|id$|ref/i.test(name)) ?? 'order_number';
  return { [key]: reference };
}

/** Whether an order lookup found an order (an empty `orders` list is a miss). */
export function foundOrder(done: ToolCallDone): boolean {
  const orders = (done.data as { orders?: unknown } | null)?.orders;
  return done.ok && !(Array.isArray(orders) && orders.length === 0);
}

/** The escalation's actions: a ticket, a team message, an e-mail to the contact (each if the agent has one). */
export async function escalate(
  tools: AgentTools,
  companyId: string,
  available: readonly AgentTool[],
  values: { subject: string; text: string; to: string | null },
  signal: AbortSignal,
  ticketRule: ToolRule | null = null,
): Promise<{ ticket: ToolCallDone | null; others: ToolCallDone[] }> {
  const ticketTool = ruleTool(available, ticketRule, TICKET_TOOLS);
  const teamTool = available.find((tool) => tool.notification === 'slack_message');
  const mailTool = values.to ? available.find((tool) => tool.notification === 'email_sent') : undefined;
  const run = (tool: AgentTool | undefined) => {
    const input = tool ? fillInput(tool, values) : null;
    return tool && input ? callTool(tools, companyId, tool, input, signal) : Promise.resolve(null);
  };
  const [ticket, team, mail] = await Promise.all([run(ticketTool), run(teamTool), run(mailTool)]);
  return { ticket, others: [team, mail].filter((done): done is ToolCallDone => done !== null) };
}
