/**
 * How a tool call is told: a `chunk` event in the stream (`kind: "tool"`, `{tool, status,
 * summary}`), and one team notification per call, of the tool's kind (`email_sent`,
 * `slack_message`, `api_call`, `tool_usage`), written in the turn's transaction.
 */
import type { Executor } from '../../db/database.js';
import type { AgentRow } from '../agents/index.js';
import type { AgentNotifier } from './chat.ports.js';
import type { StreamEvent } from './chat.schemas.js';
import type { ToolAction } from './chat.tools.js';

/** The stream event of one call, sent when it ends. */
export function toolChunk(action: ToolAction): Omit<StreamEvent, 'conversation_id'> {
  const body = { kind: 'tool', tool: action.tool, status: action.status, summary: action.summary };
  return { type: 'chunk', content: JSON.stringify(body), ...body };
}

const TITLES: Record<ToolAction['notification'], string> = {
  email_sent: 'sent an e-mail',
  slack_message: 'posted a Slack message',
  api_call: 'called an API',
  tool_usage: 'used a tool',
};

export async function notifyToolCalls(
  notifier: AgentNotifier,
  executor: Executor,
  input: { companyId: string; agent: AgentRow; queryId: string | null; actions: readonly ToolAction[] },
): Promise<void> {
  for (const action of input.actions) {
    const failed = action.status === 'failed';
    const metadata: Record<string, string> = {
      agent_id: input.agent.id,
      ...(input.queryId ? { query_id: input.queryId } : {}),
      action_type: 'tool_call',
      tool_used: action.tool,
      integration_id: action.integration_id,
      status: action.status,
      execution_time: `${action.execution_ms}ms`,
      ...(action.recipient_email ? { recipient_email: action.recipient_email } : {}),
      ...(action.email_subject ? { email_subject: action.email_subject } : {}),
    };
    await notifier.notify(executor, {
      companyId: input.companyId,
      senderId: null,
      notificationType: action.notification,
      category: 'agent',
      priority: failed ? 'high' : 'low',
      title: failed
        ? `${input.agent.title || 'An agent'}: ${action.tool} failed`
        : `${input.agent.title || 'An agent'} ${TITLES[action.notification]}`,
      message: action.summary,
      metadata,
    });
  }
}
