/**
 * LanguageModels over the Vercel AI SDK: OpenAI, Anthropic and any OpenAI-compatible server
 * (Ollama, vLLM, LM Studio …), one provider instance per LLM_PROVIDERS entry.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, streamText, type LanguageModel } from 'ai';
import type { LlmProviderConfig } from '../../config.js';
import { LlmError, type LanguageModels, type LlmRequest } from '../../ports/llm.js';

type ModelFactory = (modelId: string) => LanguageModel;

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
    return new LlmError(`The language model provider failed (${detail}): ${error.message}`, error.isRetryable, status);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new LlmError(`The language model provider failed: ${message}`, true);
}

export interface AiSdkOptions {
  providers: LlmProviderConfig[];
  /** Replaces global fetch (tests, proxies). */
  fetch?: typeof fetch;
}

export function createAiSdkLanguageModels(options: AiSdkOptions): LanguageModels {
  const entries = new Map(options.providers.map((config) => [config.name, { config, factory: factoryFor(config, options.fetch) }]));

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
      let failure: unknown;
      // Instructions go in `system`, never among the conversation's messages.
      const system = request.messages.filter((message) => message.role === 'system').map((message) => message.content).join('\n\n');
      const messages = request.messages.filter((message) => message.role !== 'system') as { role: 'user' | 'assistant'; content: string }[];
      const result = streamText({
        model: entry.factory(modelId),
        ...(system ? { system } : {}),
        messages,
        temperature: request.temperature,
        abortSignal: request.signal,
        maxRetries: 0,
        onError: ({ error }) => {
          failure = error;
        },
      });
      try {
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') {
            if (part.text) yield part.text;
          } else if (part.type === 'error') {
            throw toLlmError(part.error);
          } else if (part.type === 'abort') {
            return;
          }
        }
      } catch (error) {
        if (request.signal.aborted) return;
        throw toLlmError(error);
      }
      if (failure && !request.signal.aborted) throw toLlmError(failure);
    },
  };
}
