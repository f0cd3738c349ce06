import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RateLimitConfig } from '../../config.js';
import { chatCaller } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { MINUTE, rateLimitHook } from '../../http/rate-limit.js';
import { Type } from '@sinclair/typebox';
import type { OpenAiModule } from './openai-api.module.js';
import { EmbeddingBody, EmbeddingList, ResponseBody, ResponseObject } from './openai-api.responses.schemas.js';
import { ChatCompletion, ChatCompletionBody, Model, ModelList } from './openai-api.schemas.js';
import { modelNotFound } from './openai-api.service.js';
import { openAiAudioRoutes } from './openai-api.audio.routes.js';
import { clientGone, streamCompletion } from './openai-api.stream.js';

export interface OpenAiRouteOptions {
  limits: RateLimitConfig;
  heartbeatMs: number;
}

const tags = ['openai'];
const errors = errorResponses('openai', [400, 401, 404, 409, 429, 500, 502, 503, 504]);
const modelErrors = errorResponses('openai', [401, 429, 500]);
const modelErrorsWith404 = errorResponses('openai', [401, 404, 429, 500]);
const embeddingErrors = errorResponses('openai', [400, 401, 404, 429, 500, 502, 503]);

const RESPONSES_DESCRIPTION = [
  "OpenAI's Responses API in front of a deployed agent (what the official SDKs' `responses.create` and the AI SDK's",
  'default OpenAI model call). `model` is an agent key; `input` is the query as text, or messages whose last user',
  'message is the query; `previous_response_id` continues that response’s conversation; `instructions` and system',
  'messages are accepted and not sent (the agent has its own). Every turn runs through the platform and is recorded.',
  'With `stream: true`, text/event-stream of the Responses event types (response.created … response.output_text.delta …',
  'response.completed), the platform’s citations and tool activity as `response.switchboard.*` events.',
].join(' ');

const COMPLETIONS_DESCRIPTION = [
  "OpenAI's chat-completions protocol in front of a deployed agent: point any OpenAI client at `<base>/v1` with a chat",
  'token as its API key. `model` is an agent key (or a bound token’s agent id; GET /v1/models lists them). The last user',
  'message is the query, earlier user/assistant messages the history (system messages are not sent: the agent has its',
  'own instructions); `metadata.conversation_id` continues a stored conversation (its stored history is used). Every',
  'turn runs through the platform (knowledge, tools, conversation and support query, notifications). `temperature` and',
  '`max_tokens`/`max_completion_tokens` reach model agents; the built-in responder ignores them. The `switchboard`',
  'field carries the conversation id, citations and tool activity; usage is the provider’s count, or ⌈characters/4⌉.',
].join(' ');

export function openAiRoutes(openAi: OpenAiModule, options: OpenAiRouteOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    const { limits } = options;
    const limit = (name: string, max: number) =>
      rateLimitHook(app, 'x-api-token', [{ name, max, windowMs: MINUTE }], limits.enabled);
    const completionsLimit = limit('openai-completions', limits.chatMessagesPerMinute);
    const modelsLimit = limit('openai-models', limits.chatConversationsPerMinute);
    const service = openAi.completions;
    /** The agent models and the embedding model, as OpenAI lists them. */
    const allModels = async (request: Parameters<typeof chatCaller>[0]) => {
      const list = await service.models(chatCaller(request));
      return { object: 'list' as const, data: [...list.data, ...openAi.embeddings.models()] };
    };

    await app.register(async (audio) => {
      audio.addHook('onRequest', completionsLimit);
      await audio.register(openAiAudioRoutes(openAi.audio, openAi.maxAudioBytes));
    });

    app.get(
      '/models',
      {
        onRequest: modelsLimit,
        schema: {
          operationId: 'openAiListModels',
          tags,
          summary: 'The agents this chat token may use, as OpenAI models',
          description:
            "The company's active agent deployments as agent keys (a bound token: its agent's, and the agent id itself), as OpenAI model objects.",
          response: { 200: ModelList, ...modelErrors },
        },
      },
      async (request) => allModels(request),
    );

    app.get(
      '/models/:model',
      {
        onRequest: modelsLimit,
        schema: {
          operationId: 'openAiRetrieveModel',
          tags,
          summary: 'One model this chat token may use',
          description: 'An agent key (or a bound token’s agent id) or the embedding model, as GET /v1/models lists it.',
          params: Type.Object({ model: Type.String({ minLength: 1, maxLength: 300 }) }),
          response: { 200: Model, ...modelErrorsWith404 },
        },
      },
      async (request) => {
        const { data } = await allModels(request);
        const found = data.find((model) => model.id === request.params.model);
        if (!found) throw modelNotFound(request.params.model);
        return found;
      },
    );

    app.post(
      '/responses',
      {
        onRequest: completionsLimit,
        schema: {
          operationId: 'openAiCreateResponse',
          tags,
          summary: 'A response from a deployed agent (whole, or streamed with stream: true)',
          description: RESPONSES_DESCRIPTION,
          body: ResponseBody,
          produces: ['application/json', 'text/event-stream'],
          response: { 200: ResponseObject, ...errors },
        },
      },
      async (request, reply) => {
        const prepared = await openAi.responses.prepare(chatCaller(request), request.body);
        if (request.body.stream) return openAi.responses.stream(prepared, reply, options.heartbeatMs, request.log);
        return openAi.responses.create(prepared, clientGone(reply));
      },
    );

    app.post(
      '/embeddings',
      {
        onRequest: completionsLimit,
        schema: {
          operationId: 'openAiCreateEmbeddings',
          tags,
          summary: 'Embeddings from the knowledge base’s embedding model',
          description:
            'The embedder the knowledge base uses (GET /v1/models lists it), in OpenAI’s protocol: floats, or base64 float32 with encoding_format: base64. 503 when no embedder is configured.',
          body: EmbeddingBody,
          response: { 200: EmbeddingList, ...embeddingErrors },
        },
      },
      async (request, reply) => openAi.embeddings.embed(request.body, clientGone(reply)),
    );

    app.post(
      '/chat/completions',
      {
        onRequest: completionsLimit,
        schema: {
          operationId: 'openAiChatCompletion',
          tags,
          summary: 'A chat completion from a deployed agent (whole, or streamed with stream: true)',
          description: COMPLETIONS_DESCRIPTION,
          body: ChatCompletionBody,
          produces: ['application/json', 'text/event-stream'],
          response: {
            200: {
              ...ChatCompletion,
              description:
                'A chat.completion; with stream: true, text/event-stream of `data: <chat.completion.chunk>` lines: delta.role first, content deltas, extension chunks (empty delta, `switchboard.tool` or `switchboard.citations`), a chunk with finish_reason, with stream_options.include_usage a chunk with empty choices and usage, then `data: [DONE]`',
            },
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const prepared = await service.prepare(chatCaller(request), request.body);
        if (request.body.stream) return streamCompletion(service.turns, reply, prepared, options, request.log);
        return service.complete(prepared, clientGone(reply));
      },
    );
  };
}
