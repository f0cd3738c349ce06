/**
 * `POST|GET|DELETE /mcp`: the Streamable HTTP transport of the MCP SDK behind Fastify. Fastify
 * authenticates (Bearer API key or chat token), rate-limits and parses the JSON body; the session's
 * web-standard transport answers with a `Response`: JSON, or an event stream (a POST's answer with
 * its progress notifications, or the GET stream of server messages), which is written to the
 * socket as it comes. `GET /.well-known/oauth-protected-resource[/mcp]`: RFC 9728 metadata.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Type } from '@sinclair/typebox';
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerKeyOrTokenAuth, type Authenticator } from '../../http/auth.js';
import { AppError, AppErrors, errorResponses } from '../../http/errors.js';
import { MINUTE, rateLimitHook } from '../../http/rate-limit.js';
import { mcpCallerOf } from './mcp.caller.js';
import { answersAsJson, jsonAnswer } from './mcp.json-answer.js';
import type { McpModule } from './mcp.module.js';
import { SessionsFullError, type McpSession } from './mcp.sessions.js';

export interface McpRouteOptions {
  publicBaseUrl: string;
  /** Requests per minute per credential (RATE_LIMIT_PUBLIC_PER_MINUTE). */
  perMinute: number;
  rateLimitsEnabled: boolean;
}

const tags = ['mcp'];
export const METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The web-standard request the transport reads (its body is Fastify's parsed JSON, passed apart). */
function webRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(', '));
  }
  return new Request(`http://mcp.local${request.url}`, { method: request.method, headers });
}

function isEventStream(response: Response): boolean {
  return Boolean(response.body && response.headers.get('content-type')?.startsWith('text/event-stream'));
}

/** Writes the transport's answer: an event stream straight to the socket, anything else through Fastify. */
async function sendResponse(reply: FastifyReply, response: Response, done: () => void): Promise<FastifyReply> {
  if (!isEventStream(response)) {
    done();
    return reply.send(response);
  }
  const headers: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
  response.headers.forEach((value, name) => (headers[name] = value));
  reply.hijack();
  const res = reply.raw;
  res.writeHead(response.status, headers);
  res.flushHeaders();
  const reader = response.body!.getReader();
  res.on('close', () => {
    reader.cancel().catch(() => undefined);
    done();
  });
  try {
    for (;;) {
      const { done: ended, value } = await reader.read();
      if (ended) break;
      if (!res.write(value)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
    }
  } catch {
    // The stream was cancelled (client gone, session closed).
  }
  res.end();
  done();
  return reply;
}

function sessionIdOf(request: FastifyRequest): string | undefined {
  const value = request.headers['mcp-session-id'];
  return typeof value === 'string' && value ? value : undefined;
}

/** -32001 with a 404: the Streamable HTTP transport's word for "initialize again". */
const sessionNotFound = () =>
  new AppError(
    404,
    'Session not found: it ended, expired, belongs to another credential, or was opened on another instance of the service (sessions live in the instance that opened them); initialize a new one',
    'NotFound',
  );

const DESCRIPTION = [
  'The Model Context Protocol over the Streamable HTTP transport (MCP 2025-06-18 and later): one JSON-RPC message or a batch per POST;',
  'an `initialize` request without `Mcp-Session-Id` opens a session whose id comes back in the `Mcp-Session-Id` header, sent on every later request.',
  'Requests are answered as application/json (the JSON-RPC response, or an array for a batch), or as text/event-stream (progress notifications, then the result) when a request carries a progress token (`params._meta.progressToken`) — the client must accept both.',
  'Authenticate with `Authorization: Bearer <API key (sk_…) or chat token (ct_…)>`; the session is scoped to that company (a bound chat token: its agent).',
  'Tools: search_knowledge, ask_agent, list_support_queries, get_support_query; resources: switchboard://collections/{id}, switchboard://documents/{id}.',
].join(' ');

const JsonRpcMessage = Type.Unsafe<unknown>({
  description: 'A JSON-RPC 2.0 request, notification or response, or a batch of them',
  oneOf: [
    { type: 'object', additionalProperties: true },
    { type: 'array', items: { type: 'object', additionalProperties: true }, maxItems: 100 },
  ],
  examples: [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search_knowledge', arguments: { query: 'How long do refunds take?' } },
    },
  ],
});

const EventStream = Type.String({
  description: 'text/event-stream: `event: message` and `data: <JSON-RPC message>` per event',
  examples: [
    'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\\"query\\":\\"refunds\\",\\"results\\":[]}"}]}}\n\n',
  ],
});

const JsonRpcAnswer = Type.Unsafe<unknown>({
  description:
    'application/json: the JSON-RPC response (an array for a batch); text/event-stream (`event: message`, `data: <JSON-RPC message>`) when a request carries a progress token',
  oneOf: [
    { type: 'object', additionalProperties: true },
    { type: 'array', items: { type: 'object', additionalProperties: true } },
    { type: 'string' },
  ],
  examples: [
    {
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: '{"query":"refunds","results":[]}' }] },
    },
  ],
});

const SessionHeaders = Type.Object({
  'mcp-session-id': Type.Optional(Type.String({ maxLength: 200, description: 'The session, from initialize' })),
});

