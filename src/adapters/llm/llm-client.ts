/**
 * LanguageModels over HTTP: OpenAI (chat completions), Anthropic (Messages) and any
 * OpenAI-compatible server (Ollama, vLLM, LM Studio …), one entry per LLM_PROVIDERS entry.
 *
 * A reply is one call dispatched to undici with a handler of our own (`provider-call.ts`), parsed
 * as it arrives: bytes to server-sent events (`sse.ts`), events to text deltas and tool calls (the
 * protocol's reader). No Node or web streams, no per-token promises beyond this async generator:
 * an open stream holds its connection (or HTTP/2 stream), one parser and one reader
 * (docs/decisions.md: the memory this saves per stream).
 * Aborting the request's signal closes the provider connection; so does a consumer that stops
 * reading.
 */
import { getGlobalDispatcher, type Dispatcher } from 'undici';
import type { LlmProviderConfig } from '../../config.js';
import {
  LlmError,
  type LanguageModels,
  type LlmCallObserver,
  type LlmRequest,
  type LlmStreamPart,
} from '../../ports/llm.js';
import { anthropicMessagesProtocol } from './anthropic-messages.js';
import { LlmErrors } from './llm-errors.js';
import { openAiChatProtocol } from './openai-chat.js';
import type { Protocol } from './protocol.js';
import { ownBuffer, ProviderCall } from './provider-call.js';

export interface LlmClientOptions {
  providers: LlmProviderConfig[];
  /** The connections to the providers (a shared pool, HTTP/2, a proxy, tests); unset: undici's global one. */
  dispatcher?: Dispatcher;
  /** Told of every call's first part, usage and end (the service's metrics). */
  observer?: LlmCallObserver;
}

interface Provider {
  config: LlmProviderConfig;
  protocol: Protocol;
  /** The base URL's origin, and its path without the trailing slash (the protocol's paths follow it). */
  origin: string;
  basePath: string;
  errors: LlmErrors;
}

function protocolOf(type: LlmProviderConfig['type']): Protocol {
  switch (type) {
    case 'openai':
      return openAiChatProtocol(true);
    case 'openai-compatible':
      return openAiChatProtocol(false);
    case 'anthropic':
      return anthropicMessagesProtocol;
  }
}

function split(model: string): [string, string] {
  const at = model.indexOf(':');
  return at < 0 ? [model, ''] : [model.slice(0, at), model.slice(at + 1)];
}

export function createLlmClient(options: LlmClientOptions): LanguageModels {
  const providers = new Map<string, Provider>(
    options.providers.map((config) => {
      const protocol = protocolOf(config.type);
      const base = new URL(config.baseUrl ?? protocol.defaultBaseUrl ?? '');
      const basePath = base.pathname.replace(/\/+$/, '');
      return [config.name, { config, protocol, origin: base.origin, basePath, errors: new LlmErrors(config.apiKey) }];
    }),
  );
  const { dispatcher, observer } = options;

  /**
   * Sends the request. Its JSON lives only here, not in the generator's frame, which an open
   * stream holds for the whole reply (undici keeps the bytes it sends until the answer ends).
   */
  function start(provider: Provider, request: LlmRequest, modelId: string): ProviderCall {
    const wire = provider.protocol.request(request, modelId, provider.config.apiKey);
    const call = new ProviderCall(request.signal, provider.protocol.reader(provider.errors), provider.errors);
    call.start(dispatcher ?? getGlobalDispatcher(), {
      origin: provider.origin,
      path: provider.basePath + wire.path,
      method: 'POST',
      headers: wire.headers,
      body: ownBuffer(wire.body),
    });
    return call;
  }

  async function* stream(request: LlmRequest): AsyncGenerator<LlmStreamPart, void, undefined> {
    const started = performance.now();
    const { model, signal } = request;
    let outcome: 'ok' | 'error' | 'aborted' = 'ok';
    let call: ProviderCall | null = null;
    try {
      const [providerName, modelId] = split(model);
      const provider = providers.get(providerName);
      if (!provider) throw new LlmError(`Model provider "${providerName}" is not configured`, false);
      if (signal.aborted) return;
      call = start(provider, request, modelId);
      let first = Boolean(observer);
      for (let parts = call.take(); parts; parts = call.take()) {
        if (parts.length === 0) {
          await call.arrival();
          continue;
        }
        if (first) {
          first = false;
          observer!.firstPart(model, (performance.now() - started) / 1000);
        }
        for (let i = 0; i < parts.length; i++) yield parts[i]!;
      }
    } catch (error) {
      outcome = 'error';
      throw error;
    } finally {
      // Stopped early (an error event, a consumer that left): the connection is closed, not reused.
      call?.close();
      const usage = call?.usage;
      if (usage) {
        request.onUsage?.(usage);
        observer?.usage(model, usage);
      }
      if (outcome === 'ok' && signal.aborted) outcome = 'aborted';
      observer?.ended(model, outcome, (performance.now() - started) / 1000);
    }
  }

  return {
    providers: () => [...providers.keys()],

    checkModel(model) {
      const [providerName, modelId] = split(model);
      const provider = providers.get(providerName);
      if (!provider) {
        const configured = [...providers.keys()];
        return `provider "${providerName}" is not configured (configured: ${configured.length ? configured.join(', ') : 'none'}; set LLM_PROVIDERS)`;
      }
      if (!modelId) return `model must be "<provider>:<model>", got "${model}"`;
      const { models } = provider.config;
      if (models.length && !models.includes(modelId)) {
        return `model "${modelId}" is not one of ${providerName}'s models: ${models.join(', ')}`;
      }
      return null;
    },

    stream,
  };
}
