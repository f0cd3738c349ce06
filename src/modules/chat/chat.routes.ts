import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { chatCaller } from '../../http/auth.js';
import { AppError, ERROR_NAMES, errorResponses } from '../../http/errors.js';
import { MINUTE, rateLimitHook } from '../../http/rate-limit.js';
import type { ChatModule } from './index.js';
import {
  ChatForm,
  ChatResponse,
  Conversation,
  ConversationPage,
  ConversationParams,
  CreateConversationBody,
  Feedback,
  FeedbackBody,
  ListConversationsQuery,
  MessagePage,
  MessagesQuery,
  UpdateConversationBody,
  StreamEventSchema,
  type StreamEvent,
} from './chat.schemas.js';
import { parseChatForm } from './chat.form.js';
import { openEventStream } from './chat.sse.js';

const errors = errorResponses('chat', [400, 401, 403, 404, 409, 413, 415, 429, 500, 502, 503, 504]);
const tags = ['chat'];

export interface ChatRouteOptions {
  limits: RateLimitConfig;
  heartbeatMs: number;
  maxAudioBytes: number;
}

/** Aborts when the client of a non-streaming request goes away before the reply. */
function clientSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

export function chatRoutes(chat: ChatModule, options: ChatRouteOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Form bodies up to the audio limit plus room for the text fields ('messages' may carry history).
    app.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer', bodyLimit: options.maxAudioBytes + 1024 * 1024 },
      async (request: FastifyRequest, body: Buffer) =>
        parseChatForm(body, request.headers['content-type'] ?? '', options.maxAudioBytes),
    );
    const { limits } = options;
    const limit = (name: string, max: number) =>
      rateLimitHook(app, 'x-api-token', [{ name, max, windowMs: MINUTE }], limits.enabled);
    const manage = limit('chat-conversations', limits.chatConversationsPerMinute);
    const chatLimit = limit('chat', limits.chatMessagesPerMinute);
    const streamLimit = limit('chat-stream', limits.chatStreamsPerMinute);
    const consumes = ['multipart/form-data', 'application/json'];

    app.post(
      '/conversations',
      {
        onRequest: manage,
        schema: {
          operationId: 'createConversation',
          tags,
          summary: 'Start a conversation with an agent',
          body: CreateConversationBody,
          response: { 201: Type.Ref(Conversation), ...errors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await chat.conversations.create(chatCaller(request), request.body)),
    );

    app.get(
      '/conversations',
      {
        onRequest: manage,
        schema: {
          operationId: 'listConversations',
          tags,
          summary: "Conversations of the token's company (or bound agent), newest first",
          querystring: ListConversationsQuery,
          response: { 200: ConversationPage, ...errors },
        },
      },
      async (request) => chat.conversations.list(chatCaller(request), request.query),
    );

    app.get(
      '/conversations/:conversationId',
      {
        onRequest: manage,
        schema: {
          operationId: 'getConversation',
          tags,
          summary: 'One conversation',
          params: ConversationParams,
          response: { 200: Type.Ref(Conversation), ...errors },
        },
      },
      async (request) => chat.conversations.get(chatCaller(request), request.params.conversationId),
    );

    app.patch(
      '/conversations/:conversationId',
      {
        onRequest: manage,
        schema: {
          operationId: 'updateConversation',
          tags,
          summary: 'Rename or close a conversation',
          params: ConversationParams,
          body: UpdateConversationBody,
          response: { 200: Type.Ref(Conversation), ...errors },
        },
      },
      async (request) => chat.conversations.update(chatCaller(request), request.params.conversationId, request.body),
    );

    app.get(
      '/conversations/:conversationId/messages',
      {
        onRequest: manage,
        schema: {
          operationId: 'listConversationMessages',
          tags,
          summary: 'Messages of a conversation, cursor-paginated',
          params: ConversationParams,
          querystring: MessagesQuery,
          response: { 200: MessagePage, ...errors },
        },
      },
      async (request) => chat.conversations.messages(chatCaller(request), request.params.conversationId, request.query),
    );

    app.post(
      '/conversations/:conversationId/feedback',
      {
        onRequest: manage,
        schema: {
          operationId: 'rateConversation',
          tags,
          summary: 'Rate a conversation 1–5 (201 first time, 200 when replacing)',
          params: ConversationParams,
          body: FeedbackBody,
          response: { 200: Feedback, 201: Feedback, ...errors },
        },
      },
      async (request, reply) => {
        const { feedback, created } = await chat.conversations.feedback(
          chatCaller(request),
          request.params.conversationId,
          request.body.rating,
          request.body.comment ?? '',
        );
        return reply.code(created ? 201 : 200).send(feedback);
      },
    );

    app.post(
      '/agent/chat',
      {
        onRequest: chatLimit,
        schema: {
          operationId: 'chat',
          tags,
          summary: 'Send a message and get the whole reply',
          consumes,
          body: ChatForm,
          response: { 200: ChatResponse, ...errors },
        },
      },
      async (request, reply) => {
        const turn = await chat.turns.prepare(chatCaller(request), request.body);
        const { conversation_id, agent_response_text, response_time_ms, was_resolved } = await chat.turns.run(
          turn,
          clientSignal(reply),
        );
        return { conversation_id, agent_response_text, response_time_ms, was_resolved };
      },
    );

    app.post(
      '/agent/stream',
      {
        onRequest: streamLimit,
        schema: {
          operationId: 'chatStream',
          tags,
          summary:
            'Send a message; the reply streams as server-sent events (start, [transcribed_text], agent_text_chunk…, [chunk], end | error, end)',
          consumes,
          body: ChatForm,
          produces: ['text/event-stream'],
          response: { 200: StreamEventSchema, ...errors },
        },
      },
      async (request, reply) => {
        const turn = await chat.turns.prepare(chatCaller(request), request.body);
        const conversation_id = turn.conversation.id;
        const stream = openEventStream(reply, options.heartbeatMs);
        stream.send({ type: 'start', content: '', conversation_id });
        try {
          const result = await chat.turns.run(turn, stream.signal, (event) =>
            stream.send({ ...event, conversation_id } as StreamEvent),
          );
          stream.send({
            type: 'end',
            content: '',
            conversation_id,
            message_id: result.message_id,
            was_resolved: result.was_resolved,
            response_time_ms: result.response_time_ms,
          });
        } catch (error) {
          const status = error instanceof AppError ? error.statusCode : 500;
          if (status >= 500 && !(error instanceof AppError)) request.log.error({ err: error }, 'chat stream failed');
          const message = error instanceof AppError ? error.message : 'Internal server error';
          stream.send({
            type: 'error',
            content: message,
            conversation_id,
            error: error instanceof AppError ? error.code : ERROR_NAMES[500],
            statusCode: status,
          });
          stream.send({ type: 'end', content: '', conversation_id });
        } finally {
          stream.close();
        }
      },
    );
  };
}
