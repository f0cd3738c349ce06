import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { companyContext, requireRole, userCaller } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { SkipLimit, Uuid } from '../../http/schemas.js';
import type { IdentityService } from './identity.service.js';
import {
  ApiKeyPage,
  ChatTokenPage,
  CreateApiKeyBody,
  CreateChatTokenBody,
  CreatedApiKey,
  CreatedChatToken,
  CreatedUser,
  CreateUserBody,
  Me,
} from './identity.schemas.js';

const errors = errorResponses('detail-status');
const ListQuery = Type.Object(SkipLimit(100, 1000));

export function identityRoutes(identity: IdentityService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/users/me',
      {
        schema: {
          operationId: 'getMe',
          tags: ['users'],
          summary: 'The caller, their memberships and active company',
          description: 'The user the API key belongs to, their memberships and the active company.',
          response: { 200: Me, ...errors },
        },
      },
      async (request) => identity.me(userCaller(request)),
    );

    app.post(
      '/users',
      {
        preHandler: requireRole('admin'),
        schema: {
          operationId: 'createUser',
          tags: ['users'],
          summary: 'Create a user (admin), optionally as a member; returns their first API key once',
          description:
            'Creates a user and, when asked, adds them to the active company. The answer carries their first API key, shown this once. Admins only.',
          body: CreateUserBody,
          response: { 201: CreatedUser, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await identity.createUser(companyContext(request), request.body)),
    );

    app.get(
      '/api-keys',
      {
        schema: {
          operationId: 'listApiKeys',
          tags: ['api-keys'],
          summary: "The caller's live API keys",
          description: "The caller's API keys that are not revoked, without their secrets.",
          querystring: ListQuery,
          response: { 200: ApiKeyPage, ...errors },
        },
      },
      async (request) => identity.listApiKeys(userCaller(request), request.query.skip, request.query.limit),
    );

    app.post(
      '/api-keys',
      {
        schema: {
          operationId: 'createApiKey',
          tags: ['api-keys'],
          summary: 'Create an API key for the caller (the secret is returned once)',
          description: 'Creates an API key for the caller. The secret is in this response only; store it.',
          body: CreateApiKeyBody,
          response: { 201: CreatedApiKey, ...errors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await identity.createApiKey(userCaller(request), request.body.name ?? '')),
    );

    app.delete(
      '/api-keys/:keyId',
      {
        schema: {
          operationId: 'revokeApiKey',
          tags: ['api-keys'],
          summary: "Revoke one of the caller's keys (effective at once)",
          description: "Revokes one of the caller's API keys; requests with it are refused from now on.",
          params: Type.Object({ keyId: Uuid() }),
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await identity.revokeApiKey(userCaller(request), request.params.keyId);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/chat-tokens',
      {
        preHandler: requireRole('developer'),
        schema: {
          operationId: 'listChatTokens',
          tags: ['chat-tokens'],
          summary: "The company's live chat tokens (developer)",
          description:
            'Chat tokens of the active company that are not revoked, without their secrets. Developers and admins only.',
          querystring: ListQuery,
          response: { 200: ChatTokenPage, ...errors },
        },
      },
      async (request) => identity.listChatTokens(companyContext(request), request.query.skip, request.query.limit),
    );

    app.post(
      '/chat-tokens',
      {
        preHandler: requireRole('developer'),
        schema: {
          operationId: 'createChatToken',
          tags: ['chat-tokens'],
          summary: 'Create a chat token (developer), optionally bound to one agent',
          description:
            'Creates a token for the chat family (`x-api-token`), optionally bound to one agent. The secret is in this response only.',
          body: CreateChatTokenBody,
          response: { 201: CreatedChatToken, ...errors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await identity.createChatToken(companyContext(request), request.body)),
    );

    app.delete(
      '/chat-tokens/:tokenId',
      {
        preHandler: requireRole('developer'),
        schema: {
          operationId: 'revokeChatToken',
          tags: ['chat-tokens'],
          summary: 'Revoke a chat token (developer)',
          description: 'Revokes a chat token; chat requests with it are refused from now on.',
          params: Type.Object({ tokenId: Uuid() }),
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await identity.revokeChatToken(companyContext(request), request.params.tokenId);
        return reply.code(204).send(null);
      },
    );
  };
}
