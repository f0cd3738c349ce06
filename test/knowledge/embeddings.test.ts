import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAiEmbedder } from '../../src/adapters/openai-compatible/openai-embedder.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant } from '../helpers/factories.js';
import { startEmbeddingsPeer, type EmbeddingsPeer } from './embeddings-peer.js';
import { uploadArticle, waitForTask } from './helpers.js';

// shared/ sits beside the checkout (and beside CI's clone); MODELS_DIR overrides.
const MODELS_DIR = process.env.MODELS_DIR ?? path.resolve(import.meta.dirname, '../../../shared/models');
const hasWeights = existsSync(`${MODELS_DIR}/Xenova/all-MiniLM-L6-v2/onnx/model_quantized.onnx`);

let peer: EmbeddingsPeer;
let t: TestApp;
beforeAll(async () => {
  peer = await startEmbeddingsPeer();
  t = await createTestApp({
    EMBEDDINGS_URL: peer.url,
    EMBEDDINGS_API_KEY: 'sk-test-embeddings',
    EMBEDDINGS_MODEL: 'concepts-64',
  });
});
afterAll(async () => {
  await t?.close();
  await peer?.close();
});

const search = (app: TestApp, headers: Record<string, string>, payload: Record<string, unknown>) =>
  app.app
    .inject({
      method: 'POST',
      url: '/api/public/documents/search',
      headers,
      payload: { search_method: {}, categories: [], ...payload },
    })
    .then((r) => r.json());

describe('vector lane over an OpenAI-compatible embeddings API', () => {
  it('embeds chunks at ingestion and finds by meaning what full text cannot', async () => {
    peer.failWith = 0;
    const tenant = await createTenant(t.container, 'developer');
    const auto = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Garage',
      content: 'Automobile maintenance is booked online. Our mechanics handle every vehicle brand.',
    });
    const food = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Kitchen',
      content: 'The bakery sells bread and pastries every morning.',
    });
    expect((await waitForTask(t, tenant.headers, auto.task_id)).embedding_status).toBe('completed');
    await waitForTask(t, tenant.headers, food.task_id);
    expect(peer.requests.at(-1)).toMatchObject({ model: 'concepts-64', authorization: 'Bearer sk-test-embeddings' });

    const body = await search(t, tenant.headers, { query: 'car repair', top_k: 2 });
    expect(body.vector_lane).toBe('used');
    expect(body.lanes).toEqual(['vector', 'fulltext', 'docstore']);
    expect(body.results[0].document_id).toBe(auto.document_id);
    expect(body.results[0].scores.vector).toBeGreaterThan(0.3);
    expect(body.results[0].scores.fulltext).toBeUndefined();
    const fulltextOnly = await search(t, tenant.headers, {
      query: 'car repair',
      search_method: { enable_vectorsearch: false },
    });
    expect(fulltextOnly.results).toHaveLength(0);

    const stats = (
      await t.app.inject({ method: 'GET', url: '/api/public/documents/stats', headers: tenant.headers })
    ).json();
    expect(stats.embeddings).toMatchObject({
      available: true,
      provider: 'openai:concepts-64',
      embedded_chunks: 2,
      documents_without_embeddings: 0,
      reason: null,
    });
  });

  it('keeps in-process indexes of two instances coherent through the corpus version', async () => {
    peer.failWith = 0;
    const other = await createTestApp({ EMBEDDINGS_URL: peer.url, EMBEDDINGS_MODEL: 'concepts-64' });
    try {
      const tenant = await createTenant(t.container, 'developer');
      const first = await uploadArticle(t.app, tenant.headers, {
        document_title: 'One',
        content: 'Automobile fees are listed on the counter.',
      });
      await waitForTask(t, tenant.headers, first.task_id);
      expect(
        (
          await search(other, tenant.headers, {
            query: 'car price',
            search_method: { enable_fulltextsearch: false, enable_docstoresearch: false },
          })
        ).results,
      ).toHaveLength(1);
      const second = await uploadArticle(t.app, tenant.headers, {
        document_title: 'Two',
        content: 'Vehicle charge depends on the size.',
      });
      await waitForTask(t, tenant.headers, second.task_id);
      const after = await search(other, tenant.headers, {
        query: 'car price',
        top_k: 5,
        search_method: { enable_fulltextsearch: false, enable_docstoresearch: false },
      });
      expect(after.results.map((r: { document_id: string }) => r.document_id).sort()).toEqual(
        [first.document_id, second.document_id].sort(),
      );
      await t.app.inject({
        method: 'DELETE',
        url: `/api/public/documents/${first.document_id}`,
        headers: tenant.headers,
      });
      const deleted = await search(other, tenant.headers, {
        query: 'car price',
        top_k: 5,
        search_method: { enable_fulltextsearch: false, enable_docstoresearch: false },
      });
      expect(deleted.results.map((r: { document_id: string }) => r.document_id)).toEqual([second.document_id]);
    } finally {
      await other.close();
    }
  });

  it('checks similarity by embeddings when the embedder works', async () => {
    peer.failWith = 0;
    const tenant = await createTenant(t.container, 'developer');
    const upload = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Garage fees',
      content: 'Automobile repair fee list for every vehicle.',
    });
    await waitForTask(t, tenant.headers, upload.task_id);
    const check = (document: string) =>
      t.app
        .inject({
          method: 'POST',
          url: '/api/public/documents/check-similarity',
          headers: tenant.headers,
          payload: { document, customer_id: tenant.companyId, similarity: 0.8 },
        })
        .then((r) => r.json());
    const same = await check('Garage fees\nAutomobile repair fee list for every vehicle.');
    expect(same).toMatchObject({ method: 'embeddings', is_duplicate: true });
    expect(same.matches[0].document_id).toBe(upload.document_id);
    const different = await check('Vehicle breakfast menu with pastries, bread, eggs, juice and coffee for guests.');
    expect(different.method).toBe('embeddings');
    expect(different.is_duplicate).toBe(false);
    expect(different.max_similarity).toBeLessThan(0.8);
  });

  it('completes ingestion for full text when the provider fails, and says embeddings are unavailable', async () => {
    const tenant = await createTenant(t.container, 'developer');
    peer.failWith = 503;
    try {
      const upload = await uploadArticle(t.app, tenant.headers, {
        document_title: 'Outage',
        content: 'Automobile servicing takes two hours.',
      });
      const task = await waitForTask(t, tenant.headers, upload.task_id);
      expect(task).toMatchObject({ status: 'completed', embedding_status: 'unavailable' });
      expect(task.embedding_error).toMatch(/answered 503: The server is overloaded/);
      const body = await search(t, tenant.headers, { query: 'automobile servicing' });
      expect(body.vector_lane).toBe('unavailable');
      expect(body.vector_lane_reason).toMatch(/503/);
      expect(body.results[0].document_id).toBe(upload.document_id);
      const stats = (
        await t.app.inject({ method: 'GET', url: '/api/public/documents/stats', headers: tenant.headers })
      ).json();
      expect(stats.embeddings).toMatchObject({ available: false, documents_without_embeddings: 1 });
    } finally {
      peer.failWith = 0;
    }
  });
});

