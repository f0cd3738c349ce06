/**
 * OpenAI's chat-completions protocol over the chat family's turn: the request becomes a chat form
 * (model → agent key, last user message → query, earlier user/assistant messages → history,
 * `metadata.conversation_id` → the conversation to continue), the chat module prepares and runs the
 * turn (knowledge, tools, records, support query, notifications), and its result becomes a
 * `chat.completion`. Refusals of the turn about the model become OpenAI's 404 `model_not_found`.
 */
import type { Db } from '../../db/database.js';
import type { ChatCaller } from '../../http/caller.js';
import { AppError, AppErrors, truncateQuoted } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { ChatModule, PreparedTurn, StreamEvent, TurnResult } from '../chat/index.js';
import * as repo from './openai-api.repo.js';
import type { ChatCompletion, ChatCompletionBody, ModelList, Switchboard, Usage } from './openai-api.schemas.js';

export interface OpenAiServiceDeps {
  db: Db;
  clock: Clock;
  turns: Pick<ChatModule['turns'], 'prepare' | 'run'>;
}

/** A turn ready to run, with what its completion needs to say. */
export interface PreparedCompletion {
  turn: PreparedTurn;
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
  promptChars: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_QUERY = 8000;

export const agentKeyOf = (row: repo.ServableRow) => `agent:${row.agent_id}:${row.channel}:${row.region}`;

/** OpenAI's words for a model the key may not use, whatever the reason (nothing leaks about others). */
export function modelNotFound(model: string): AppError {
  return new AppError(
    404,
    `The model '${truncateQuoted(model)}' does not exist or you do not have access to it (GET /v1/models lists yours)`,
    'model_not_found',
  );
}

/** Tokens estimated from text when the engine counts none: ⌈characters / 4⌉. */
export const estimateTokens = (chars: number) => Math.ceil(chars / 4);

/** A message's content as the field `where` names it: text parts only (`textTypes`). */
export function textOf(
  content: string | null | readonly { type: string }[] | undefined,
  where: string,
  textTypes: readonly string[] = ['text'],
): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .map((part, partIndex) => {
      const at = `${where}[${partIndex}]`;
      if (!textTypes.includes(part.type)) {
        throw AppErrors.validation(
          `Invalid field '${at}.type': only text parts are supported (${textTypes.join(', ')}), not '${truncateQuoted(part.type, 40)}' (images, audio and files are not)`,
        );
      }
      const text = (part as { text?: unknown }).text;
      if (typeof text !== 'string') throw AppErrors.validation(`Invalid field '${at}.text': must be string`);
      return text;
    })
    .join('');
}

/** A message as the turn reads it: its role and its text. */
export interface TextMessage {
  role: 'system' | 'developer' | 'user' | 'assistant';
  text: string;
}

/**
 * The turn's query (the last user message) and the user/assistant history before it; `field`
 * names the list in errors (`messages`, `input`).
 */
export function splitMessages(messages: ChatCompletionBody['messages']) {
  return splitTexts(
    messages.map((message, index) => ({
      role: message.role,
      text: textOf(message.content, `messages[${index}].content`),
    })),
    'messages',
  );
}

export function splitTexts(messages: TextMessage[], field: string) {
  const last = messages.findLastIndex((message) => message.role === 'user');
  if (last < 0) throw AppErrors.validation(`Invalid field '${field}': must contain a user message`);
  if (last < messages.length - 1)
    throw AppErrors.validation(`Invalid field '${field}[${last + 1}]': the last message must be the user's`);
  const query = messages[last]!.text.trim();
  if (!query) throw AppErrors.validation(`Invalid field '${field}[${last}].content': must not be empty`);
  if (query.length > MAX_QUERY)
    throw AppErrors.validation(`Invalid field '${field}[${last}].content': must be at most ${MAX_QUERY} characters`);
  // The agent's instructions are the system prompt: the client's system/developer messages are not sent.
  const history = messages
    .slice(0, last)
    .flatMap((message) =>
      (message.role === 'user' || message.role === 'assistant') && message.text.trim()
        ? [{ role: message.role, content: message.text }]
        : [],
    );
  return { query, history, promptChars: messages.reduce((sum, message) => sum + message.text.length, 0) };
}

/** What a turn of `/v1` is asked: the model, the query and history, and the options it passes on. */
export interface TurnRequest {
  model: string;
  query: string;
  history: { role: 'user' | 'assistant'; content: string }[];
  conversationId?: string;
  user?: string;
  temperature?: number | null;
  maxTokens?: number | null;
}

