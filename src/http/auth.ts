/**
 * Authentication hooks (x-api-key or the console's session cookie, x-api-token) and role guards.
 * Missing or invalid credentials → 401; a cookie-authenticated write without its CSRF token → 403;
 * a valid caller without the right → 403.
 */
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { hasRole, type Role } from '../lib/roles.js';
import type { Caller, ChatCaller, CompanyContext, UserCaller } from './caller.js';
import { AppErrors } from './errors.js';
import { csrfProblem, sessionIdOf } from './session-cookie.js';

export interface Authenticator {
  authenticateApiKey(secret: string): Promise<UserCaller | null>;
  authenticateChatToken(secret: string): Promise<ChatCaller | null>;
  authenticateSession(sessionId: string): Promise<UserCaller | null>;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * `x-api-key`, or else the console's session cookie (`publicBaseUrl` names this service's own
 * origin for the CSRF check). A key that is sent wins over a cookie.
 */
export function apiKeyAuth(auth: Authenticator, publicBaseUrl: string): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const secret = headerValue(request, 'x-api-key');
    if (secret) {
      const caller = await auth.authenticateApiKey(secret);
      if (!caller) throw AppErrors.unauthorized('Invalid or revoked API key');
      request.caller = caller;
      return;
    }
    const sessionId = sessionIdOf(request);
    if (!sessionId) throw AppErrors.unauthorized('Missing x-api-key header');
    const caller = await auth.authenticateSession(sessionId);
    if (!caller) throw AppErrors.unauthorized('Your session has ended: sign in again');
    const forgery = csrfProblem(request, sessionId, publicBaseUrl);
    if (forgery) throw AppErrors.forbidden(forgery);
    request.caller = caller;
  };
}

/**
 * An API key as ElevenLabs' clients send theirs (`xi-api-key`), or `x-api-key`: the
 * ElevenLabs-compatible `/elevenlabs`. Missing or unknown → 401.
 */
export function xiApiKeyAuth(auth: Authenticator): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const secret = headerValue(request, 'xi-api-key') ?? headerValue(request, 'x-api-key');
    if (!secret) throw AppErrors.unauthorized('Missing xi-api-key header: send your API key as xi-api-key');
    const caller = await auth.authenticateApiKey(secret);
    if (!caller) throw AppErrors.unauthorized('Invalid or revoked API key');
    request.caller = caller;
  };
}

export function chatTokenAuth(auth: Authenticator): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const secret = headerValue(request, 'x-api-token');
    if (!secret) throw AppErrors.unauthorized('Missing x-api-token header');
    const caller = await auth.authenticateChatToken(secret);
    if (!caller) throw AppErrors.unauthorized('Invalid or revoked API token');
    request.caller = caller;
  };
}

/**
 * A chat token as OpenAI's clients send a key (`Authorization: Bearer <token>`), or `x-api-token`:
 * the OpenAI-compatible `/v1`. Missing or unknown → 401 (rendered as OpenAI's `invalid_api_key`).
 */
export function bearerChatTokenAuth(auth: Authenticator): onRequestAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(headerValue(request, 'authorization') ?? '')?.[1];
    const secret = headerValue(request, 'x-api-token') ?? bearer;
    if (!secret) {
      throw AppErrors.unauthorized(
        'You did not provide an API key: send your chat token as Authorization: Bearer <token> (or x-api-token)',
      );
    }
    const caller = await auth.authenticateChatToken(secret);
    if (!caller) throw AppErrors.unauthorized('Incorrect API key provided: the chat token is unknown or revoked');
    request.caller = caller;
  };
}

export function userCaller(request: FastifyRequest): UserCaller {
  const caller: Caller | null = request.caller;
  if (caller?.kind !== 'user') throw AppErrors.unauthorized('Missing x-api-key header');
  return caller;
}

export function chatCaller(request: FastifyRequest): ChatCaller {
  const caller: Caller | null = request.caller;
  if (caller?.kind !== 'chat') throw AppErrors.unauthorized('Missing x-api-token header');
  return caller;
}

/** The caller's company context; 403 when the caller has no active company. */
export function companyContext(request: FastifyRequest): CompanyContext {
  const caller = userCaller(request);
  if (!caller.companyId || !caller.role) {
    throw AppErrors.forbidden('No active company: create a company or accept an invitation first');
  }
  return { userId: caller.userId, companyId: caller.companyId, role: caller.role };
}

/** preHandler guard: the caller's role in the active company must be at least `role`. */
export function requireRole(role: Role): preHandlerAsyncHookHandler {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const context = companyContext(request);
    if (!hasRole(context.role, role)) {
      throw AppErrors.forbidden(`This operation needs the ${role} role; your role is ${context.role}`);
    }
  };
}

/**
 * `Authorization: Bearer <API key or chat token>` (the MCP endpoint): an `sk_` key is an API key,
 * anything else a chat token. Missing or unknown → 401 with `WWW-Authenticate: Bearer
 * resource_metadata="<challenge>"` (the MCP authorization spec; RFC 9728 §5.1).
 */
export function bearerKeyOrTokenAuth(auth: Authenticator, resourceMetadataUrl: string): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(headerValue(request, 'authorization') ?? '')?.[1];
    const challenge = (error?: string) =>
      reply.header(
        'www-authenticate',
        `Bearer ${error ? `error="${error}", ` : ''}resource_metadata="${resourceMetadataUrl}"`,
      );
    if (!bearer) {
      challenge();
      throw AppErrors.unauthorized('Missing Authorization header: send Authorization: Bearer <API key or chat token>');
    }
    const caller = bearer.startsWith('sk_')
      ? await auth.authenticateApiKey(bearer)
      : await auth.authenticateChatToken(bearer);
    if (!caller) {
      challenge('invalid_token');
      throw AppErrors.unauthorized('Invalid or revoked API key or chat token');
    }
    request.caller = caller;
  };
}
