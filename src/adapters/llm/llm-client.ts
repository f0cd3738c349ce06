/**
 * LanguageModels over HTTP: OpenAI (chat completions), Anthropic (Messages) and any
 * OpenAI-compatible server (Ollama, vLLM, LM Studio …), one entry per LLM_PROVIDERS entry.
 *
 * A reply is one `undici.request` whose body (a Node stream) is parsed as it arrives: bytes to
 * server-sent events (`sse.ts`), events to text deltas and tool calls (the protocol's reader). No
 * web streams, no per-token promises beyond this async generator: an open stream holds its
 * socket, one parser and one reader (docs/decisions.md: the memory this saves per stream).
 * Aborting the request's signal closes the provider connection; so does a consumer that stops
 * reading.
 */
import type { Readable } from 'node:stream';
import { request as httpRequest, type Dispatcher } from 'undici';
import type { LlmProviderConfig } from '../../config.js';
import { LlmError, type LanguageModels, type LlmRequest, type LlmStreamPart } from '../../ports/llm.js';
import { anthropicMessagesProtocol } from './anthropic-messages.js';
import { LlmErrors } from './llm-errors.js';
import { openAiChatProtocol } from './openai-chat.js';
import type { Protocol } from './protocol.js';
import { SseParser } from './sse.js';

export interface LlmClientOptions {
  providers: LlmProviderConfig[];
  /** The connections to the providers (a shared pool, HTTP/2, a proxy, tests); unset: undici's global one. */
  dispatcher?: Dispatcher;
}

interface Provider {
  config: LlmProviderConfig;
  protocol: Protocol;
  /** The base URL without its trailing slash. */
  baseUrl: string;
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
      const baseUrl = (config.baseUrl ?? protocol.defaultBaseUrl ?? '').replace(/\/+$/, '');
      return [config.name, { config, protocol, baseUrl, errors: new LlmErrors(config.apiKey) }];
    }),
  );
  const dispatcher = options.dispatcher;

  /**
   * Sends the request; answers the body of a 2xx, null when the signal aborted first. The request's
   * JSON lives only here: undici keeps the Buffer it is sent from for the request's life, and an
   * open stream should not hold the prompt twice.
   */
  async function open(provider: Provider, request: LlmRequest, modelId: string): Promise<Readable | null> {
    const { signal } = request;
    const wire = provider.protocol.request(request, modelId, provider.config.apiKey);
    try {
      const response = await httpRequest(provider.baseUrl + wire.path, {
        method: 'POST',
        headers: wire.headers,
        body: Buffer.from(wire.body),
        signal,
        ...(dispatcher ? { dispatcher } : {}),
      });
      const body = response.body;
      if (response.statusCode >= 200 && response.statusCode <= 299) return body;
      if (signal.aborted) {
        body.destroy();
        return null;
      }
      throw await provider.errors.fromResponse(response.statusCode, body);
    } catch (error) {
      if (signal.aborted) return null;
      throw error instanceof LlmError ? error : provider.errors.noResponse(error);
    }
  }

  async function* stream(request: LlmRequest): AsyncGenerator<LlmStreamPart, void, undefined> {
    const [providerName, modelId] = split(request.model);
    const provider = providers.get(providerName);
    if (!provider) throw new LlmError(`Model provider "${providerName}" is not configured`, false);
    const { signal } = request;
    if (signal.aborted) return;
    const { errors } = provider;
    const body = await open(provider, request, modelId);
    if (!body) return;

    const reader = provider.protocol.reader(request, errors);
    const parts: LlmStreamPart[] = [];
    const parser = new SseParser((event, data) => reader.event(event, data, parts));
    let ended = false;
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        let failure: unknown;
        try {
          parser.push(chunk);
        } catch (error) {
          failure = error; // an error event: what came before it in the chunk goes out first
        }
        for (let i = 0; i < parts.length; i++) yield parts[i]!;
        parts.length = 0;
        if (failure) throw failure;
      }
      parser.end();
      reader.end(parts);
      ended = true;
      for (let i = 0; i < parts.length; i++) yield parts[i]!;
    } catch (error) {
      if (signal.aborted) return;
      throw error instanceof LlmError ? error : errors.brokenStream(error);
    } finally {
      // Stopped early (an error event, a consumer that left): the connection is closed, not reused.
      if (!ended || !body.readableEnded) body.destroy();
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
