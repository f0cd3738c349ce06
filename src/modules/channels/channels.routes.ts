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
const Acknowledged = Type.Unknown({
  description: 'The acknowledgement the vendor expects (empty, or its challenge).',
  examples: [{ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' }],
});

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
          description:
            'The Request URL of a Slack app: the v0 signature and a five-minute timestamp window are checked first (401 otherwise); url_verification echoes the challenge; DMs, app_mention and thread follow-ups are acknowledged at once and answered in the thread from a job.',
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
          description:
            'hub.mode=subscribe with the integration’s verify_token echoes hub.challenge as text; a wrong token is a 401.',
          params: Params,
          querystring: Type.Object({
            'hub.mode': Type.Optional(Type.String({ maxLength: 100, description: 'subscribe' })),
            'hub.verify_token': Type.Optional(Type.String({ maxLength: 1000 })),
            'hub.challenge': Type.Optional(Type.String({ maxLength: 1000, description: 'echoed as text' })),
          }),
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
          description:
            'The signature over the raw body is checked first (401 otherwise); text and voice messages are acknowledged at once and answered to the sender from a job; statuses are ignored.',
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
          description:
            'The bearer JWT is checked against the OpenID metadata’s keys (issuer, audience, expiry, serviceurl claim and allowed hosts; 401 otherwise); messages are answered in the conversation from a job, conversationUpdate greets.',
          params: Params,
          response: { 200: Acknowledged, ...errors },
        },
      },
      async (request, reply) =>
        send(reply, await channels.teamsActivity(request.params.deploymentId, request.headers, raw(request.body))),
    );
  };
}
