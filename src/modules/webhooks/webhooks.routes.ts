import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { companyContext } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Uuid } from '../../http/schemas.js';
import type { WebhooksService } from './webhooks.service.js';
import {
  CreatedWebhook,
  CreateWebhookBody,
  DeliveriesQuery,
  Delivery,
  DeliveryPage,
  EventTypeInfo,
  RotatedSecret,
  UpdateWebhookBody,
  Webhook,
} from './webhooks.schemas.js';

const errors = errorResponses('detail-status');
const tags = ['webhooks'];
const Params = Type.Object({ id: Uuid() });
const DeliveryParams = Type.Object({ id: Uuid(), delivery_id: Uuid() });

export function webhooksRoutes(webhooks: WebhooksService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/webhooks/event-types',
      {
        schema: {
          operationId: 'listWebhookEventTypes',
          description:
            'Every event type an endpoint may subscribe to, what it means and a payload of it as delivered (`data` is the resource as the API shows it).',
          tags,
          summary: 'Event types a webhook can subscribe to, each with a description and an example payload',
          response: { 200: Type.Array(EventTypeInfo), ...errors },
        },
      },
      async (request) => {
        companyContext(request);
        return webhooks.eventTypes();
      },
    );

    app.get(
      '/webhooks',
      {
        schema: {
          operationId: 'listWebhooks',
          description:
            'The webhook endpoints of the active company, newest first. Secrets are never shown after creation or rotation.',
          tags,
          summary: "The active company's webhook endpoints, newest first (never their secrets)",
          response: { 200: Type.Array(Type.Ref(Webhook)), ...errors },
        },
      },
      async (request) => webhooks.list(companyContext(request)),
    );

    app.post(
      '/webhooks',
      {
        schema: {
          operationId: 'createWebhook',
          description:
            'Creates an endpoint that receives the events it subscribes to, signed the Standard Webhooks way. The answer holds the signing secret (whsec_…); it is never shown again.',
          tags,
          summary: 'Create a webhook endpoint (developer); the answer shows its signing secret, this once',
          body: CreateWebhookBody,
          response: { 201: CreatedWebhook, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await webhooks.create(companyContext(request), request.body)),
    );

    app.get(
      '/webhooks/:id',
      {
        schema: {
          operationId: 'getWebhook',
          description: 'One webhook endpoint of the company.',
          tags,
          summary: 'One webhook endpoint',
          params: Params,
          response: { 200: Type.Ref(Webhook), ...errors },
        },
      },
      async (request) => webhooks.get(companyContext(request), request.params.id),
    );

    app.patch(
      '/webhooks/:id',
      {
        schema: {
          operationId: 'updateWebhook',
          description:
            'Changes the fields sent. Enabling an endpoint the platform disabled clears its disabled_reason; failed deliveries can then be retried.',
          tags,
          summary: 'Change a webhook endpoint (developer): url, events, description, enabled',
          params: Params,
          body: UpdateWebhookBody,
          response: { 200: Type.Ref(Webhook), ...errors },
        },
      },
      async (request) => webhooks.update(companyContext(request), request.params.id, request.body),
    );

    app.delete(
      '/webhooks/:id',
      {
        schema: {
          operationId: 'deleteWebhook',
          description: 'Deletes the endpoint; its pending deliveries are not sent and its delivery log goes with it.',
          tags,
          summary: 'Delete a webhook endpoint and its delivery log (developer)',
          params: Params,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await webhooks.remove(companyContext(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/webhooks/:id/rotate-secret',
      {
        schema: {
          operationId: 'rotateWebhookSecret',
          description:
            "Replaces the signing secret. For 24 hours deliveries carry two signatures (the new and the previous secret's), so receivers switch without losing a message.",
          tags,
          summary: 'A new signing secret (developer), shown this once; the previous one also signs for 24 hours',
          params: Params,
          response: { 200: RotatedSecret, ...errors },
        },
      },
      async (request) => webhooks.rotateSecret(companyContext(request), request.params.id),
    );

    app.post(
      '/webhooks/:id/test',
      {
        schema: {
          operationId: 'testWebhook',
          description:
            'Queues a webhook.test message to this endpoint alone: one attempt, no retries, recorded in the delivery log like any other.',
          tags,
          summary: 'Send a webhook.test message to this endpoint (developer): one attempt, in the delivery log',
          params: Params,
          response: { 202: Type.Ref(Delivery), ...errors },
        },
      },
      async (request, reply) => reply.code(202).send(await webhooks.test(companyContext(request), request.params.id)),
    );

    app.get(
      '/webhooks/:id/deliveries',
      {
        schema: {
          operationId: 'listWebhookDeliveries',
          description:
            "The endpoint's deliveries, newest first, with every attempt: when, the receiver's status code, latency and error.",
          tags,
          summary: 'The delivery log of an endpoint, newest first: status, attempts (response code, latency, error)',
          params: Params,
          querystring: DeliveriesQuery,
          response: { 200: DeliveryPage, ...errors },
        },
      },
      async (request) => webhooks.deliveries(companyContext(request), request.params.id, request.query),
    );

    app.post(
      '/webhooks/:id/deliveries/:delivery_id/retry',
      {
        schema: {
          operationId: 'retryWebhookDelivery',
          description:
            'Makes the delivery due now with the same webhook-id (receivers deduplicate on it). A failed or succeeded delivery gets one more attempt; a pending one is tried at once and keeps its schedule.',
          tags,
          summary: 'Send a delivery again now, with the same webhook-id (developer)',
          params: DeliveryParams,
          response: { 202: Type.Ref(Delivery), ...errors },
        },
      },
      async (request, reply) =>
        reply
          .code(202)
          .send(await webhooks.retry(companyContext(request), request.params.id, request.params.delivery_id)),
    );
  };
}
