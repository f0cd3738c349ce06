/**
 * A turn as OpenAI streams a completion: `data: <chat.completion.chunk>` lines — the first with
 * `delta.role`, then content deltas; the platform's tool activity and citations as chunks with an
 * empty delta and a `switchboard` field; a chunk with `finish_reason`; with
 * `stream_options.include_usage` a chunk with empty `choices` and `usage`; then `data: [DONE]`.
 * A failure after the stream has started is `data: {"error": {...}}` (what OpenAI's SDKs raise),
 * and the stream ends without `[DONE]`. Refusals come before the stream, as HTTP errors.
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import { AppError, renderError } from '../../http/errors.js';
import type { ChatModule, TurnResult } from '../chat/index.js';
import { extensionOf, usageOf, type PreparedCompletion } from './openai-api.service.js';
import { onHeartbeat, startEventStream } from '../../http/sse.js';

export interface CompletionStreamOptions {
  heartbeatMs: number;
}

/** Aborts when the client goes away before the reply is finished. */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

export async function streamCompletion(
  turns: Pick<ChatModule['turns'], 'run'>,
  reply: FastifyReply,
  prepared: PreparedCompletion,
  options: CompletionStreamOptions,
  log: FastifyBaseLogger,
): Promise<void> {
  const raw = startEventStream(reply);
  const write = (frame: string) => {
    if (raw.destroyed || raw.writableEnded) return;
    raw.write(frame);
    // Each event leaves as it is written (see chat.sse.ts: Node corks until the next tick).
    raw.socket?.uncork();
  };
  const base = { id: prepared.id, object: 'chat.completion.chunk', created: prepared.created, model: prepared.model };
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    write(`data: ${JSON.stringify({ ...base, system_fingerprint: null, choices, ...extra })}\n\n`);
  const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finish,
  });
  const stopHeartbeat = onHeartbeat(options.heartbeatMs, () => write(': heartbeat\n\n'));
  const signal = clientGone(reply);
  const conversation_id = prepared.turn.conversation.id;
  chunk([choice({ role: 'assistant', content: '' })], { switchboard: { conversation_id } });
  let result: TurnResult | null = null;
  try {
    result = await turns.run(prepared.turn, signal, (event) => {
      if (event.type === 'agent_text_chunk') return chunk([choice({ content: event.content })]);
      const extension = extensionOf(event);
      if (extension) chunk([choice({})], { switchboard: extension });
    });
    chunk([choice({}, 'stop')], {
      switchboard: { conversation_id, message_id: result.message_id, was_resolved: result.was_resolved },
    });
    if (prepared.includeUsage) chunk([], { usage: usageOf(prepared, result) });
    write('data: [DONE]\n\n');
  } catch (error) {
    if (!(error instanceof AppError)) log.error({ err: error }, 'chat completion stream failed');
    const failure =
      error instanceof AppError
        ? error
        : { statusCode: 500, code: 'InternalServerError', message: 'Internal server error' };
    write(`data: ${JSON.stringify(renderError('openai', failure, '/v1/chat/completions'))}\n\n`);
  } finally {
    stopHeartbeat();
    raw.end();
  }
}
