/**
 * OpenAI's Responses API over the chat family's turn: `input` (text, or messages whose last user
 * message is the query) becomes a chat form, `previous_response_id` continues that response's
 * conversation (a response's id is `resp_<its stored answer's id>`), and the turn's result becomes
 * a `response` object — whole, or streamed as the Responses event types (`response.created` …
 * `response.output_text.delta` … `response.completed`).
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { ChatCaller } from '../../http/caller.js';
import { AppError, AppErrors, renderError, truncateQuoted } from '../../http/errors.js';
import { startEventStream } from '../../http/sse.js';
import type { Clock } from '../../lib/clock.js';
import type { PreparedTurn, TurnResult } from '../chat/index.js';
import * as repo from './openai-api.repo.js';
import type { ResponseBody, ResponseObject, ResponseUsage } from './openai-api.responses.schemas.js';
import type { Switchboard } from './openai-api.schemas.js';
import {
  estimateTokens,
  extensionOf,
  splitTexts,
  textOf,
  type OpenAiServiceDeps,
  type TextMessage,
  type TurnRequest,
} from './openai-api.service.js';
import { clientGone } from './openai-api.stream.js';

const RESPONSE_ID = /^resp_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** A response turn ready to run, with what its response object needs to say. */
export interface PreparedResponse {
  turn: PreparedTurn;
  body: ResponseBody;
  id: string;
  messageId: string;
  createdAt: number;
  promptChars: number;
}

export interface ResponsesDeps extends Pick<OpenAiServiceDeps, 'db' | 'turns'> {
  clock: Clock;
  prepareTurn(caller: ChatCaller, request: TurnRequest): Promise<PreparedTurn>;
}

/** `input` as messages: text is one user message; items must be messages with text parts. */
export function inputMessages(input: ResponseBody['input']): TextMessage[] {
  if (typeof input === 'string') return [{ role: 'user', text: input }];
  return input.map((item, index) => {
    if (item.type !== undefined && item.type !== 'message') {
      throw AppErrors.validation(
        `Invalid field 'input[${index}].type': only message items are supported, not '${truncateQuoted(item.type, 40)}' (client-side tools are not run; the agent's own integrations are)`,
      );
    }
    if (!item.role) throw AppErrors.validation(`Invalid field 'input[${index}].role': is required`);
    return {
      role: item.role,
      text: textOf(item.content, `input[${index}].content`, ['input_text', 'output_text', 'text']),
    };
  });
}

export function createResponses(deps: ResponsesDeps) {
  /** The conversation `previous_response_id` continues; unknown or another company's → 404. */
  async function previousConversation(caller: ChatCaller, previous: string): Promise<string> {
    const match = RESPONSE_ID.exec(previous);
    if (!match) {
      throw AppErrors.validation("Invalid field 'previous_response_id': must be a response id (resp_<uuid>)");
    }
    const conversation = await repo.conversationOfAnswer(deps.db, caller.companyId, match[1]!.toLowerCase());
    if (!conversation) {
      throw new AppError(
        404,
        `Previous response with id '${truncateQuoted(previous)}' not found.`,
        'previous_response_not_found',
      );
    }
    return conversation;
  }

  return {
    /** Checks the request and prepares the chat turn; nothing is written yet. */
    async prepare(caller: ChatCaller, body: ResponseBody): Promise<PreparedResponse> {
      if (body.background) throw AppErrors.validation("Invalid field 'background': only false is supported");
      const messages = inputMessages(body.input);
      const { query, history, promptChars } = splitTexts(messages, 'input');
      const conversationId = body.previous_response_id
        ? await previousConversation(caller, body.previous_response_id)
        : undefined;
      const turn = await deps.prepareTurn(caller, {
        model: body.model,
        query,
        // A continued conversation's stored history is used; the request's earlier messages are not.
        history: conversationId ? [] : history,
        ...(conversationId ? { conversationId } : {}),
        ...(body.user ? { user: body.user } : {}),
        temperature: body.temperature,
        maxTokens: body.max_output_tokens,
      });
      return {
        turn,
        body,
        id: `resp_${turn.id}`,
        messageId: `msg_${turn.id}`,
        createdAt: Math.floor(deps.clock.now().getTime() / 1000),
        promptChars: promptChars + (body.instructions?.length ?? 0),
      };
    },

    /** Runs the turn and answers the whole `response`. */
    async create(prepared: PreparedResponse, signal: AbortSignal): Promise<ResponseObject> {
      const extension: Required<Pick<Switchboard, 'citations' | 'tools'>> = { citations: [], tools: [] };
      const result = await deps.turns.run(prepared.turn, signal, (event) => {
        const found = extensionOf(event);
        if (found?.citations) extension.citations = found.citations;
        if (found?.tool) extension.tools.push(found.tool);
      });
      return responseOf(prepared, 'completed', result.agent_response_text, result, {
        conversation_id: result.conversation_id,
        message_id: result.message_id,
        was_resolved: result.was_resolved,
        ...extension,
      });
    },

    /** Runs the turn as the Responses API streams it. */
    stream(prepared: PreparedResponse, reply: FastifyReply, heartbeatMs: number, log: FastifyBaseLogger) {
      return streamResponse(deps.turns, prepared, reply, heartbeatMs, log);
    },
  };
}

