/**
 * A customer's message while a person has the conversation (DESIGN §13): stored with no agent
 * turn and published to the inbox; the customer's client is told `{handoff: true, status}`
 * (stream: `start`, `chunk {handoff: {status}}`, `end`). Statuses as the customer sees them:
 * `waiting` (no person yet) or `assigned` (a person answers). The hand-off chunk of the turn that
 * starts one is `{handoff: {status: "waiting", reason}}`.
 */
import type { StreamEvent } from './chat.schemas.js';
import type { InboxStatus } from './chat.conversation-events.js';

export type CustomerHandoffStatus = 'waiting' | 'assigned';

export function customerStatus(status: InboxStatus): CustomerHandoffStatus {
  return status === 'assigned' ? 'assigned' : 'waiting';
}

/** The `chunk` event of a hand-off: `{handoff: {status, reason?}}`. */
export function handoffStatusChunk(
  status: CustomerHandoffStatus,
  reason?: string,
): Omit<StreamEvent, 'conversation_id'> {
  const handoff = { status, ...(reason !== undefined ? { reason } : {}) };
  return { type: 'chunk', content: JSON.stringify({ handoff }), kind: 'handoff', handoff };
}
