/** The collections family (`/api/public/collections…`). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { companyContext } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { SkipLimit, Uuid } from '../../http/schemas.js';
import { Collection, CreateCollectionBody, DeleteStatus, UpdateCollectionBody } from './knowledge.schemas.js';
import type { KnowledgeService } from './knowledge.service.js';

const errors = errorResponses('detail');
const tags = ['collections'];
const Params = Type.Object({ collectionId: Uuid() });

export function collectionsRoutes(knowledge: KnowledgeService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/collections',
      {
        schema: {
          operationId: 'createCollection',
          tags,
          summary: 'Create a collection',
          description: "Creates a collection in the caller's company (`company_id` must be that company).",
          body: CreateCollectionBody,
          response: { 201: Type.Ref(Collection), ...errors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await knowledge.createCollection(companyContext(request), request.body)),
    );

    app.get(
      '/collections',
      {
        config: { listCache: true },
        schema: {
          operationId: 'listCollections',
          tags,
          summary: 'Collections of the company',
          description: 'Collections of the company with their document counts, page by page (`skip`, `limit`).',
          querystring: Type.Object(SkipLimit(100, 1000)),
          response: { 200: Type.Array(Type.Ref(Collection)), ...errors },
        },
      },
      async (request) => knowledge.listCollections(companyContext(request), request.query.skip, request.query.limit),
    );

    app.get(
      '/collections/:collectionId',
      {
        schema: {
          operationId: 'getCollection',
          tags,
          summary: 'A collection',
          description: 'One collection of the company with its document count.',
          params: Params,
          response: { 200: Type.Ref(Collection), ...errors },
        },
      },
      async (request) => knowledge.getCollection(companyContext(request), request.params.collectionId),
    );

    app.put(
      '/collections/:collectionId',
      {
        schema: {
          operationId: 'updateCollection',
          tags,
          summary: 'Update name, description or privacy',
          description: 'Changes the fields sent of a collection.',
          params: Params,
          body: UpdateCollectionBody,
          response: { 200: Type.Ref(Collection), ...errors },
        },
      },
      async (request) => knowledge.updateCollection(companyContext(request), request.params.collectionId, request.body),
    );

    app.delete(
      '/collections/:collectionId',
      {
        schema: {
          operationId: 'deleteCollection',
          tags,
          summary: 'Delete a collection; its documents are detached, or deleted with ?cascade=true',
          description:
            'Deletes a collection. Its documents are detached from it and kept, or deleted with it when `cascade=true`.',
          params: Params,
          querystring: Type.Object({ cascade: Type.Boolean({ default: false }) }),
          response: { 200: DeleteStatus, ...errors },
        },
      },
      async (request) =>
        knowledge.deleteCollection(companyContext(request), request.params.collectionId, request.query.cascade),
    );
  };
}