export function createOpenAiService(deps: OpenAiServiceDeps) {
  /** The agent key `model` names: a key as given, or a bound token's agent id (its first active deployment). */
  async function agentKeyFor(caller: ChatCaller, model: string): Promise<string> {
    if (model.startsWith('agent:')) return model;
    if (UUID.test(model) && caller.agentId === model.toLowerCase()) {
      const [first] = await repo.listServable(deps.db, caller.companyId, caller.agentId);
      if (first) return agentKeyOf(first);
    }
    throw modelNotFound(model);
  }

  /** The chat turn a `/v1` request asks for, prepared (nothing written yet); refusals in OpenAI's terms. */
  async function prepareTurn(caller: ChatCaller, request: TurnRequest): Promise<PreparedTurn> {
    const agentKey = await agentKeyFor(caller, request.model);
    try {
      return await deps.turns.prepare(
        caller,
        {
          agent_key: agentKey,
          query: request.query,
          messages: request.history,
          ...(request.conversationId ? { conversation_id: request.conversationId } : {}),
          ...(request.user ? { user: request.user } : {}),
        },
        {
          ...(typeof request.temperature === 'number' ? { temperature: request.temperature } : {}),
          ...(request.maxTokens ? { maxTokens: request.maxTokens } : {}),
        },
      );
    } catch (error) {
      throw openAiRefusal(error, request.model);
    }
  }

  return {
    turns: deps.turns,

    /** The agent keys the token may use (and a bound token's agent id), as OpenAI model objects. */
    async models(caller: ChatCaller): Promise<ModelList> {
      const rows = await repo.listServable(deps.db, caller.companyId, caller.agentId);
      const model = (id: string, created: Date) => ({
        id,
        object: 'model' as const,
        created: Math.floor(created.getTime() / 1000),
        owned_by: caller.companyId,
      });
      const data = rows.map((row) => model(agentKeyOf(row), row.created_at));
      if (caller.agentId && rows[0]) data.unshift(model(caller.agentId, rows[0].created_at));
      return { object: 'list', data };
    },

    /** Checks the request and prepares the chat turn; nothing is written yet. */
    async prepare(caller: ChatCaller, body: ChatCompletionBody): Promise<PreparedCompletion> {
      const { query, history, promptChars } = splitMessages(body.messages);
      const conversationId = body.metadata?.conversation_id;
      if (conversationId !== undefined && !UUID.test(conversationId))
        throw AppErrors.validation("Invalid field 'metadata.conversation_id': must be a conversation id (UUID)");
      const turn = await prepareTurn(caller, {
        model: body.model,
        query,
        history,
        ...(conversationId ? { conversationId } : {}),
        ...(body.user ? { user: body.user } : {}),
        temperature: body.temperature,
        maxTokens: body.max_completion_tokens ?? body.max_tokens,
      });
      return {
        turn,
        id: `chatcmpl-${turn.id}`,
        created: Math.floor(deps.clock.now().getTime() / 1000),
        model: body.model,
        includeUsage: body.stream_options?.include_usage === true,
        promptChars,
      };
    },

    prepareTurn,

    /** Runs the turn and answers the whole reply as a `chat.completion`, with its citations and tool activity. */
    async complete(prepared: PreparedCompletion, signal: AbortSignal): Promise<ChatCompletion> {
      const extension: Required<Pick<Switchboard, 'citations' | 'tools'>> = { citations: [], tools: [] };
      const result = await deps.turns.run(prepared.turn, signal, (event) => {
        const found = extensionOf(event);
        if (found?.citations) extension.citations = found.citations;
        if (found?.tool) extension.tools.push(found.tool);
      });
      return completionOf(prepared, result, extension);
    },
  };
}

/** A turn's result as a `chat.completion`. */
export function completionOf(prepared: PreparedCompletion, result: TurnResult, extension: Switchboard): ChatCompletion {
  return {
    id: prepared.id,
    object: 'chat.completion',
    created: prepared.created,
    model: prepared.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: result.agent_response_text, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: usageOf(prepared, result),
    system_fingerprint: null,
    switchboard: {
      conversation_id: result.conversation_id,
      message_id: result.message_id,
      was_resolved: result.was_resolved,
      ...extension,
    },
  };
}

/** The extension field of a chat-family event (tool activity, citations), or null for text. */
export function extensionOf(event: Omit<StreamEvent, 'conversation_id'>): Switchboard | null {
  if (event.type !== 'chunk') return null;
  if (event.kind === 'citations') return { citations: event.citations as Switchboard['citations'] };
  if (event.kind === 'tool') {
    const { tool, status, summary } = event as unknown as { tool: string; status: string; summary: string };
    return { tool: { tool, status, summary } };
  }
  return null;
}

/** The provider's token counts when it gave them, else estimates from the text. */
export function usageOf(prepared: PreparedCompletion, result: TurnResult): Usage {
  const prompt = result.usage?.inputTokens ?? estimateTokens(prepared.promptChars);
  const completion = result.usage?.outputTokens ?? estimateTokens(result.agent_response_text.length);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/**
 * A refusal of the turn in OpenAI's terms: the model (agent key malformed, agent or deployment
 * unknown, another agent than the token's) → 404 model_not_found; an unknown conversation → 404
 * naming `metadata.conversation_id`; the rest as they are.
 */
function openAiRefusal(error: unknown, model: string): unknown {
  if (!(error instanceof AppError)) return error;
  if (error.statusCode === 404 && error.message.startsWith('Conversation'))
    return new AppError(404, `${error.message} (metadata.conversation_id)`, 'conversation_not_found');
  if (error.statusCode === 404 || error.statusCode === 403) return modelNotFound(model);
  if (error.statusCode === 400 && error.message.startsWith('Invalid agent_key')) return modelNotFound(model);
  return error;
}

export type OpenAiService = ReturnType<typeof createOpenAiService>;
