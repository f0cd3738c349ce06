/**
 * Resuming a streamed turn from a `Last-Event-ID`: the turn kept in process (its events, then the
 * live ones), else its stored answer (the rest of the text from the client's mark, citations if
 * not yet received, `end`). Only turns of the caller's company (and bound agent) are found.
 */
import type { Db } from '../../db/database.js';
import type { ChatCaller } from '../../http/caller.js';
import { AppErrors, ERROR_NAMES } from '../../http/errors.js';
import * as repo from './chat.repo.js';
import type { StreamEvent } from './chat.schemas.js';
import { eventId, parseEventId, type EventCursor, type LiveTurn, type StreamHub } from './chat.stream-hub.js';

export interface IdentifiedEvent {
  event: StreamEvent;
  id: string;
}

/** The events a client at `cursor` has not received, rebuilt from the turn's stored answer. */
export function storedEvents(answer: repo.AnswerRow, cursor: EventCursor): IdentifiedEvent[] {
  if (cursor.mark === 'e') return [];
  const conversation_id = answer.conversation_id;
  const events: IdentifiedEvent[] = [];
  let seq = cursor.seq;
  const add = (event: StreamEvent, mark: EventCursor['mark']) =>
    events.push({ event, id: eventId({ turnId: cursor.turnId, seq: ++seq, mark }) });
  // Live ids count answer characters without the leading whitespace the stored answer may lack.
  const text = answer.content.trimStart();
  const received = typeof cursor.mark === 'number' ? cursor.mark : null;
  if (received !== null && received < text.length) {
    add({ type: 'agent_text_chunk', content: text.slice(received), conversation_id }, text.length);
  }
  const citations = answer.citations;
  if (received !== null && answer.finish_reason === 'stop' && citations.length) {
    const content = JSON.stringify({ kind: 'citations', citations });
    add({ type: 'chunk', content, conversation_id, kind: 'citations', citations }, 'c');
  }
  if (answer.finish_reason === 'error') {
    if (cursor.mark !== 'x') {
      const error = { error: ERROR_NAMES[500], statusCode: 500 };
      add({ type: 'error', content: 'The reply failed before it was complete', conversation_id, ...error }, 'x');
    }
    add({ type: 'end', content: '', conversation_id }, 'e');
    return events;
  }
  add(
    {
      type: 'end',
      content: '',
      conversation_id,
      message_id: answer.id,
      was_resolved: answer.was_resolved ?? false,
      response_time_ms: answer.response_time_ms ?? 0,
    },
    'e',
  );
  return events;
}

export function createResume(deps: { db: Db; hub: StreamHub }) {
  return {
    /** The cursor of a `Last-Event-ID` header; 400 when it is not an id this service sent. */
    cursor(header: string): EventCursor {
      const cursor = parseEventId(header);
      if (!cursor) {
        throw AppErrors.validation(
          `Invalid header 'Last-Event-ID': "${header.slice(0, 120)}" is not an event id of this stream (<turn id>:<seq>:<mark>)`,
        );
      }
      return cursor;
    },

    /** The turn kept in process, if this instance runs or ran it recently. */
    live(caller: ChatCaller, cursor: EventCursor): LiveTurn | undefined {
      return deps.hub.find(caller.companyId, caller.agentId, cursor.turnId);
    },

    /** The events after `cursor` from the stored answer; 404 when the turn is unknown here. */
    async stored(caller: ChatCaller, cursor: EventCursor): Promise<IdentifiedEvent[]> {
      const answer = await repo.findAnswer(deps.db, caller.companyId, cursor.turnId, caller.agentId);
      if (!answer) throw AppErrors.notFound('Turn', cursor.turnId);
      return storedEvents(answer, cursor);
    },
  };
}

export type Resume = ReturnType<typeof createResume>;
