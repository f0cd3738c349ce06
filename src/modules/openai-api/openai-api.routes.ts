import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RateLimitConfig } from '../../config.js';
import { chatCaller } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { MINUTE, rateLimitHook } from '../../http/rate-limit.js';
import { ChatCompletion, ChatCompletionBody, ModelList } from './openai-api.schemas.js';
import type { OpenAiService } from './openai-api.service.js';
import { clientGone, streamCompletion } from './openai-api.stream.js';

export interface OpenAiRouteOptions {
  limits: RateLimitConfig;
  heartbeatMs: number;
}

const tags = ['openai'];
const errors = errorResponses('openai', [400, 401, 404, 409, 429, 500, 502, 503, 504]);
const modelErrors = errorResponses('openai', [401, 429, 500]);

const COMPLETIONS_DESCRIPTION = [
  "OpenAI's chat-completions protocol in front of a deployed agent: point any OpenAI client at `<base>/v1` with a chat",
  'token as its API key. `model` is an agent key (or a bound token’s agent id; GET /v1/models lists them). The last user',
  'message is the query, earlier user/assistant messages the history (system messages are not sent: the agent has its',
  'own instructions); `metadata.conversation_id` continues a stored conversation (its stored history is used). Every',
  'turn runs through the platform (knowledge, tools, conversation and support query, notifications). `temperature` and',
  '`max_tokens`/`max_completion_tokens` reach model agents; the built-in responder ignores them. The `switchboard`',
  'field carries the conversation id, citations and tool activity; usage is the provider’s count, or ⌈characters/4⌉.',
].join(' ');

export function openAiRoutes(service: OpenAiService, options: OpenAiRouteOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    const { limits } = options;
    const limit = (name: string, max: number) =>
      rateLimitHook(app, 'x-api-token', [{ name, max, windowMs: MINUTE }], limits.enabled);
    const completionsLimit = limit('openai-completions', limits.chatMessagesPerMinute);
    const modelsLimit = limit('openai-models', limits.chatConversationsPerMinute);

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
      async (request) => service.models(chatCaller(request)),
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
