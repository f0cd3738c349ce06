import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { lazySerializers } from './serialization.js';

describe('lazySerializers', () => {
  it("serializes as Fastify's own compiler does: fields outside the schema dropped, shared schemas resolved", async () => {
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializers() } } });
    app.addSchema({ $id: 'Item', type: 'object', properties: { id: { type: 'string' }, n: { type: 'integer' } } });
    app.get(
      '/items',
      {
        schema: {
          response: {
            200: { type: 'object', properties: { items: { type: 'array', items: { $ref: 'Item#' } } } },
            404: { type: 'object', properties: { message: { type: 'string' } } },
          },
        },
      },
      async (request, reply) => {
        if ((request.query as { missing?: string }).missing) return reply.code(404).send({ message: 'no', key: 'x' });
        return { items: [{ id: 'a', n: '7', secret: 's' }], secret: 'top' };
      },
    );
    await app.ready();
    for (let round = 0; round < 2; round++) {
      const found = await app.inject({ url: '/items' });
      expect(found.body).toBe('{"items":[{"id":"a","n":7}]}');
      const missing = await app.inject({ url: '/items?missing=1' });
      expect(missing.statusCode).toBe(404);
      expect(missing.body).toBe('{"message":"no"}');
    }
    await app.close();
  });
});
