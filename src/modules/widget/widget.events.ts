/**
 * `GET /widget/v1/{key}/conversations/{id}/events`: what happens in a visitor's conversation
 * outside its own turns — a person's replies and the hand-off status (DESIGN §13) — as
 * server-sent events: `status` first (the conversation's state now), then each event the
 * conversation's event source publishes, `: heartbeat` comments in between.
 *
 * The source is the `ConversationEvents` port. Until the hand-off inbox publishes a person's
 * replies, the container gives `conversationStatusOnly`: the status from the conversation row
 * and no further events.
 */
import type { FastifyReply } from 'fastify';
import { startEventStream } from '../../http/sse.js';

/** One event of a conversation, as the widget receives it (`event: <type>`, `data: <this>`). */
export interface ConversationEvent {
  type: string;
  [field: string]: unknown;
}

export interface ConversationEvents {
  /** The conversation's state now: `status` (bot, handoff, assigned, closed …). */
  current(companyId: string, conversationId: string): Promise<ConversationEvent>;
  /** Calls `listener` with each later event of the conversation until the returned function is called. */
  subscribe(companyId: string, conversationId: string, listener: (event: ConversationEvent) => void): () => void;
}

/** The source while no hand-off publishes events: the conversation's open/closed state only. */
export function conversationStatusOnly(
  status: (companyId: string, conversationId: string) => Promise<string>,
): ConversationEvents {
  return {
    async current(companyId, conversationId) {
      const state = await status(companyId, conversationId);
      return { type: 'status', status: state === 'closed' ? 'closed' : 'bot', handoff: false };
    },
    subscribe: () => () => undefined,
  };
}

/** Streams the conversation's events to the visitor until it leaves. */
export async function streamConversationEvents(
  reply: FastifyReply,
  source: ConversationEvents,
  companyId: string,
  conversationId: string,
  heartbeatMs: number,
): Promise<void> {
  const first = await source.current(companyId, conversationId);
  const raw = startEventStream(reply);
  let seq = 0;
  const write = (event: ConversationEvent) => {
    if (raw.destroyed) return;
    raw.write(`id: ${conversationId}:${seq++}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    raw.socket?.uncork();
  };
  write(first);
  const unsubscribe = source.subscribe(companyId, conversationId, write);
  const heartbeat = setInterval(() => !raw.destroyed && raw.write(': heartbeat\n\n'), heartbeatMs);
  heartbeat.unref();
  raw.on('close', () => {
    clearInterval(heartbeat);
    unsubscribe();
  });
}
