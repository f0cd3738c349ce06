/**
 * Anthropic's Messages protocol (POST {base}/messages, streamed; `x-api-key`, `anthropic-version`).
 * The request: the system prompt apart (`system`), user and tool-result turns as one `user`
 * message of `text` and `tool_result` blocks, assistant turns as `text` and `tool_use` blocks,
 * `max_tokens` always (the model's own limit when the request sets none), temperature within
 * 0–1 (left out for the models that refuse sampling parameters). The stream: `message_start`
 * (input usage), `content_block_start` / `_delta` / `_stop` (text deltas; a `tool_use` block's
 * input JSON in pieces, whole at its stop), `message_delta` (output usage), `message_stop`, `ping`,
 * and an `error` event when the provider fails mid-way.
 */
import type { LlmRequest, LlmStreamPart, LlmUsage } from '../../ports/llm.js';
import { providerErrorOf, type LlmErrors, type ProviderError } from './llm-errors.js';
import { parseEvent, systemText, toToolCall, type Protocol, type StreamReader, type WireRequest } from './protocol.js';

export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * What a model takes: its most output tokens (sent when a request sets no `maxTokens`), and
 * whether it refuses sampling parameters (the newest models: temperature left out). Unknown names
 * get 4,096 tokens.
 */
export function anthropicModel(modelId: string): { maxTokens: number; rejectsSampling: boolean } {
  const has = (...names: string[]) => names.some((name) => modelId.includes(name));
  if (
    has('claude-sonnet-5', 'claude-opus-5', 'claude-haiku-5-5', 'claude-fable-5', 'claude-opus-4-7', 'claude-opus-4-8')
  )
    return { maxTokens: 128_000, rejectsSampling: true };
  if (has('claude-sonnet-4-6', 'claude-opus-4-6')) return { maxTokens: 128_000, rejectsSampling: false };
  if (has('claude-sonnet-4-5', 'claude-opus-4-5', 'claude-haiku-4-5'))
    return { maxTokens: 64_000, rejectsSampling: false };
  if (has('claude-opus-4-1')) return { maxTokens: 32_000, rejectsSampling: false };
  if (has('claude-sonnet-4-')) return { maxTokens: 64_000, rejectsSampling: false };
  if (has('claude-opus-4-')) return { maxTokens: 32_000, rejectsSampling: false };
  if (has('claude-3-haiku') || /claude-(?:instant(?:-|$)|v?2(?=$|[-.:])|3(?=$|[-.]))/.test(modelId))
    return { maxTokens: 4096, rejectsSampling: false };
  if (has('claude-')) return { maxTokens: 128_000, rejectsSampling: true };
  return { maxTokens: 4096, rejectsSampling: false };
}

type Block = Record<string, unknown>;
interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

export function anthropicBody(request: LlmRequest, modelId: string): string {
  const model = anthropicModel(modelId);
  const messages: AnthropicMessage[] = [];
  const add = (role: AnthropicMessage['role'], blocks: Block[]) => {
    const last = messages[messages.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const message of request.messages) {
    if (message.role === 'user') add('user', [{ type: 'text', text: message.content }]);
    else if (message.role === 'tool')
      add('user', [
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId ?? '',
          content: message.content,
          ...(message.isError ? { is_error: true } : {}),
        },
      ]);
    else if (message.role === 'assistant') {
      const blocks: Block[] = message.content ? [{ type: 'text', text: message.content }] : [];
      for (const call of message.toolCalls ?? [])
        blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input ?? {} });
      add('assistant', blocks);
    }
  }
  // A conversation ending on the assistant's words is a prefill, which may not end in whitespace.
  const last = messages[messages.length - 1];
  const lastBlock = last?.content[last.content.length - 1];
  if (last?.role === 'assistant' && lastBlock?.type === 'text') lastBlock.text = (lastBlock.text as string).trim();
  const system = systemText(request);
  const tools = request.tools?.length ? request.tools : undefined;
  return JSON.stringify({
    model: modelId,
    max_tokens: request.maxTokens ?? model.maxTokens,
    ...(model.rejectsSampling ? {} : { temperature: Math.min(1, Math.max(0, request.temperature)) }),
    ...(system ? { system: [{ type: 'text', text: system }] } : {}),
    messages,
    ...(tools
      ? {
          tools: tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            input_schema: tool.inputSchema,
          })),
          tool_choice: { type: request.toolChoice ?? 'auto' },
        }
      : {}),
    stream: true,
  });
}

interface Usage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

class AnthropicReader implements StreamReader {
  /** The `tool_use` block being streamed (blocks come one at a time). */
  private tool: { index: unknown; id: string; name: string; json: string } | undefined;
  private usage: Usage | undefined;
  private first = true;

  constructor(private readonly errors: LlmErrors) {}

  event(_event: string, data: string, out: LlmStreamPart[]): void {
    const value = parseEvent(data, this.errors);
    const first = this.first;
    this.first = false;
    switch (value.type) {
      case 'message_start': {
        const usage = (value.message as { usage?: Usage } | undefined)?.usage;
        if (usage) this.usage = { ...usage };
        return;
      }
      case 'content_block_start': {
        const block = value.content_block as { type?: unknown; id?: unknown; name?: unknown } | undefined;
        if (block?.type === 'tool_use')
          this.tool = { index: value.index, id: String(block.id ?? ''), name: String(block.name ?? ''), json: '' };
        return;
      }
      case 'content_block_delta': {
        const delta = value.delta as { type?: unknown; text?: unknown; partial_json?: unknown } | undefined;
        const tool = this.tool;
        if (delta?.type === 'text_delta' && typeof delta.text === 'string' && delta.text) out.push(delta.text);
        else if (delta?.type === 'input_json_delta' && tool && tool.index === value.index)
          tool.json += typeof delta.partial_json === 'string' ? delta.partial_json : '';
        return;
      }
      case 'content_block_stop': {
        const tool = this.tool;
        if (tool && tool.index === value.index) {
          this.tool = undefined;
          out.push(toToolCall({ toolCallId: tool.id, toolName: tool.name, input: tool.json }));
        }
        return;
      }
      case 'message_delta': {
        const usage = value.usage as Usage | undefined;
        if (usage) {
          const merged = (this.usage ??= {});
          for (const key of Object.keys(usage) as (keyof Usage)[]) if (usage[key] != null) merged[key] = usage[key];
        }
        return;
      }
      case 'error': {
        const error: ProviderError = providerErrorOf(value) ?? {};
        // The first event an error: the request failed (overloaded: 529, may succeed later; else 500).
        if (first) {
          const overloaded = error.type === 'overloaded_error';
          throw this.errors.inStream(error, overloaded ? 529 : 500, overloaded);
        }
        throw this.errors.inStream(error, undefined, true);
      }
      default:
        return; // ping, message_stop, and event types added later
    }
  }

  end(): LlmUsage {
    const usage = this.usage;
    return {
      inputTokens:
        usage?.input_tokens == null
          ? undefined
          : usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
      outputTokens: usage?.output_tokens ?? undefined,
    };
  }
}

export const anthropicMessagesProtocol: Protocol = {
  defaultBaseUrl: 'https://api.anthropic.com/v1',
  request(request, modelId, apiKey): WireRequest {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'anthropic-version': ANTHROPIC_VERSION,
    };
    if (apiKey) headers['x-api-key'] = apiKey;
    return { path: '/messages', headers, body: anthropicBody(request, modelId) };
  },
  reader: (errors) => new AnthropicReader(errors),
};
