/**
 * buildApp(container): the Fastify application without listening. Core plugins, the error and
 * 404 handlers, operational routes, then one encapsulated scope per family with its auth and
 * rate-limit hooks.
 */
import fastifyRateLimit from '@fastify/rate-limit';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Container } from './container.js';
import { pingDatabase } from './db/database.js';
import { apiKeyAuth, bearerChatTokenAuth, chatTokenAuth, xiApiKeyAuth, type Authenticator } from './http/auth.js';
import './http/caller.js';
import {
  AppError,
  ERROR_NAMES,
  ErrorBodies,
  errorResponses,
  renderError,
  shapeForPath,
  truncateQuoted,
} from './http/errors.js';
import { registerConsole } from './http/console.js';
import { accessLogRequest } from './http/access-log.js';
import { registerHttpLimits, serverTimeouts } from './http/limits.js';
import { listCacheHooks } from './http/list-cache.js';
import { CpuBusyError } from './lib/cpu-pool.js';
import { metricsTokenAuth, registerMetrics } from './http/metrics.js';
import { finishOpenApiDocument, transformRouteSchema } from './http/openapi.js';
import { HOUR, MINUTE, rateLimitHook } from './http/rate-limit.js';
import { csrfOriginCheck } from './http/session-cookie.js';
import { handleClientError, handleFrameworkError } from './http/transport-errors.js';
import { lazySerializers } from './http/serialization.js';
import { createValidatorCompiler, describeValidationError, refuseUnsafeInput } from './http/validation.js';
import { Agent, agentsRoutes, Region } from './modules/agents/index.js';
import { channelsRoutes } from './modules/channels/index.js';
import { chatRoutes, Conversation, Message as ChatMessage } from './modules/chat/index.js';
import { companiesRoutes, Company, Invitation, Member } from './modules/companies/index.js';
import { deploymentsRoutes } from './modules/deployments/index.js';
import { ApiKey, ChatToken, identityRoutes, sessionRoutes, signInRoutes, User } from './modules/identity/index.js';
import { InboxConversation, InboxMessage, inboxRoutes } from './modules/inbox/index.js';
import { INTEGRATIONS_SCHEMAS, integrationsRoutes } from './modules/integrations/index.js';
import { collectionsRoutes, documentsRoutes, KNOWLEDGE_SCHEMAS } from './modules/knowledge/index.js';
import { mcpMetadataRoutes, mcpRoutes } from './modules/mcp/index.js';
import { openAiRoutes } from './modules/openai-api/index.js';
import { elevenLabsRoutes } from './modules/elevenlabs-api/index.js';
import { supportQueriesRoutes } from './modules/support-queries/index.js';
import { teamNotificationsRoutes } from './modules/team-notifications/index.js';
import { voiceAgentsRoutes, voiceRespondRoutes, voiceSpeechRoutes } from './modules/voice-agents/index.js';
import { widgetKeyRoutes, widgetPublicRoutes, widgetScriptRoute } from './modules/widget/index.js';
import { WEBHOOKS_SCHEMAS, webhooksRoutes } from './modules/webhooks/index.js';
import { Workflow, workflowsRoutes } from './modules/workflows/index.js';

/** Schemas with an $id, referenced by Type.Ref from routes and listed in the OpenAPI components. */
const SHARED_SCHEMAS = [
  ...Object.values(ErrorBodies),
  Company,
  Member,
  Invitation,
  User,
  ApiKey,
  ChatToken,
  Agent,
  Region,
  Workflow,
  Conversation,
  ChatMessage,
  InboxConversation,
  InboxMessage,
];

