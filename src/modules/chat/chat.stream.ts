/**
 * The two ways `POST /agent/stream` answers: a new turn streamed through the stream hub, or —
 * with `Last-Event-ID` — the rest of a turn already started (never a new one): the kept events
 * after that id then the live ones until `end`, or the stored answer's remaining events, or 204
 * when the client already has the end, or 404 when this company has no such turn.
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { ChatCaller } from '../../http/caller.js';
import { AppError, ERROR_NAMES } from '../../http/errors.js';
import type { ChatModule } from './chat.module.js';
import type { PreparedTurn } from './chat.turn-types.js';
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
  // Returned, not awaited: this function's frame is not held for the whole stream.
  return streamPrepared(chat, reply, turn, options, log);
}

/** What another channel's stream (the web widget's) adds to a turn's events. */
export interface StreamHooks {
  /** Rewrites an event before it is kept and sent (events keep their order; `end` waits for it). */
  rewrite?: (event: StreamEvent) => Promise<StreamEvent>;
  /**
   * Work that must succeed before the turn's `end` (else the turn ends in an error): called once
   * the turn has run (also when it failed), it starts the work unless `rewrite` started it already.
   */
  settled?: () => Promise<unknown>;
}

/** Streams a prepared turn through the stream hub (see `streamTurn`). */
export async function streamPrepared(
  chat: ChatModule,
  reply: FastifyReply,
  turn: PreparedTurn,
  options: StreamOptions,
  log: FastifyBaseLogger,
  hooks: StreamHooks = {},
): Promise<void> {
  const conversation_id = turn.conversation.id;
  const live = chat.streams.open(
    { turnId: turn.id, companyId: turn.caller.companyId, agentId: turn.agent.id },
    turn.abort,
  );
  live.attach(openEventStream(reply, options.heartbeatMs, options.retryMs), -1);
  const { rewrite } = hooks;
  let queued: Promise<void> = Promise.resolve();
  const push = rewrite
    ? (event: StreamEvent) => {
        queued = queued.then(async () => live.push(await rewrite(event).catch(() => event)));
      }
    : (event: StreamEvent) => live.push(event);
  push({ type: 'start', content: '', conversation_id });
  try {
    const result = await chat.turns.run(turn, live.signal, (event) =>
      push({ ...event, conversation_id } as StreamEvent),
    );
    await hooks.settled?.();
    await queued;
    live.push({
      type: 'end',
      content: '',
      conversation_id,
      message_id: result.message_id,
      was_resolved: result.was_resolved,
      response_time_ms: result.response_time_ms,
    });
  } catch (error) {
    await hooks.settled?.().catch(() => undefined);
    await queued;
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
