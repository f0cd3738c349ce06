/**
 * The channels' inbound routes at the service root (DESIGN §12), authenticated by each vendor's
 * own scheme (never x-api-key): the body is read raw (signatures cover its exact bytes), at most
 * 1 MiB, whatever its declared type. Errors are the public family's `{detail, status_code}`.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { errorResponses } from '../../http/errors.js';
import { Uuid } from '../../http/schemas.js';
import type { ChannelReply, ChannelsService } from './channels.service.js';

const MAX_BODY_BYTES = 1024 * 1024;
const errors = errorResponses('detail-status', [400, 401, 404, 413, 415, 500]);
const Params = Type.Object({ deploymentId: Uuid() });
const Acknowledged = Type.Unknown({ description: 'The acknowledgement the vendor expects (empty, or its challenge).' });

function send(reply: FastifyReply, answer: ChannelReply) {
  if (answer.contentType) reply.header('content-type', answer.contentType);
  return reply.status(answer.status).send(answer.body);
}

const raw = (body: unknown) => (Buffer.isBuffer(body) ? body : Buffer.alloc(0));

export function channelsRoutes(channels: ChannelsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    const tags = ['channels'];

    app.post(
      '/channels/slack/:deploymentId/events',
      {
        schema: {
          operationId: 'slackEvents',
          tags,
          summary: 'Slack Events API requests of a slack deployment (signed with the app signing secret)',
          params: Params,
          response: { 200: Acknowledged, ...errors },
        },
      },
      async (request, reply) =>
        send(reply, await channels.slackEvents(request.params.deploymentId, request.headers, raw(request.body))),
    );

    app.get(
      '/channels/whatsapp/:deploymentId/webhook',
      {
        schema: {
          operationId: 'whatsappWebhookVerify',
          tags,
          summary: "Meta's webhook verification handshake (hub.mode, hub.verify_token, hub.challenge)",
          params: Params,
          querystring: Type.Record(Type.String(), Type.String({ maxLength: 1000 })),
          response: { 200: Acknowledged, ...errors },
        },
      },
      async (request, reply) =>
        send(reply, await channels.whatsappHandshake(request.params.deploymentId, request.query)),
    );

    app.post(
      '/channels/whatsapp/:deploymentId/webhook',
      {
        schema: {
          operationId: 'whatsappWebhook',
          tags,
          summary: 'WhatsApp Cloud API notifications of a whatsapp deployment (X-Hub-Signature-256)',
          params: Params,
          response: { 200: Acknowledged, ...errors },
        },
      },
      async (request, reply) =>
        send(
          reply,
          await channels.whatsappNotification(request.params.deploymentId, request.headers, raw(request.body)),
        ),
    );

    app.post(
      '/channels/teams/:deploymentId/messages',
      {
        schema: {
          operationId: 'teamsMessages',
          tags,
          summary: 'Bot Framework activities of a teams deployment (JWT from the Bot Connector)',
          params: Params,
          response: { 200: Acknowledged, ...errors },
        },
      },
      async (request, reply) =>
        send(reply, await channels.teamsActivity(request.params.deploymentId, request.headers, raw(request.body))),
    );
  };
}