/** A caller's request id is kept when it is short and plain; otherwise the request gets a new one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdOf(request: { headers: IncomingHttpHeaders }): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: { statusCode: number; code: string; message: string },
) {
  return reply.status(error.statusCode).send(renderError(shapeForPath(request.url), error, request.url));
}

function handleError(
  this: FastifyInstance,
  error: FastifyError | AppError,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  if (error instanceof AppError) {
    if (error.retryAfterSeconds !== undefined)
      reply.header('retry-after', Math.max(1, Math.ceil(error.retryAfterSeconds)));
    return sendError(request, reply, error);
  }
  if (error instanceof CpuBusyError) {
    // The CPU pool's queue for this kind of work is full (or the instance is stopping).
    reply.header('retry-after', String(error.retryAfterSeconds));
    return sendError(request, reply, { statusCode: 503, code: 'ServiceUnavailable', message: error.message });
  }
  if (error.validation) {
    const message = describeValidationError(error.validationContext, error.validation as never);
    return sendError(request, reply, { statusCode: 400, code: 'ValidationError', message });
  }
  const status = error.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return sendError(request, reply, {
      statusCode: status,
      code: ERROR_NAMES[status] ?? 'Error',
      message: error.message,
    });
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendError(request, reply, { statusCode: 500, code: 'InternalServerError', message: 'Internal server error' });
}

export async function buildApp(container: Container): Promise<FastifyInstance> {
  const { config } = container;
  const httpLimits = {
    ...config.http,
    maxBodyBytes: Math.max(config.knowledge.maxUploadBytes, config.chat.maxAudioBytes) + 64 * 1024,
  };
  const app = Fastify({
    // The access log records the path and a scrubbed query, never the URL whole (src/http/access-log.ts).
    loggerInstance: container.log.child({}, { serializers: { req: accessLogRequest } }) as FastifyBaseLogger,
    trustProxy: true,
    forceCloseConnections: 'idle',
    // Request, header and body time limits (src/http/limits.ts).
    ...serverTimeouts(httpLimits),
    return503OnClosing: true,
    // Router and HTTP-parser errors in the family's error shape (src/http/transport-errors.ts).
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
    ajv: { customOptions: { coerceTypes: 'array' } },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
    // genReqId reads x-request-id itself so that an unsafe value is replaced rather than logged.
    requestIdHeader: false,
    genReqId: requestIdOf,
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerHttpLimits(app, httpLimits);
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // While closing, answer in-flight requests with `Connection: close` so that their keep-alive
  // sockets do not hold the server open after the response.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  // List pages per company, served from a coherent cache (routes with `config.listCache`).
  const listPages = listCacheHooks(container.listPages);
  app.addHook('preHandler', listPages.preHandler);
  app.addHook('onSend', listPages.onSend);
  app.setValidatorCompiler(createValidatorCompiler());
  app.setErrorHandler(handleError);
  // NUL characters, unpaired surrogates and deep nesting are refused in every route's input.
  app.addHook('preValidation', refuseUnsafeInput);
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, {
      statusCode: 404,
      code: 'NotFound',
      message: `Route not found: ${request.method} ${truncateQuoted(request.url.split('?')[0] ?? '')}`,
    }),
  );
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  for (const schema of KNOWLEDGE_SCHEMAS) app.addSchema(schema);
  for (const schema of INTEGRATIONS_SCHEMAS) app.addSchema(schema);
  for (const schema of WEBHOOKS_SCHEMAS) app.addSchema(schema);

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Switchboard',
        version: '0.1.0',
        description: 'Open AI-agent platform: knowledge base, agents, chat, deployments, support insights.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        contact: { name: 'Switchboard maintainers', url: `${config.publicBaseUrl}/docs` },
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'API key of a company (sk_…)' },
          apiToken: { type: 'apiKey', in: 'header', name: 'x-api-token', description: 'Chat token (ct_…)' },
          chatBearer: { type: 'http', scheme: 'bearer', description: 'Chat token (ct_…) as an OpenAI API key (/v1)' },
          mcpBearer: { type: 'http', scheme: 'bearer', description: 'API key (sk_…) or chat token (ct_…) (/mcp)' },
          xiApiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'xi-api-key',
            description: 'API key (sk_…) as an ElevenLabs key (/elevenlabs)',
          },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when the instance sets one' },
          visitorToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'A widget visitor token (POST /widget/v1/{key}/sessions)',
          },
        },
      },
    },
    transform: transformRouteSchema,
    transformObject: (document) =>
      'openapiObject' in document
        ? finishOpenApiDocument(document.openapiObject as Record<string, unknown>, {
            serverUrl: config.publicBaseUrl,
            metricsTokenRequired: config.metricsToken !== undefined,
          })
        : document.swaggerObject,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });
  await app.register(fastifyRateLimit, {
    global: false,
    enableDraftSpec: true,
    skipOnError: true,
    ...(container.redis ? { redis: container.redis, nameSpace: 'switchboard:ratelimit:' } : {}),
  });
  const metrics = registerMetrics(app, container.metrics).registry;
  container.metrics.watchSearchIndexes(() => container.knowledge.searchIndexStats());

  const ops = { tags: ['operations'] };
  app.get(
    '/healthz',
    {
      schema: {
        ...ops,
        operationId: 'healthz',
        summary: 'The process is up',
        description: 'Answers 200 while the process runs; it checks nothing else (a liveness probe).',
        response: { 200: Type.Object({ status: Type.Literal('ok') }, { description: 'The process is up.' }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        ...ops,
        operationId: 'readyz',
        summary: 'The database answers',
        description:
          'Answers 200 when the database answers a ping, else 503 (a readiness probe: take the instance out of rotation).',
        response: {
          200: Type.Object({ status: Type.String({ examples: ['ready'] }) }, { description: 'The database answers.' }),
          503: Type.Object(
            {
              status: Type.String({ examples: ['unavailable'] }),
              detail: Type.String({ examples: ['database unreachable'] }),
            },
            { description: 'The database does not answer.' },
          ),
        },
      },
    },
    async (_request, reply) =>
      (await pingDatabase(container.db))
        ? { status: 'ready' }
        : reply.code(503).send({ status: 'unavailable', detail: 'database unreachable' }),
  );
  app.get(
    '/metrics',
    {
      onRequest: metricsTokenAuth(config.metricsToken),
      schema: {
        ...ops,
        operationId: 'metrics',
        summary: 'Prometheus metrics',
        description:
          'Metrics in the Prometheus text format: HTTP latency per route, rate-limit refusals, job durations and queue depth, chat turns, tool calls, model latency and tokens, database pool use, process metrics. With METRICS_TOKEN set, send `Authorization: Bearer <METRICS_TOKEN>`.',
        produces: ['text/plain'],
        response: {
          200: Type.String({
            description: 'The metrics, Prometheus text exposition format 0.0.4.',
            examples: [
              '# HELP switchboard_chat_turns_total Chat turns answered\nswitchboard_chat_turns_total{finish="stop",provider="openai"} 12\n',
            ],
          }),
          ...(config.metricsToken ? errorResponses('detail-status', [401]) : {}),
        },
      },
    },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.metrics()),
  );
  app.get(
    '/openapi.json',
    {
      schema: {
        ...ops,
        operationId: 'openapi',
        summary: 'This OpenAPI 3.1 document',
        description: 'The OpenAPI 3.1 description of every operation of this instance, as served at /docs.',
        response: {
          200: Type.Unsafe<unknown>(
            Type.Object(
              { openapi: Type.String({ examples: ['3.1.0'] }) },
              { additionalProperties: true, description: 'The OpenAPI document.' },
            ),
          ),
        },
      },
    },
    async () => app.swagger(),
  );

  // The web console (static files) at /console; the root leads there.
  registerConsole(app);
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302));

  const limits = config.rateLimits;
  // API keys, chat tokens, and the console's session cookie where an API key is expected.
  const auth: Authenticator = {
    authenticateApiKey: (secret) => container.identity.authenticateApiKey(secret),
    authenticateChatToken: (secret) => container.identity.authenticateChatToken(secret),
    authenticateSession: (sessionId) => container.signIn.authenticateSession(sessionId),
  };
  // Signing in: no credential yet, so counted per client address.
  await app.register(
    async (signIn) => {
      const windows = [{ name: 'sign-in', max: config.signIn.perMinute, windowMs: MINUTE }];
      signIn.addHook('onRequest', rateLimitHook(signIn, 'address', windows, limits.enabled));
      signIn.addHook('onRequest', csrfOriginCheck(config.publicBaseUrl));
      await signIn.register(signInRoutes(container.signIn, config.publicBaseUrl));
    },
    { prefix: '/api/public' },
  );
  await app.register(
    async (publicApi) => {
      publicApi.addHook(
        'onRequest',
        rateLimitHook(
          publicApi,
          'x-api-key',
          [{ name: 'public', max: limits.publicPerMinute, windowMs: MINUTE }],
          limits.enabled,
        ),
      );
      publicApi.addHook('onRequest', apiKeyAuth(auth, config.publicBaseUrl));
      publicApi.addHook('onRoute', (route) => {
        route.schema = { security: [{ apiKey: [] }], ...route.schema };
      });
      await publicApi.register(companiesRoutes(container.companies));
      await publicApi.register(identityRoutes(container.identity));
      await publicApi.register(sessionRoutes(container.signIn, config.publicBaseUrl));
      await publicApi.register(
        documentsRoutes(container.knowledge, { maxUploadBytes: config.knowledge.maxUploadBytes }),
      );
      await publicApi.register(collectionsRoutes(container.knowledge));
      await publicApi.register(agentsRoutes(container.agents));
      await publicApi.register(deploymentsRoutes(container.deployments));
      await publicApi.register(widgetKeyRoutes(container.widget));
      await publicApi.register(workflowsRoutes(container.workflows));
      await publicApi.register(integrationsRoutes(container.integrations));
      await publicApi.register(webhooksRoutes(container.webhooks));
      await publicApi.register(voiceAgentsRoutes(container.voiceAgents));
      await publicApi.register(voiceSpeechRoutes(container.voiceSpeech));
      await publicApi.register(voiceRespondRoutes(container.voiceRespond, container.voiceSpeech.maxAudioBytes));
      await publicApi.register(
        inboxRoutes(container.inbox, { heartbeatMs: config.chat.heartbeatMs, retryMs: config.chat.streamRetryMs }),
      );
    },
    { prefix: '/api/public' },
  );

  await app.register(
    async (chatApi) => {
      chatApi.addHook('onRequest', chatTokenAuth(auth));
      chatApi.addHook('onRoute', (route) => {
        route.schema = { security: [{ apiToken: [] }], ...route.schema };
      });
      await chatApi.register(
        chatRoutes(container.chat, {
          limits,
          heartbeatMs: config.chat.heartbeatMs,
          retryMs: config.chat.streamRetryMs,
          maxAudioBytes: config.chat.maxAudioBytes,
        }),
      );
    },
    { prefix: '/api/v1/chat' },
  );

  // OpenAI's protocol for OpenAI clients: a chat token as the Bearer key, OpenAI's error shape.
  await app.register(
    async (openAi) => {
      openAi.addHook('onRequest', bearerChatTokenAuth(auth));
      openAi.addHook('onRoute', (route) => {
        route.schema = { security: [{ chatBearer: [] }, { apiToken: [] }], ...route.schema };
      });
      await openAi.register(openAiRoutes(container.openAi, { limits, heartbeatMs: config.chat.heartbeatMs }));
    },
    { prefix: '/v1' },
  );

  // The web widget: its script, and public routes per publishable key (CORS for the key's origins,
  // visitor tokens; no API key). Errors in the `{detail, status_code}` shape.
  await app.register(widgetScriptRoute(container.widget));
  await app.register(
    async (widget) => {
      widget.addHook('onRoute', (route) => {
        if (route.method !== 'OPTIONS') route.schema = { security: [], ...route.schema };
      });
      await widget.register(
        widgetPublicRoutes(container.widget, {
          limits: { enabled: limits.enabled, ...config.widget },
          heartbeatMs: config.chat.heartbeatMs,
          retryMs: config.chat.streamRetryMs,
        }),
      );
    },
    { prefix: '/widget/v1' },
  );

  // ElevenLabs' protocol for ElevenLabs' SDKs: an API key as `xi-api-key`, ElevenLabs' error shape;
  // the public family's rate limit (the same key's counter).
  await app.register(
    async (elevenLabs) => {
      elevenLabs.addHook(
        'onRequest',
        rateLimitHook(
          elevenLabs,
          'x-api-key',
          [{ name: 'public', max: limits.publicPerMinute, windowMs: MINUTE }],
          limits.enabled,
        ),
      );
      elevenLabs.addHook('onRequest', xiApiKeyAuth(auth));
      elevenLabs.addHook('onRoute', (route) => {
        route.schema = { security: [{ xiApiKey: [] }, { apiKey: [] }], ...route.schema };
      });
      await elevenLabs.register(elevenLabsRoutes(container.elevenLabs));
    },
    { prefix: '/elevenlabs' },
  );

  // The Model Context Protocol for MCP clients: an API key or chat token as the Bearer credential,
  // JSON-RPC errors; the protected resource metadata (RFC 9728) open to all.
  await app.register(
    mcpRoutes(container.mcp, auth, {
      publicBaseUrl: config.publicBaseUrl,
      perMinute: limits.publicPerMinute,
      rateLimitsEnabled: limits.enabled,
    }),
  );
  await app.register(mcpMetadataRoutes(config.publicBaseUrl));

  // Channels: vendors' inbound routes at the root, each verified by the vendor's own scheme.
  await app.register(channelsRoutes(container.channels));

  // Support queries and team notifications: full paths, one scope so both families share the
  // per-key counters (1000/hour and a burst of 100/minute).
  await app.register(async (insights) => {
    const windows = [
      { name: 'insights-hour', max: limits.insightsPerHour, windowMs: HOUR },
      { name: 'insights-minute', max: limits.insightsPerMinute, windowMs: MINUTE },
    ];
    insights.addHook('onRequest', rateLimitHook(insights, 'x-api-key', windows, limits.enabled));
    insights.addHook('onRequest', apiKeyAuth(auth, config.publicBaseUrl));
    insights.addHook('onRoute', (route) => {
      route.schema = { security: [{ apiKey: [] }], ...route.schema };
    });
    await insights.register(supportQueriesRoutes(container.supportQueries));
    await insights.register(teamNotificationsRoutes(container.notifications));
  });

  return app;
}