export type Responses = ReturnType<typeof createResponses>;

function usageOf(prepared: PreparedResponse, result: TurnResult): ResponseUsage {
  const input = result.usage?.inputTokens ?? estimateTokens(prepared.promptChars);
  const output = result.usage?.outputTokens ?? estimateTokens(result.agent_response_text.length);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

/** The `response` object in a state: in progress (no output yet) or completed with the answer. */
export function responseOf(
  prepared: PreparedResponse,
  status: 'in_progress' | 'completed',
  text: string,
  result: TurnResult | null,
  switchboard: Switchboard,
): ResponseObject {
  const { body } = prepared;
  const output =
    status === 'completed'
      ? [
          {
            type: 'message' as const,
            id: prepared.messageId,
            status: 'completed',
            role: 'assistant' as const,
            content: [{ type: 'output_text' as const, text, annotations: [] }],
          },
        ]
      : [];
  return {
    id: prepared.id,
    object: 'response',
    created_at: prepared.createdAt,
    status,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output,
    output_text: status === 'completed' ? text : '',
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? null,
    text: { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: result ? usageOf(prepared, result) : null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
    switchboard,
  };
}

/**
 * The Responses stream: `event: <type>` + `data: <event>` frames with a `sequence_number` —
 * created, in_progress, output_item.added, content_part.added, output_text.delta…,
 * output_text.done, content_part.done, output_item.done, completed. The platform's tool activity
 * and citations travel as `response.switchboard.*` events (clients ignore unknown types). A
 * failure after the stream began is an `error` event then `response.failed`.
 */
async function streamResponse(
  turns: ResponsesDeps['turns'],
  prepared: PreparedResponse,
  reply: FastifyReply,
  heartbeatMs: number,
  log: FastifyBaseLogger,
): Promise<void> {
  const raw = startEventStream(reply);
  let sequence = 0;
  const send = (type: string, fields: Record<string, unknown>) => {
    if (raw.destroyed || raw.writableEnded) return;
    raw.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`);
    raw.socket?.uncork();
  };
  const heartbeat = setInterval(() => {
    if (!raw.destroyed && !raw.writableEnded) raw.write(': heartbeat\n\n');
  }, heartbeatMs);
  heartbeat.unref();
  const signal = clientGone(reply);
  const conversation_id = prepared.turn.conversation.id;
  const item = { item_id: prepared.messageId, output_index: 0, content_index: 0 };
  const inProgress = responseOf(prepared, 'in_progress', '', null, { conversation_id });
  send('response.created', { response: inProgress });
  send('response.in_progress', { response: inProgress });
  send('response.output_item.added', {
    output_index: 0,
    item: { type: 'message', id: prepared.messageId, status: 'in_progress', role: 'assistant', content: [] },
  });
  send('response.content_part.added', { ...item, part: { type: 'output_text', text: '', annotations: [] } });
  const extension: Required<Pick<Switchboard, 'citations' | 'tools'>> = { citations: [], tools: [] };
  try {
    const result = await turns.run(prepared.turn, signal, (event) => {
      if (event.type === 'agent_text_chunk')
        return send('response.output_text.delta', { ...item, delta: event.content, logprobs: [] });
      const found = extensionOf(event);
      if (found?.citations) {
        extension.citations = found.citations;
        send('response.switchboard.citations', { citations: found.citations });
      }
      if (found?.tool) {
        extension.tools.push(found.tool);
        send('response.switchboard.tool', { tool: found.tool });
      }
    });
    const text = result.agent_response_text;
    const part = { type: 'output_text', text, annotations: [] };
    send('response.output_text.done', { ...item, text, logprobs: [] });
    send('response.content_part.done', { ...item, part });
    send('response.output_item.done', {
      output_index: 0,
      item: { type: 'message', id: prepared.messageId, status: 'completed', role: 'assistant', content: [part] },
    });
    send('response.completed', {
      response: responseOf(prepared, 'completed', text, result, {
        conversation_id: result.conversation_id,
        message_id: result.message_id,
        was_resolved: result.was_resolved,
        ...extension,
      }),
    });
  } catch (error) {
    if (!(error instanceof AppError)) log.error({ err: error }, 'response stream failed');
    const failure =
      error instanceof AppError
        ? error
        : { statusCode: 500, code: 'InternalServerError', message: 'Internal server error' };
    const rendered = renderError('openai', failure, '/v1/responses') as { error: { message: string; code: unknown } };
    send('error', { code: rendered.error.code ?? 'server_error', message: rendered.error.message, param: null });
    send('response.failed', {
      response: {
        ...inProgress,
        status: 'failed',
        error: { code: rendered.error.code ?? 'server_error', message: rendered.error.message },
      },
    });
  } finally {
    clearInterval(heartbeat);
    raw.end();
  }
}
