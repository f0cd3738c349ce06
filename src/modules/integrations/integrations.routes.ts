import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { companyContext } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { SkipLimit, Uuid } from '../../http/schemas.js';
import type { IntegrationsService } from './integrations.service.js';
import {
  CreateIntegrationBody,
  Integration,
  IntegrationTestResult,
  IntegrationType,
  UpdateIntegrationBody,
} from './integrations.schemas.js';

const errors = errorResponses('detail');
const tags = ['integrations'];
const Params = Type.Object({ id: Uuid() });

export function integrationsRoutes(integrations: IntegrationsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/integrations/types',
      {
        schema: {
          operationId: 'listIntegrationTypes',
          tags,
          summary: 'Kinds of integration that can be created (business messaging and ERP are not listed)',
          description: 'The integration kinds this instance can create and the config keys of each.',
          response: { 200: Type.Array(Type.Ref(IntegrationType)), ...errors },
        },
      },
      async (request) => {
        companyContext(request);
        return integrations.types();
      },
    );

    app.get(
      '/integrations',
      {
        schema: {
          operationId: 'listIntegrations',
          tags,
          summary: "The active company's integrations, newest first (secrets masked)",
          description:
            "The active company's integrations, newest first, page by page (`skip`, `limit`: default 100, max 1000); secret config values are masked.",
          querystring: Type.Object(SkipLimit(100, 1000)),
          response: { 200: Type.Array(Type.Ref(Integration)), ...errors },
        },
      },
      async (request) => integrations.list(companyContext(request), request.query.skip, request.query.limit),
    );

    app.post(
      '/integrations',
      {
        schema: {
          operationId: 'createIntegration',
          tags,
          summary: 'Create an integration (developer); the config is checked by shape, no vendor call',
          description:
            'Creates an integration of a kind with its config. The config is checked by shape only; POST /integrations/{id}/test makes a live call.',
          body: CreateIntegrationBody,
          response: { 201: Type.Ref(Integration), ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await integrations.create(companyContext(request), request.body)),
    );

    app.get(
      '/integrations/:id',
      {
        schema: {
          operationId: 'getIntegration',
          tags,
          summary: 'One integration (secrets masked)',
          description: 'One integration of the company; secret config values are masked.',
          params: Params,
          response: { 200: Type.Ref(Integration), ...errors },
        },
      },
      async (request) => integrations.get(companyContext(request), request.params.id),
    );

    app.put(
      '/integrations/:id',
      {
        schema: {
          operationId: 'updateIntegration',
          tags,
          summary: 'Update an integration (developer); only the fields and config keys sent change',
          description:
            'Changes the fields sent of an integration. Config keys sent replace the stored ones, keys left out are kept, a key sent as null is removed.',
          params: Params,
          body: UpdateIntegrationBody,
          response: { 200: Type.Ref(Integration), ...errors },
        },
      },
      async (request) => integrations.update(companyContext(request), request.params.id, request.body),
    );

    app.delete(
      '/integrations/:id',
      {
        schema: {
          operationId: 'deleteIntegration',
          tags,
          summary: 'Delete an integration (developer)',
          description: 'Deletes an integration.',
          params: Params,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await integrations.remove(companyContext(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/integrations/:id/test',
      {
        schema: {
          operationId: 'testIntegration',
          tags,
          summary:
            "Live check (developer): one cheap authenticated call to the vendor; a failure is ok: false with the vendor's words",
          description:
            "Makes one cheap authenticated call to the vendor with the stored config and reports whether it worked, with the vendor's words when it did not.",
          params: Params,
          response: { 200: IntegrationTestResult, ...errors },
        },
      },
      async (request) => integrations.test(companyContext(request), request.params.id),
    );
  };
}
