/**
 * OpenAI's chat-completions protocol (POST {base}/chat/completions, streamed), spoken by OpenAI
 * and by OpenAI-compatible servers (Ollama, vLLM, LM Studio, proxies). The request: the system
 * prompt first (`developer` for OpenAI's reasoning models, which also take no temperature and
 * count `max_completion_tokens`), assistant messages with their `tool_calls`, one `tool` message
 * per result, function tools; OpenAI itself is asked for the usage (`stream_options`), an
 * OpenAI-compatible server is not (strict ones refuse the field). The stream: `data:` chunks whose
 * first choice's delta carries text or pieces of tool calls (assembled by index, whole at the
 * end), a usage chunk, an `error` object instead of a chunk when the provider fails mid-way, and
 * `[DONE]`.
 */
import { randomUUID } from 'node:crypto';
import type { LlmRequest, LlmStreamPart, LlmUsage } from '../../ports/llm.js';
import { openAiErrorRetryable, openAiErrorStatus, providerErrorOf, type LlmErrors } from './llm-errors.js';
import { parseEvent, systemText, toToolCall, type Protocol, type StreamReader, type WireRequest } from './protocol.js';

/** OpenAI's reasoning models (o-series, gpt-5 and later but their `-chat` variants), as OpenAI names them. */
export function isOpenAiReasoningModel(modelId: string): boolean {
  if (/^o\d+(?:-|$)/.test(modelId)) return true;
  const gpt = /^gpt-(\d+)(?:\.(\d+))?(?:-(.+))?$/.exec(modelId);
  if (!gpt) return false;
  const chat = gpt[2] === undefined && (gpt[3]?.startsWith('chat') ?? false);
  return Number(gpt[1]) >= 5 && !chat;
}

export function openAiChatBody(request: LlmRequest, modelId: string, strictOpenAi: boolean): string {
  const reasoning = strictOpenAi && isOpenAiReasoningModel(modelId);
  const messages: Record<string, unknown>[] = [];
  const system = systemText(request);
  if (system) messages.push({ role: reasoning ? 'developer' : 'system', content: system });
  for (const message of request.messages) {
    if (message.role === 'user') messages.push({ role: 'user', content: message.content });
    else if (message.role === 'assistant') {
      const calls = message.toolCalls ?? [];
      messages.push({
        role: 'assistant',
        content: calls.length ? message.content || null : message.content,
        tool_calls: calls.length
          ? calls.map((call) => ({
              id: call.id,
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) },
            }))
          : undefined,
      });
    } else if (message.role === 'tool') {
      messages.push({ role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content });
    }
  }
  const tools = request.tools?.length ? request.tools : undefined;
  return JSON.stringify({
    model: modelId,
    messages,
    ...(request.maxTokens === undefined
      ? {}
      : reasoning
        ? { max_completion_tokens: request.maxTokens }
        : { max_tokens: request.maxTokens }),
    ...(reasoning ? {} : { temperature: request.temperature }),
    ...(tools
      ? {
          tools: tools.map((tool) => ({
            type: 'function',
            function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
          })),
          tool_choice: request.toolChoice ?? 'auto',
        }
      : {}),
    stream: true,
    ...(strictOpenAi ? { stream_options: { include_usage: true } } : {}),
  });
}

interface PendingCall {
  index: number | undefined;
  sequence: number;
  wireId: string | undefined;
  id: string;
  name: string;
  args: string;
}

interface ToolCallDelta {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

const nonBlank = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() ? value : undefined;

class OpenAiChatReader implements StreamReader {
  private calls: PendingCall[] | undefined;
  private usage: { prompt_tokens?: number; completion_tokens?: number } | undefined;
  private output = false;

  constructor(private readonly errors: LlmErrors) {}

  event(_event: string, data: string, out: LlmStreamPart[]): void {
    if (data === '[DONE]') return;
    const chunk = parseEvent(data, this.errors);
    if (chunk.error != null) {
      const error = providerErrorOf(chunk) ?? {};
      if (this.output) throw this.errors.inStream(error, undefined, true);
      const status = openAiErrorStatus(error);
      throw this.errors.inStream(error, status, openAiErrorRetryable(error, status));
    }
    if (chunk.usage && typeof chunk.usage === 'object') this.usage = chunk.usage;
    const choices = chunk.choices as { delta?: Record<string, unknown> | null }[] | undefined;
    const delta = Array.isArray(choices) ? choices[0]?.delta : undefined;
    if (!delta) return;
    const { content, refusal, tool_calls: toolCalls } = delta;
    if (typeof content === 'string' && content) {
      out.push(content);
      this.output = true;
    }
    if (typeof refusal === 'string' && refusal) {
      out.push(refusal);
      this.output = true;
    }
    if (Array.isArray(toolCalls) && toolCalls.length) {
      this.output = true;
      for (const piece of toolCalls as ToolCallDelta[]) this.toolDelta(piece);
    }
  }

  /** A piece of a tool call: a new call (it names the function) or more of an open one's arguments. */
  private toolDelta(piece: ToolCallDelta): void {
    const calls = (this.calls ??= []);
    const index = typeof piece.index === 'number' ? piece.index : undefined;
    const wireId = nonBlank(piece.id);
    const name = nonBlank(piece.function?.name);
    const args = typeof piece.function?.arguments === 'string' ? piece.function.arguments : '';
    let call: PendingCall | undefined;
    if (index !== undefined) call = calls.findLast((candidate) => candidate.index === index);
    else if (wireId) call = calls.findLast((candidate) => candidate.wireId === wireId);
    else if (!name) call = calls[calls.length - 1];
    // Some servers number every call 0: a new id with a name starts a new call.
    if (call && wireId && name && call.wireId && call.wireId !== wireId) call = undefined;
    if (call) {
      call.args += args;
      return;
    }
    if (!name) return;
    const used = wireId !== undefined && calls.some((candidate) => candidate.id === wireId);
    calls.push({
      index,
      sequence: calls.length,
      wireId,
      id: wireId && !used ? wireId : `call_${randomUUID()}`,
      name,
      args,
    });
  }

  end(out: LlmStreamPart[]): LlmUsage {
    if (this.calls) {
      const calls = this.calls.every((call) => call.index !== undefined)
        ? [...this.calls].sort((a, b) => a.index! - b.index! || a.sequence - b.sequence)
        : this.calls;
      for (const call of calls) out.push(toToolCall({ toolCallId: call.id, toolName: call.name, input: call.args }));
    }
    const usage = this.usage;
    return {
      inputTokens: usage ? (usage.prompt_tokens ?? 0) : undefined,
      outputTokens: usage ? (usage.completion_tokens ?? 0) : undefined,
    };
  }
}

export function openAiChatProtocol(strictOpenAi: boolean): Protocol {
  return {
    defaultBaseUrl: strictOpenAi ? 'https://api.openai.com/v1' : undefined,
    request(request, modelId, apiKey): WireRequest {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
      if (apiKey) headers.authorization = `Bearer ${apiKey}`;
      return { path: '/chat/completions', headers, body: openAiChatBody(request, modelId, strictOpenAi) };
    },
    reader: (errors) => new OpenAiChatReader(errors),
  };
}
