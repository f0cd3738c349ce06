/**
 * The widget's routes: the public ones under `/widget/v1/{key}` (CORS per key, visitor tokens,
 * rate limits per address and per visitor, errors `{detail, status_code}`), `GET /widget.js`,
 * and the key and snippet under `/api/public/deployments/{id}/widget` (API key).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { companyContext, requireRole } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { MINUTE, rateLimitHook } from '../../http/rate-limit.js';
import { clientSignal, statusEvent, streamConversationEvents } from '../chat/index.js';
import type { WidgetModule } from './widget.module.js';
import {
  ConversationParams,
  DeploymentParams,
  FeedbackBody,
  FeedbackResult,
  History,
  HistoryQuery,
  KeyParams,
  MessageBody,
  MessageHeaders,
  MessageResult,
  Session,
  SessionBody,
  WidgetInfo,
  WidgetKeyInfo,
} from './widget.schemas.js';
import { createWidgetCors } from './widget.cors.js';
import { visitorView } from './widget.events.js';

export interface WidgetRouteOptions {
  limits: { enabled: boolean; visitorPerMinute: number; addressPerMinute: number; sessionsPerMinute: number };
  heartbeatMs: number;
  /** The `retry:` field of event streams. */
  retryMs: number;
}

const tags = ['widget'];
const errors = errorResponses('detail-status', [400, 401, 403, 404, 409, 429, 500]);
const turnErrors = errorResponses('detail-status', [400, 401, 403, 404, 409, 429, 500, 502, 503, 504]);

/** A visitor is counted by its token (hashed); a request without one by its address. */
function visitorOf(request: FastifyRequest): string {
  const token = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
  return token ? createHash('sha256').update(token).digest('base64url').slice(0, 24) : `ip:${request.ip}`;
}

const wantsStream = (request: FastifyRequest) => /\btext\/event-stream\b/.test(request.headers.accept ?? '');

export function widgetPublicRoutes(widget: WidgetModule, options: WidgetRouteOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    const { limits } = options;
    const cors = createWidgetCors(widget.service);
    const limit = (name: string, max: number, by: (request: FastifyRequest) => string) =>
      rateLimitHook(app, by, [{ name, max, windowMs: MINUTE }], limits.enabled);
    app.addHook('onRequest', cors.cors);
    app.addHook(
      'onRequest',
      limit('widget-address', limits.addressPerMinute, (request) => request.ip),
    );
    app.addHook('onRequest', cors.enforce);
    const sessionLimit = limit('widget-sessions', limits.sessionsPerMinute, (request) => request.ip);
    const visitorLimit = limit('widget-visitor', limits.visitorPerMinute, visitorOf);
    const visitor = (request: FastifyRequest) =>
      widget.service.visitor(cors.record(request), request.headers.authorization);
    const security = [{ visitorToken: [] }];

    app.options('/:key', { schema: { hide: true } }, cors.preflight);
    app.options('/:key/*', { schema: { hide: true } }, cors.preflight);

    app.get(
      '/:key',
      {
        schema: {
          operationId: 'getWidget',
          tags,
          summary: 'The widget settings a page shows (public)',
          description:
            'Title, greeting, colours and language of the widget of this key; `available` is false while its deployment is not active.',
          params: KeyParams,
          response: { 200: WidgetInfo, ...errors },
        },
      },
      async (request) => widget.service.info(cors.record(request)),
    );

    app.post(
      '/:key/sessions',
      {
        onRequest: sessionLimit,
        // A body is optional: no body (or an empty one) is an anonymous session.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          operationId: 'createWidgetSession',
          tags,
          summary: 'Start a visitor session (anonymous, or an identified customer with user_hash)',
          description:
            'Answers a signed visitor token bound to this widget. With `user_id` and `user_hash` = HMAC-SHA256(identity_secret, user_id) the visitor is that customer (its conversations carry that user); without a valid hash it stays anonymous.',
          params: KeyParams,
          body: SessionBody,
          response: { 201: Session, ...errors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await widget.service.startSession(cors.record(request), request.body)),
    );

    app.post(
      '/:key/messages',
      {
        onRequest: visitorLimit,
        schema: {
          operationId: 'sendWidgetMessage',
          tags,
          security,
          summary: "Send the visitor's message; the answer streams (Accept: text/event-stream) or comes whole",
          description:
            "With `Accept: text/event-stream` the chat family's events (start carries the conversation id, agent_text_chunk…, chunk, end); a reconnect with `Last-Event-ID` gets the rest of the same answer. Otherwise the whole answer. 409 while the deployment is paused; another visitor's conversation is a 404.",
          params: KeyParams,
          headers: MessageHeaders,
          body: MessageBody,
          produces: ['application/json', 'text/event-stream'],
          response: {
            200: MessageResult,
            204: Type.Null({ description: 'Resumed with the id of the last event (`end`): nothing more to send' }),
            ...turnErrors,
          },
        },
      },
      async (request, reply) => {
        const record = cors.record(request);
        const who = await visitor(request);
        const lastEventId = request.headers['last-event-id'];
        if (lastEventId) return widget.turns.resume(reply, record, who, lastEventId);
        if (wantsStream(request)) return widget.turns.stream(reply, record, who, request.body, request.log);
        return widget.turns.whole(record, who, request.body, clientSignal(reply));
      },
    );

    app.get(
      '/:key/messages',
      {
        schema: {
          operationId: 'listWidgetMessages',
          tags,
          security,
          summary: "The messages of the visitor's conversation (history after a reload)",
          description:
            "Oldest first, the latest 100; without `conversation_id` the visitor's latest conversation. Another visitor's conversation is a 404.",
          params: KeyParams,
          querystring: HistoryQuery,
          response: { 200: History, ...errors },
        },
      },
      async (request) =>
        widget.turns.history(cors.record(request), await visitor(request), request.query.conversation_id),
    );

    app.get(
      '/:key/conversations/:conversationId/events',
      {
        schema: {
          operationId: 'widgetConversationEvents',
          tags,
          security,
          summary: "Events of the visitor's conversation: a person's replies and the hand-off status (SSE)",
          description:
            "Server-sent events: `status` first, then what happens in the conversation outside the visitor's own turns; `: heartbeat` comments.",
          params: ConversationParams,
          produces: ['text/event-stream'],
          response: { 200: Type.String({ description: 'text/event-stream' }), ...errors },
        },
      },
      async (request, reply) => {
        const record = cors.record(request);
        const { conversationId } = request.params;
        await widget.service.mustOwn(record, await visitor(request), conversationId);
        const caller = widget.service.caller(record);
        await streamConversationEvents(
          reply,
          widget.chat.events,
          { companyId: record.companyId, conversationId },
          async () => [statusEvent(await widget.chat.conversations.mustFind(caller, conversationId))],
          { ...options, view: visitorView },
        );
      },
    );

    app.post(
      '/:key/conversations/:conversationId/feedback',
      {
        onRequest: visitorLimit,
        schema: {
          operationId: 'rateWidgetConversation',
          tags,
          security,
          summary: "Rate the visitor's conversation 1–5 (201 first time, 200 when replacing)",
          description: "Sets the support query's customer satisfaction. Another visitor's conversation is a 404.",
          params: ConversationParams,
          body: FeedbackBody,
          response: { 200: FeedbackResult, 201: FeedbackResult, ...errors },
        },
      },
      async (request, reply) => {
        const { rating, comment } = request.body;
        const record = cors.record(request);
        const who = await visitor(request);
        const { feedback, created } = await widget.turns.feedback(
          record,
          who,
          request.params.conversationId,
          rating,
          comment ?? '',
        );
        return reply.code(created ? 201 : 200).send(feedback);
      },
    );
  };
}

