/**
 * LanguageModels over the Vercel AI SDK: OpenAI, Anthropic and any OpenAI-compatible server
 * (Ollama, vLLM, LM Studio …), one provider instance per LLM_PROVIDERS entry.
 *
 * A reply streams through the provider's language-model interface (`doStream` of the AI SDK's
 * LanguageModelV3 specification): the provider package builds the request, parses the stream and
 * maps errors, while `streamText`'s orchestration (tool loops, retries, telemetry, output
 * transforms), which a single streamed reply does not use, stays out of the path of every token
 * (first token 1.59 → 0.94 ms, whole reply 3.17 → 1.41 ms on a local provider; docs/decisions.md).
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3Prompt,
  type LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider';
import type { LlmProviderConfig } from '../../config.js';
import { LlmError, type LanguageModels, type LlmRequest, type LlmToolCall } from '../../ports/llm.js';

type ModelFactory = (modelId: string) => LanguageModelV3;

function factoryFor(config: LlmProviderConfig, fetchImpl?: typeof fetch): ModelFactory {
  const common = { ...(config.apiKey ? { apiKey: config.apiKey } : {}), ...(fetchImpl ? { fetch: fetchImpl } : {}) };
  switch (config.type) {
    case 'openai': {
      const provider = createOpenAI({ ...common, ...(config.baseUrl ? { baseURL: config.baseUrl } : {}) });
      // The chat-completions API: the one OpenAI-compatible servers and proxies speak too.
      return (modelId) => provider.chat(modelId);
    }
    case 'anthropic': {
      const provider = createAnthropic({ ...common, ...(config.baseUrl ? { baseURL: config.baseUrl } : {}) });
      return (modelId) => provider(modelId);
    }
    case 'openai-compatible': {
      const provider = createOpenAICompatible({ ...common, name: config.name, baseURL: config.baseUrl ?? '' });
      return (modelId) => provider.chatModel(modelId);
    }
  }
}

function toLlmError(error: unknown): LlmError {
  if (error instanceof LlmError) return error;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    const detail = status ? `HTTP ${status}` : 'no response';
    // A reply that broke off after a 200 says why in its cause (the connection, the parser).
    const cause = status === 200 && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return new LlmError(
      `The language model provider failed (${detail}): ${error.message}${cause}`,
      status === 200 || error.isRetryable,
      status,
    );
  }
  // Errors inside a stream arrive as the provider's error body ({message} or {error: {message}}).
  const body = error as { message?: unknown; error?: { message?: unknown } } | null;
  const message =
    error instanceof Error
      ? error.message
      : typeof body?.message === 'string'
        ? body.message
        : typeof body?.error?.message === 'string'
          ? body.error.message
          : JSON.stringify(error);
  return new LlmError(`The language model provider failed: ${message}`, true);
}

/**
 * Instructions go in the system part, never among the conversation's messages. An assistant
 * message carries its tool calls; consecutive tool results go in one tool message (the order
 * the providers expect: every call of a step answered before the next step).
 */
export function toPrompt(request: Pick<LlmRequest, 'messages'>): LanguageModelV3Prompt {
  const system = request.messages
    .filter((message) => message.role === 'system')
    .map((message) => message.content)
    .join('\n\n');
  const prompt: LanguageModelV3Prompt = system ? [{ role: 'system', content: system }] : [];
  for (const message of request.messages) {
    if (message.role === 'user') prompt.push({ role: 'user', content: [{ type: 'text', text: message.content }] });
    else if (message.role === 'assistant') {
      const calls = (message.toolCalls ?? []).map((call) => ({
        type: 'tool-call' as const,
        toolCallId: call.id,
        toolName: call.name,
        input: call.input ?? {},
      }));
      const text = message.content ? [{ type: 'text' as const, text: message.content }] : [];
      prompt.push({ role: 'assistant', content: [...text, ...calls] });
    } else if (message.role === 'tool') {
      const part: LanguageModelV3ToolResultPart = {
        type: 'tool-result',
        toolCallId: message.toolCallId ?? '',
        toolName: message.toolName ?? '',
        output: { type: message.isError ? 'error-text' : 'text', value: message.content },
      };
      const last = prompt[prompt.length - 1];
      if (last?.role === 'tool') last.content.push(part);
      else prompt.push({ role: 'tool', content: [part] });
    }
  }
  return prompt;
}

/** The request's tools as function tools of the AI SDK specification (none: a plain reply). */
export function toTools(request: Pick<LlmRequest, 'tools' | 'toolChoice'>): Partial<LanguageModelV3CallOptions> {
  if (!request.tools?.length) return {};
  return {
    tools: request.tools.map((tool) => ({
      type: 'function' as const,
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as never,
    })),
    toolChoice: { type: request.toolChoice ?? 'auto' },
  };
}

/** A provider's tool call (input as JSON text) as the port's: the parsed object, or null. */
export function toToolCall(part: { toolCallId: string; toolName: string; input: string }): LlmToolCall {
  let input: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(part.input || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) input = parsed as Record<string, unknown>;
  } catch {
    input = null;
  }
  return { type: 'tool-call', id: part.toolCallId, name: part.toolName, input };
}

export interface AiSdkOptions {
  providers: LlmProviderConfig[];
  /** Replaces global fetch (tests, proxies). */
  fetch?: typeof fetch;
}

export function createAiSdkLanguageModels(options: AiSdkOptions): LanguageModels {
  const entries = new Map(
    options.providers.map((config) => {
      const factory = factoryFor(config, options.fetch);
      const models = new Map<string, LanguageModelV3>();
      const model = (modelId: string) => {
        let found = models.get(modelId);
        if (!found) models.set(modelId, (found = factory(modelId)));
        return found;
      };
      return [config.name, { config, model }];
    }),
  );

  function split(model: string): [string, string] {
    const at = model.indexOf(':');
    return at < 0 ? [model, ''] : [model.slice(0, at), model.slice(at + 1)];
  }

  return {
    providers: () => [...entries.keys()],

    checkModel(model) {
      const [providerName, modelId] = split(model);
      const entry = entries.get(providerName);
      if (!entry) {
        const configured = [...entries.keys()];
        return `provider "${providerName}" is not configured (configured: ${configured.length ? configured.join(', ') : 'none'}; set LLM_PROVIDERS)`;
      }
      if (!modelId) return `model must be "<provider>:<model>", got "${model}"`;
      if (entry.config.models.length && !entry.config.models.includes(modelId)) {
        return `model "${modelId}" is not one of ${providerName}'s models: ${entry.config.models.join(', ')}`;
      }
      return null;
    },

    async *stream(request: LlmRequest) {
      const [providerName, modelId] = split(request.model);
      const entry = entries.get(providerName);
      if (!entry) throw new LlmError(`Model provider "${providerName}" is not configured`, false);
      const { signal } = request;
      try {
        const { stream } = await entry.model(modelId).doStream({
          prompt: toPrompt(request),
          temperature: request.temperature,
          ...(request.maxTokens !== undefined ? { maxOutputTokens: request.maxTokens } : {}),
          abortSignal: signal,
          ...toTools(request),
        });
        for await (const part of stream) {
          if (part.type === 'text-delta') {
            if (part.delta) yield part.delta;
          } else if (part.type === 'tool-call') {
            if (!part.providerExecuted) yield toToolCall(part);
          } else if (part.type === 'error') {
            throw toLlmError(part.error);
          } else if (part.type === 'finish') {
            request.onUsage?.({
              inputTokens: part.usage.inputTokens.total,
              outputTokens: part.usage.outputTokens.total,
            });
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        throw toLlmError(error);
      }
    },
  };
}
