/**
 * A live stream of conversation events over server-sent events: the chat family's
 * `GET /conversations/{id}/events` (one conversation) and the inbox's
 * `GET /api/public/conversations/events` (a company's). The subscription starts before the
 * snapshot is read, so nothing written in between is lost; events that arrive meanwhile follow it.
 */
import type { FastifyReply } from 'fastify';
import { onHeartbeat, startEventStream } from '../../http/sse.js';
import type { ConversationEvent, ConversationEvents, EventFilter } from './chat.conversation-events.js';

export interface ConversationStreamOptions {
  heartbeatMs: number;
  retryMs: number;
  /**
   * What a reader outside the company sees of an event (the widget's visitor: no people's ids);
   * null leaves the event out. Default: the event without its company.
   */
  view?: (event: ConversationEvent) => Record<string, unknown> | null;
}

/** The event as clients read it (the company is the caller's own). */
function toData(event: ConversationEvent) {
  const { company_id: _company, ...data } = event;
  return data;
}

export async function streamConversationEvents(
  reply: FastifyReply,
  events: ConversationEvents,
  filter: EventFilter,
  snapshot: () => Promise<ConversationEvent[]>,
  options: ConversationStreamOptions,
): Promise<void> {
  const held: ConversationEvent[] = [];
  let live = false;
  let raw: ReturnType<typeof startEventStream> | null = null;
  let retry = options.retryMs > 0 ? `retry: ${options.retryMs}\n` : '';
  const write = (frame: string) => {
    if (!raw || raw.destroyed || raw.writableEnded) return;
    raw.write(frame);
    raw.socket?.uncork();
  };
  const view = options.view ?? toData;
  const send = (event: ConversationEvent) => {
    const data = view(event);
    if (data === null) return;
    write(`${retry}id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`);
    retry = '';
  };
  const unsubscribe = events.subscribe(filter, (event) => (live ? send(event) : held.push(event)));
  let first: ConversationEvent[];
  try {
    first = await snapshot();
  } catch (error) {
    unsubscribe();
    throw error;
  }
  raw = startEventStream(reply);
  const stopHeartbeat = onHeartbeat(options.heartbeatMs, () => write(': heartbeat\n\n'));
  raw.on('close', () => {
    stopHeartbeat();
    unsubscribe();
  });
  for (const event of first) send(event);
  live = true;
  for (const event of held.splice(0)) send(event);
  if (first.length === 0) write(': open\n\n');
}
