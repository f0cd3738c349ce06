/**
 * The two ways `POST /agent/stream` answers: a new turn streamed through the stream hub, or —
 * with `Last-Event-ID` — the rest of a turn already started (never a new one): the kept events
 * after that id then the live ones until `end`, or the stored answer's remaining events, or 204
 * when the client already has the end, or 404 when this company has no such turn.
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { ChatCaller } from '../../http/caller.js';
import { AppError, ERROR_NAMES } from '../../http/errors.js';
import type { ChatModule } from './index.js';
import type { ChatForm, StreamEvent } from './chat.schemas.js';
import { openEventStream } from './chat.sse.js';

export interface StreamOptions {
  heartbeatMs: number;
  /** The `retry:` field: how long a client waits before reconnecting. */
  retryMs: number;
}

/** Aborts when the client goes away before the reply is finished. */
export function clientSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

/** Runs a new turn; it outlives its client for the resume window, so a reconnect can follow it. */
export async function streamTurn(
  chat: ChatModule,
  reply: FastifyReply,
  caller: ChatCaller,
  form: ChatForm,
  options: StreamOptions,
  log: FastifyBaseLogger,
): Promise<void> {
  const turn = await chat.turns.prepare(caller, form);
  const conversation_id = turn.conversation.id;
  const live = chat.streams.open({ turnId: turn.id, companyId: caller.companyId, agentId: turn.agent.id });
  live.attach(openEventStream(reply, options.heartbeatMs, options.retryMs), -1);
  live.push({ type: 'start', content: '', conversation_id });
  try {
    const result = await chat.turns.run(turn, live.signal, (event) =>
      live.push({ ...event, conversation_id } as StreamEvent),
    );
    live.push({
      type: 'end',
      content: '',
      conversation_id,
      message_id: result.message_id,
      was_resolved: result.was_resolved,
      response_time_ms: result.response_time_ms,
    });
  } catch (error) {
    const status = error instanceof AppError ? error.statusCode : 500;
    if (!(error instanceof AppError)) log.error({ err: error }, 'chat stream failed');
    live.push({
      type: 'error',
      content: error instanceof AppError ? error.message : 'Internal server error',
      conversation_id,
      error: error instanceof AppError ? error.code : ERROR_NAMES[500],
      statusCode: status,
    });
    live.push({ type: 'end', content: '', conversation_id });
  } finally {
    live.end();
  }
}

/** Answers a reconnect from where its `Last-Event-ID` left off, without starting a turn. */
export async function resumeStream(
  chat: ChatModule,
  reply: FastifyReply,
  caller: ChatCaller,
  lastEventId: string,
  options: StreamOptions,
): Promise<void> {
  const cursor = chat.resume.cursor(lastEventId);
  const live = chat.resume.live(caller, cursor);
  if (live && (live.buffered || cursor.seq >= live.lastSeq)) {
    if (live.ended && cursor.seq >= live.lastSeq) return void reply.code(204).send();
    live.attach(openEventStream(reply, options.heartbeatMs, options.retryMs), cursor.seq);
    return;
  }
  if (live) {
    // Its events are no longer kept: the turn runs on while this request waits, then its stored answer.
    live.hold(clientSignal(reply));
    await live.done;
  }
  const events = await chat.resume.stored(caller, cursor);
  if (events.length === 0) return void reply.code(204).send();
  const stream = openEventStream(reply, options.heartbeatMs, options.retryMs);
  for (const { event, id } of events) stream.send(event, id);
  stream.close();
}
