/**
 * The hand-off state of a conversation as the inbox and the events show it (DESIGN §13):
 *
 * ```
 *   bot ──escalation / asks for a person / handoff_to_human──▶ handoff ──assign / reply──▶ assigned
 *    │ ▲                                                          │  ▲                     │
 *    │ └──────────────────────── release ─────────────────────────┴──┼─────────────────────┘
 *    └──────────────────────── takeover (a person) ──────────────────┴───────────▶ assigned
 *   any open state ──close──▶ closed (no way back: acting on it is a 409)
 * ```
 */
import { randomUUID } from 'node:crypto';
import type { ConversationEvent, InboxStatus } from './chat.conversation-events.js';
import type { Handler } from './chat.tables.js';

export function inboxStatus(row: { status: 'open' | 'closed'; handler: Handler }): InboxStatus {
  return row.status === 'closed' ? 'closed' : row.handler;
}

/** The current status of a conversation as a `handoff` event (the first event of a stream). */
export function statusEvent(row: {
  id: string;
  company_id: string;
  status: 'open' | 'closed';
  handler: Handler;
  handoff_reason: string | null;
  assignee_id: string | null;
}): ConversationEvent {
  return {
    type: 'handoff',
    id: randomUUID(),
    company_id: row.company_id,
    conversation_id: row.id,
    status: inboxStatus(row),
    reason: row.handoff_reason,
    assignee_id: row.assignee_id,
    actor_id: null,
  };
}