describe('OpenAI-compatible embedder adapter', () => {
  it('marks 429 and 5xx retryable, 4xx not, and names the status and message', async () => {
    const embedder = createOpenAiEmbedder({ baseUrl: peer.url, model: 'm' });
    for (const [status, retryable] of [
      [429, true],
      [500, true],
      [400, false],
      [401, false],
    ] as const) {
      peer.failWith = status;
      await expect(embedder.embed(['x'])).rejects.toMatchObject({
        name: 'EmbeddingError',
        retryable,
        status,
        message: expect.stringContaining(`answered ${status}`),
      });
    }
    peer.failWith = 0;
    const [vector] = await embedder.embed(['unit length please']);
    expect(vector!.reduce((sum, v) => sum + v * v, 0)).toBeCloseTo(1, 5);
  });

  it('reports an unreachable provider as retryable', async () => {
    const embedder = createOpenAiEmbedder({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', timeoutMs: 2000 });
    await expect(embedder.embed(['x'])).rejects.toMatchObject({
      retryable: true,
      message: expect.stringContaining('unreachable'),
    });
  });

  it('sends batches of batchSize and keeps the order', async () => {
    const embedder = createOpenAiEmbedder({ baseUrl: peer.url, model: 'batch', batchSize: 2 });
    const before = peer.requests.length;
    const vectors = await embedder.embed(['car', 'bread', 'automobile', 'cake', 'vehicle']);
    expect(peer.requests.slice(before).map((r) => r.inputs)).toEqual([2, 2, 1]);
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);
    expect(dot(vectors[0]!, vectors[2]!)).toBeCloseTo(1, 5);
    expect(dot(vectors[0]!, vectors[1]!)).toBeLessThan(0.5);
  });
});

describe.skipIf(hasWeights)('local transformers.js embedder without weights', () => {
  it('fails clearly; ingestion and search fall back to the lanes without vectors', async () => {
    const local = await createTestApp({
      EMBEDDINGS_PROVIDER: 'local',
      MODELS_DIR,
      EMBEDDINGS_MODEL: 'Xenova/all-MiniLM-L6-v2',
      EMBEDDINGS_ALLOW_DOWNLOAD: 'false',
    });
    try {
      const tenant = await createTenant(local.container, 'developer');
      const upload = await uploadArticle(local.app, tenant.headers, {
        document_title: 'Offline',
        content: 'Offline mode still indexes text for full-text search.',
      });
      const task = await waitForTask(local, tenant.headers, upload.task_id);
      expect(task).toMatchObject({ status: 'completed', embedding_status: 'unavailable' });
      expect(task.embedding_error).toContain(
        'Local embedding model Xenova/all-MiniLM-L6-v2 could not be loaded from MODELS_DIR',
      );
      // It names the missing file under the setting, and says what to configure — never a server path.
      expect(task.embedding_error).toContain('MODELS_DIR/Xenova/all-MiniLM-L6-v2/');
      expect(task.embedding_error).toMatch(
        /Put the model's files under MODELS_DIR\/Xenova\/all-MiniLM-L6-v2 \(or allow EMBEDDINGS_ALLOW_DOWNLOAD\), or choose another EMBEDDINGS_PROVIDER$/,
      );
      expect(task.embedding_error).not.toContain(path.resolve(MODELS_DIR));
      expect(task.embedding_error).not.toMatch(/(^|[\s"'(])\/[\w.-]+\//);
      const body = await search(local, tenant.headers, { query: 'offline full-text' });
      expect(body.vector_lane).toBe('unavailable');
      expect(body.vector_lane_reason).toMatch(/could not be loaded/);
      expect(body.results[0].document_id).toBe(upload.document_id);
    } finally {
      await local.close();
    }
  });
});