export function mcpRoutes(mcp: McpModule, auth: Authenticator, options: McpRouteOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    const metadataUrl = `${options.publicBaseUrl}${METADATA_PATH}/mcp`;
    const credential = (request: FastifyRequest) =>
      createHash('sha256')
        .update(request.headers.authorization ?? request.ip)
        .digest('base64url')
        .slice(0, 24);
    app.addHook(
      'onRequest',
      rateLimitHook(
        app,
        credential,
        [{ name: 'mcp', max: options.perMinute, windowMs: MINUTE }],
        options.rateLimitsEnabled,
      ),
    );
    app.addHook('onRequest', bearerKeyOrTokenAuth(auth, metadataUrl));
    app.addHook('onRoute', (route) => {
      route.schema = { security: [{ mcpBearer: [] }], ...route.schema };
    });
    // Open streams end when the server stops (they would hold it open).
    app.addHook('preClose', async () => mcp.sessions.closeAll());

    async function handle(request: FastifyRequest, reply: FastifyReply, session: McpSession): Promise<never> {
      const done = mcp.sessions.use(session);
      try {
        const response = await session.transport.handleRequest(webRequest(request), { parsedBody: request.body });
        if (request.method === 'POST' && isEventStream(response) && answersAsJson(request.body)) {
          // No progress token: the responses as one JSON body (the stream is in process, read whole).
          const answer = await jsonAnswer(response).finally(done);
          if (!answer) throw sessionNotFound();
          return reply.code(answer.status).headers(answer.headers).send(answer.body) as never;
        }
        return (await sendResponse(reply, response, done)) as never;
      } catch (error) {
        done();
        throw error;
      }
    }

    function existing(request: FastifyRequest): McpSession {
      const id = sessionIdOf(request);
      if (!id) throw AppErrors.badRequest('Bad Request: Mcp-Session-Id header is required (initialize first)');
      const session = mcp.sessions.find(id, mcpCallerOf(request.caller));
      if (!session) throw sessionNotFound();
      return session;
    }

    const errors = errorResponses('jsonrpc', [400, 401, 403, 404, 406, 413, 415, 429, 503]);

    app.post(
      '/mcp',
      {
        schema: {
          operationId: 'mcpPost',
          tags,
          summary: 'Send MCP messages (initialize, tools, resources…)',
          description: DESCRIPTION,
          headers: SessionHeaders,
          body: JsonRpcMessage,
          produces: ['text/event-stream', 'application/json'],
          response: {
            200: JsonRpcAnswer,
            202: Type.Null({ description: 'Notifications or responses only: accepted, nothing to answer' }),
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const caller = mcpCallerOf(request.caller);
        if (sessionIdOf(request)) return handle(request, reply, existing(request));
        const messages = Array.isArray(request.body) ? request.body : [request.body];
        if (!messages.some((message) => isInitializeRequest(message)))
          throw AppErrors.badRequest('Bad Request: no Mcp-Session-Id header; the first request must be initialize');
        let session: McpSession;
        try {
          session = await mcp.sessions.open(caller, () => mcp.buildServer(caller));
        } catch (error) {
          if (error instanceof SessionsFullError) throw AppErrors.unavailable(error.message, 30);
          throw error;
        }
        return handle(request, reply, session);
      },
    );

    app.get(
      '/mcp',
      {
        schema: {
          operationId: 'mcpStream',
          tags,
          summary: "Open the session's stream of server messages",
          description:
            'text/event-stream of the messages the server sends outside a request (list changes). One stream per session; `Accept: text/event-stream` and `Mcp-Session-Id` are required.',
          headers: SessionHeaders,
          produces: ['text/event-stream'],
          response: { 200: EventStream, ...errors },
        },
      },
      async (request, reply) => handle(request, reply, existing(request)),
    );

    app.delete(
      '/mcp',
      {
        schema: {
          operationId: 'mcpEndSession',
          tags,
          summary: 'End an MCP session',
          description: 'Ends the session named by `Mcp-Session-Id`; later requests with it get 404.',
          headers: SessionHeaders,
          response: { 200: Type.Null({ description: 'The session ended' }), ...errors },
        },
      },
      async (request, reply) => handle(request, reply, existing(request)),
    );
  };
}

const ProtectedResource = Type.Object(
  {
    resource: Type.String({ examples: ['https://switchboard.example.com/mcp'] }),
    authorization_servers: Type.Array(Type.String()),
    bearer_methods_supported: Type.Array(Type.String(), { examples: [['header']] }),
    resource_name: Type.String({ examples: ['Switchboard'] }),
    resource_documentation: Type.String({ examples: ['https://switchboard.example.com/docs'] }),
  },
  { description: 'Protected resource metadata (RFC 9728)' },
);

/** The protected resource metadata of `/mcp` (RFC 9728), at the root and at the path-aware address. */
export function mcpMetadataRoutes(publicBaseUrl: string): FastifyPluginAsyncTypebox {
  return async (app) => {
    const metadata = () => ({
      resource: `${publicBaseUrl}/mcp`,
      // Keys and tokens are issued by the platform (console, API, CLI), not by an OAuth server.
      authorization_servers: [] as string[],
      bearer_methods_supported: ['header'],
      resource_name: 'Switchboard',
      resource_documentation: `${publicBaseUrl}/docs`,
    });
    for (const [url, operationId] of [
      [METADATA_PATH, 'mcpProtectedResource'],
      [`${METADATA_PATH}/mcp`, 'mcpProtectedResourceForPath'],
    ] as const) {
      app.get(
        url,
        {
          schema: {
            operationId,
            tags,
            security: [],
            summary: 'How MCP clients authenticate to /mcp',
            description:
              'OAuth 2.0 protected resource metadata (RFC 9728) of the MCP endpoint, as the MCP authorization spec asks: send an API key or a chat token as `Authorization: Bearer …` (no authorization server: both are issued by the platform).',
            response: { 200: ProtectedResource },
          },
        },
        async () => metadata(),
      );
    }
  };
}
