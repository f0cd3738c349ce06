/**
 * Events of conversations (DESIGN §13): hand-off status changes, messages written during a
 * hand-off (the customer's and a person's) and a reply's delivery outcome. Writers `stage` an
 * event inside the transaction that writes it (a NOTIFY on `switchboard_conversation_events`,
 * sent by PostgreSQL at commit) and `publish` it after the commit to this instance's subscribers
 * at once; other instances hear the NOTIFY (`heard`, wired by the container to the LISTEN
 * connection) and publish it to theirs, reading a message's row when they have a subscriber.
 * Subscribers: the chat family's conversation events stream, the inbox's stream, the widget's.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { DeliveryStatus } from './chat.tables.js';

export const CONVERSATION_EVENTS_CHANNEL = 'switchboard_conversation_events';

/** The inbox's state of a conversation: who answers it, or closed. */
export type InboxStatus = 'bot' | 'handoff' | 'assigned' | 'closed';

export interface EventMessage {
  id: string;
  role: 'user' | 'assistant' | 'human';
  content: string;
  author_id: string | null;
  delivery_status: DeliveryStatus | null;
  delivery_error: string | null;
  created_at: string;
}

interface EventBase {
  /** Unique per event (the SSE `id:`). */
  id: string;
  company_id: string;
  conversation_id: string;
}

export type ConversationEvent =
  | (EventBase & {
      type: 'handoff';
      status: InboxStatus;
      reason: string | null;
      assignee_id: string | null;
      /** The person who moved it (null: the agent or the customer). */
      actor_id: string | null;
    })
  | (EventBase & { type: 'message'; message: EventMessage })
  | (EventBase & {
      type: 'delivery';
      message_id: string;
      delivery_status: DeliveryStatus;
      delivery_error: string | null;
    })
  /** The LISTEN connection was lost or made again: events may have been missed (re-read). */
  | { type: 'resync'; id: string; company_id: string; conversation_id: null };

export type ConversationEventInput =
  | Omit<Extract<ConversationEvent, { type: 'handoff' }>, 'id'>
  | Omit<Extract<ConversationEvent, { type: 'message' }>, 'id'>
  | Omit<Extract<ConversationEvent, { type: 'delivery' }>, 'id'>;

export interface EventFilter {
  companyId: string;
  /** One conversation's events; null: every conversation of the company. */
  conversationId: string | null;
}

/** What crosses instances: ids and short fields (NOTIFY payloads stay far below 8,000 bytes). */
interface Wire {
  o: string;
  e: ConversationEvent;
}

const MAX_WIRE_REASON = 300;

export function createConversationEvents(deps: { db: Db; log: { warn(obj: object, msg: string): void } }) {
  /** This instance: its own NOTIFYs are published locally at commit, not again when heard. */
  const origin = randomUUID();
  const subscribers = new Map<
    string,
    Set<{ conversationId: string | null; handler: (e: ConversationEvent) => void }>
  >();

  function publishOne(event: ConversationEvent) {
    const set = subscribers.get(event.company_id);
    if (!set) return;
    for (const subscriber of set) {
      if (event.conversation_id !== null && subscriber.conversationId !== null) {
        if (subscriber.conversationId !== event.conversation_id) continue;
      }
      try {
        subscriber.handler(event);
      } catch (error) {
        deps.log.warn({ err: error }, 'conversation event subscriber failed');
      }
    }
  }

  /** The event as sent to other instances: a message's content stays in the database. */
  function wire(event: ConversationEvent): string {
    const e =
      event.type === 'message'
        ? { ...event, message: { ...event.message, content: '' } }
        : event.type === 'handoff' && event.reason && event.reason.length > MAX_WIRE_REASON
          ? { ...event, reason: event.reason.slice(0, MAX_WIRE_REASON) }
          : event;
    const payload: Wire = { o: origin, e };
    return JSON.stringify(payload);
  }

  async function loadMessage(event: Extract<ConversationEvent, { type: 'message' }>) {
    const row = await deps.db
      .selectFrom('conversation_messages')
      .select('content')
      .where('company_id', '=', event.company_id)
      .where('id', '=', event.message.id)
      .executeTakeFirst();
    if (!row) return null;
    return { ...event, message: { ...event.message, content: row.content } };
  }

  return {
    /** Makes an event (its id) from what a writer knows. */
    make(input: ConversationEventInput): ConversationEvent {
      return { id: randomUUID(), ...input } as ConversationEvent;
    },

    /** Inside the writing transaction: other instances hear the event when it commits. */
    async stage(executor: Executor, events: readonly ConversationEvent[]): Promise<void> {
      if (!events.length) return;
      await sql`select pg_notify(${CONVERSATION_EVENTS_CHANNEL}, p) from unnest(${events.map(wire)}::text[]) as p`.execute(
        executor,
      );
    },

    /** After the commit: this instance's subscribers get the events at once. */
    publish(events: readonly ConversationEvent[]): void {
      for (const event of events) publishOne(event);
    },

    /** Events of a company (or of one of its conversations) until the returned function is called. */
    subscribe(filter: EventFilter, handler: (event: ConversationEvent) => void): () => void {
      const subscriber = { conversationId: filter.conversationId, handler };
      let set = subscribers.get(filter.companyId);
      if (!set) subscribers.set(filter.companyId, (set = new Set()));
      set.add(subscriber);
      return () => {
        set.delete(subscriber);
        if (set.size === 0 && subscribers.get(filter.companyId) === set) subscribers.delete(filter.companyId);
      };
    },

    /** The LISTEN connection's handler: another instance's event, or (no payload) a reconnect. */
    heard(payload?: string): void {
      if (payload === undefined) {
        for (const companyId of subscribers.keys())
          publishOne({ type: 'resync', id: randomUUID(), company_id: companyId, conversation_id: null });
        return;
      }
      let parsed: Wire;
      try {
        parsed = JSON.parse(payload) as Wire;
      } catch {
        return;
      }
      if (parsed.o === origin || !parsed.e || !subscribers.has(parsed.e.company_id)) return;
      const event = parsed.e;
      if (event.type !== 'message') return publishOne(event);
      loadMessage(event).then(
        (loaded) => loaded && publishOne(loaded),
        (error: unknown) => deps.log.warn({ err: error }, 'could not read a conversation event message'),
      );
    },

    /** Subscribers kept (for tests and metrics). */
    get subscriberCount(): number {
      let count = 0;
      for (const set of subscribers.values()) count += set.size;
      return count;
    },
  };
}

export type ConversationEvents = ReturnType<typeof createConversationEvents>;
