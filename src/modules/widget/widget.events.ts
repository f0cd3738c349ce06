/**
 * What the widget's visitor sees of its conversation's events (DESIGN §13): the hand-off status
 * and the messages written during a hand-off (a person's replies, the visitor's own), without
 * anything about the company's people — no `author_id`, `assignee_id`, `actor_id`, no hand-off
 * reason (the team's words), no delivery outcomes. A person shows as "a person", never by id.
 */
import type { ConversationEvent } from '../chat/index.js';

export function visitorView(event: ConversationEvent): Record<string, unknown> | null {
  switch (event.type) {
    case 'handoff':
      return { id: event.id, type: event.type, conversation_id: event.conversation_id, status: event.status };
    case 'message': {
      const { message } = event;
      if (message.role === 'assistant') return null;
      return {
        id: event.id,
        type: event.type,
        conversation_id: event.conversation_id,
        message: { id: message.id, role: message.role, content: message.content, created_at: message.created_at },
      };
    }
    case 'resync':
      return { id: event.id, type: event.type };
    default:
      return null;
  }
}
