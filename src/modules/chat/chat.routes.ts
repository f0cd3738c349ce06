import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { chatCaller } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { MINUTE, rateLimitHook } from '../../http/rate-limit.js';
import type { ChatModule } from './chat.module.js';
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
  ConversationEventSchema,
} from './chat.schemas.js';
import { parseChatForm } from './chat.form.js';
import { clientSignal, resumeStream, streamTurn } from './chat.stream.js';
import { streamConversationEvents } from './chat.conversation-stream.js';
import { statusEvent } from './chat.handoff-state.js';

const STREAM_DESCRIPTION = [
  'Sends a user message (text, or audio that is transcribed) to the agent of `agent_key`; the reply streams as',
  'server-sent events. Every event carries an `id:` (`<turn id>:<seq>:<mark>`, opaque to clients) and the first one a `retry:` delay.',
  'A client that loses the stream sends the same request again with the header `Last-Event-ID` (as EventSource does):',
  'it gets the events of the same turn after that id, then the live ones until `end` — no new turn is started and the',
  'model is not called again. The events are kept in process while the turn runs and for CHAT_STREAM_RESUME_MS after',
  'its end (a turn whose client left keeps running that long, waiting for the reconnect); after that, or on another',
  "instance, the turn's stored answer is replayed from where the client was. 204 when the id is that of `end`;",
  '404 (chat error body) for a turn unknown to the token’s company or bound agent; 400 for an id not of this form.',
].join(' ');
const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({ maxLength: 200, description: 'Resume the turn of this event id instead of starting one' }),
  ),
});

const errors = errorResponses('chat', [400, 401, 403, 404, 409, 413, 415, 429, 500]);
/** A turn also fails upstream: the model or speech provider (502), one not configured (503), a timeout (504). */
const turnErrors = errorResponses('chat', [400, 401, 403, 404, 409, 413, 415, 429, 500, 502, 503, 504]);
const tags = ['chat'];

export interface ChatRouteOptions {
  limits: RateLimitConfig;
  heartbeatMs: number;
  /** The `retry:` field of chat streams. */
  retryMs: number;
  maxAudioBytes: number;
}

export function chatRoutes(chat: ChatModule, options: ChatRouteOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('onClose', async () => chat.streams.close());
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
          description:
            "Creates an empty conversation with an agent of the token's company; turns sent with its id continue it.",
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
          description: "Conversations of the token's company (or of its bound agent), newest first, cursor-paginated.",
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
          description: 'One conversation with its agent, status and message count.',
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
          description: 'Renames a conversation or closes it; a closed conversation takes no more turns.',
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
          description:
            'Messages of a conversation, oldest first (`order=desc`: newest first), cursor-paginated; assistant messages carry their citations and model.',
          params: ConversationParams,
          querystring: MessagesQuery,
          response: { 200: MessagePage, ...errors },
        },
      },
      async (request) => chat.conversations.messages(chatCaller(request), request.params.conversationId, request.query),
    );

    app.get(
      '/conversations/:conversationId/events',
      {
        onRequest: manage,
        schema: {
          operationId: 'streamConversationEvents',
          tags,
          summary: 'Live events of a conversation (server-sent events): hand-off status, a person’s replies',
          description: [
            'Server-sent events while the connection is open: first `handoff` with the current status',
            '(`bot`: the agent answers, `handoff`: waiting for a person, `assigned`: a person answers, `closed`),',
            'then `handoff` on each change, `message` for each message written during a hand-off (the customer’s',
            'and a person’s, `role: human`) and `delivery` when a reply’s delivery on its channel is known.',
            'Each event has an `id:`; after a reconnect, read the messages to catch up. `: heartbeat` comments keep it open.',
          ].join(' '),
          params: ConversationParams,
          produces: ['text/event-stream'],
          response: { 200: ConversationEventSchema, ...errors },
        },
      },
      async (request, reply) => {
        const caller = chatCaller(request);
        const { conversationId } = request.params;
        const filter = { companyId: caller.companyId, conversationId };
        await streamConversationEvents(
          reply,
          chat.events,
          filter,
          async () => [statusEvent(await chat.conversations.mustFind(caller, conversationId))],
          options,
        );
      },
    );

    app.post(
      '/conversations/:conversationId/feedback',
      {
        onRequest: manage,
        schema: {
          operationId: 'rateConversation',
          tags,
          summary: 'Rate a conversation 1–5 (201 first time, 200 when replacing)',
          description:
            'Records a 1–5 rating with an optional comment; it also sets the customer satisfaction of the support query. Answers 201 the first time and 200 when replacing.',
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
          description:
            'Sends a user message (text, or audio that is transcribed) to the agent of `agent_key` and answers when the reply is complete. Without `conversation_id` a conversation is started. Accepts a multipart form or JSON.',
          consumes,
          body: ChatForm,
          response: { 200: ChatResponse, ...turnErrors },
        },
      },
      async (request, reply) => {
        const turn = await chat.turns.prepare(chatCaller(request), request.body);
        const { conversation_id, agent_response_text, response_time_ms, was_resolved, held } = await chat.turns.run(
          turn,
          clientSignal(reply),
        );
        const answer = { conversation_id, agent_response_text, response_time_ms, was_resolved };
        return held ? { ...answer, handoff: true as const, status: held.status } : answer;
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
          description: STREAM_DESCRIPTION,
          consumes,
          headers: StreamHeaders,
          body: ChatForm,
          produces: ['text/event-stream'],
          response: {
            200: StreamEventSchema,
            204: Type.Null({ description: 'Resumed with the id of the last event (`end`): nothing more to send' }),
            ...turnErrors,
          },
        },
      },
      async (request, reply) => {
        const lastEventId = request.headers['last-event-id'];
        if (typeof lastEventId === 'string' && lastEventId !== '')
          return resumeStream(chat, reply, chatCaller(request), lastEventId, options);
        return streamTurn(chat, reply, chatCaller(request), request.body, options, request.log);
      },
    );
  };
}