/** `GET /widget.js` at the service root. */
export function widgetScriptRoute(widget: WidgetModule): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/widget.js',
      {
        schema: {
          operationId: 'widgetScript',
          tags,
          summary: 'The widget script (one script tag puts the agent on a page)',
          description:
            '`?v=<version>` (the snippet has it) is cached for a year as immutable; without it for five minutes, with an ETag.',
          querystring: Type.Object({ v: Type.Optional(Type.String({ maxLength: 64 })) }),
          produces: ['text/javascript'],
          response: {
            200: Type.String({ description: 'JavaScript' }),
            304: Type.Null({ description: 'Not modified' }),
            ...errorResponses('detail-status', [404]),
          },
        },
      },
      (request, reply) => {
        widget.script.serve(request, reply);
      },
    );
  };
}

/** The key and snippet of a web deployment (`/api/public/deployments/{id}/widget…`). */
export function widgetKeyRoutes(widget: WidgetModule): FastifyPluginAsyncTypebox {
  return async (app) => {
    const keyErrors = errorResponses('detail-status', [400, 401, 403, 404, 409, 429, 500]);
    app.get(
      '/deployments/:deploymentId/widget',
      {
        schema: {
          operationId: 'getDeploymentWidget',
          tags: ['deployments'],
          summary: "A web deployment's widget key, snippet and settings",
          description:
            'The publishable key (made on first read; not a secret), the script tag to paste into your pages, and the settings of `config.widget` with their defaults (the identity secret masked). 409 for a deployment of another channel.',
          params: DeploymentParams,
          response: { 200: WidgetKeyInfo, ...keyErrors },
        },
      },
      async (request) => widget.service.keyFor(companyContext(request), request.params.deploymentId),
    );
    app.post(
      '/deployments/:deploymentId/widget/rotate',
      {
        preHandler: requireRole('developer'),
        schema: {
          operationId: 'rotateDeploymentWidgetKey',
          tags: ['deployments'],
          summary: 'Replace the widget key; the old one stops at once (developer)',
          description: 'Answers the new key and snippet; pages with the old key get 404 from then on.',
          params: DeploymentParams,
          response: { 200: WidgetKeyInfo, ...keyErrors },
        },
      },
      async (request) => widget.service.rotate(companyContext(request), request.params.deploymentId),
    );
  };
}
