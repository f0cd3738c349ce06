import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { companyContext, requireRole } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { streamConversationEvents, statusEvent } from '../chat/index.js';
import {
  AssignBody,
  CloseBody,
  EmptyBody,
  EventsQuery,
  InboxConversation,
  InboxConversationDetail,
  InboxPage,
  InboxParams,
  ListInboxQuery,
  ReplyBody,
  ReplyMessage,
} from './inbox.schemas.js';
import type { InboxService } from './inbox.service.js';

const errors = errorResponses('detail-status');
const tags = ['inbox'];
const act = requireRole('developer');
/** Actions whose body is optional: none (or an empty JSON body) reads as `{}`. */
const defaultBody = async (request: FastifyRequest) => {
  request.body ??= {};
};

const TRANSITIONS = [
  {
    action: 'takeover',
    operationId: 'takeOverConversation',
    summary: 'Take over: bot or handoff → assigned to you (developer)',
    description:
      'A person takes the conversation from the agent (or from the waiting queue): the agent stops answering it. 409 when it is closed or already assigned to someone else.',
  },
  {
    action: 'release',
    operationId: 'releaseConversation',
    summary: 'Release: handoff or assigned → bot (developer)',
    description:
      'Gives the conversation back to the agent, which answers the next customer message. 409 when the agent already has it or it is closed.',
  },
] as const;

export interface InboxRouteOptions {
  heartbeatMs: number;
  retryMs: number;
}

export function inboxRoutes(inbox: InboxService, options: InboxRouteOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Actions may come with no body; an empty body sent as JSON is served, not refused.
    const json = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
      body === '' ? done(null, undefined) : json(request, body.toString(), done),
    );

    app.get(
      '/conversations',
      {
        schema: {
          operationId: 'listInboxConversations',
          tags,
          summary: "The company's conversations, newest first, by hand-off status, channel, agent, assignee or text",
          description:
            'Conversations of the active company, newest first: `status` (bot, handoff, assigned, closed), `channel`, `agent_id`, `assignee_id`, and `q` searched in the title, the customer id and the messages; `skip`, `limit`.',
          querystring: ListInboxQuery,
          response: { 200: InboxPage, ...errors },
        },
      },
      async (request) => inbox.list(companyContext(request), request.query),
    );

    app.get(
      '/conversations/events',
      {
        schema: {
          operationId: 'streamInboxEvents',
          tags,
          summary: 'Live inbox events (server-sent events): hand-offs, messages during hand-off, deliveries',
          description: [
            "Server-sent events of the company's conversations (or of `conversation_id`'s): `handoff` {conversation_id, status,",
            'reason, assignee_id, actor_id} on every hand-off change, `message` {conversation_id, message} for each customer',
            'message and human reply during a hand-off, `delivery` {conversation_id, message_id, delivery_status, delivery_error},',
            '`resync` when events may have been missed (read the list again). Events written on any instance arrive on every one.',
          ].join(' '),
          querystring: EventsQuery,
          produces: ['text/event-stream'],
          response: {
            200: Type.Object({ id: Type.String(), type: Type.String() }, { additionalProperties: true }),
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const context = companyContext(request);
        const conversationId = request.query.conversation_id ?? null;
        await streamConversationEvents(
          reply,
          inbox.events,
          { companyId: context.companyId, conversationId },
          async () => (conversationId ? [statusEvent(await inbox.mustExist(context, conversationId))] : []),
          options,
        );
      },
    );

    app.get(
      '/conversations/:conversationId',
      {
        schema: {
          operationId: 'getInboxConversation',
          tags,
          summary: 'One conversation with its latest messages',
          description:
            'One conversation of the company with its hand-off status and its latest 100 messages, oldest first.',
          params: InboxParams,
          response: { 200: InboxConversationDetail, ...errors },
        },
      },
      async (request) => inbox.get(companyContext(request), request.params.conversationId),
    );

    app.post(
      '/conversations/:conversationId/assign',
      {
        preHandler: act,
        preValidation: defaultBody,
        schema: {
          operationId: 'assignConversation',
          tags,
          summary: 'Assign: handoff → assigned (developer; yourself when assignee_id is omitted)',
          description:
            'Assigns a waiting conversation to a person (a developer or above of the company; yourself when `assignee_id` is omitted); its assignee may pass it on. 409 when the agent has it (take it over instead), it is closed, or someone else already has it — of two people assigning at once, one wins.',
          params: InboxParams,
          body: AssignBody,
          response: { 200: Type.Ref(InboxConversation), ...errors },
        },
      },
      async (request) => inbox.assign(companyContext(request), request.params.conversationId, request.body),
    );

    for (const { action, operationId, summary, description } of TRANSITIONS) {
      app.post(
        `/conversations/:conversationId/${action}`,
        {
          preHandler: act,
          preValidation: defaultBody,
          schema: {
            operationId,
            tags,
            summary,
            description,
            params: InboxParams,
            body: EmptyBody,
            response: { 200: Type.Ref(InboxConversation), ...errors },
          },
        },
        async (request) => inbox[action](companyContext(request), request.params.conversationId),
      );
    }

    app.post(
      '/conversations/:conversationId/close',
      {
        preHandler: act,
        preValidation: defaultBody,
        schema: {
          operationId: 'closeInboxConversation',
          tags,
          summary: 'Close: any open status → closed; the support query is resolved by you (developer)',
          description:
            'Closes the conversation and resolves its support query (`resolution_method: human`, you as the resolver, `resolution` as its text). 409 when it is already closed.',
          params: InboxParams,
          body: CloseBody,
          response: { 200: Type.Ref(InboxConversation), ...errors },
        },
      },
      async (request) => inbox.close(companyContext(request), request.params.conversationId, request.body),
    );

    app.post(
      '/conversations/:conversationId/messages',
      {
        preHandler: act,
        schema: {
          operationId: 'replyToConversation',
          tags,
          summary: "A person's reply, delivered to the customer on the conversation's channel (developer)",
          description:
            "Stores the reply (`role: human`, you as its author), assigns a waiting conversation to you, publishes it on the conversation's events and delivers it on its channel. 201 with `delivery_status` delivered, or failed with `delivery_error` (the reply is kept). 409 when the agent has the conversation (take it over first) or it is closed.",
          params: InboxParams,
          body: ReplyBody,
          response: { 201: ReplyMessage, ...errors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await inbox.reply(companyContext(request), request.params.conversationId, request.body)),
    );
  };
}
