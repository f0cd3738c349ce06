import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../helpers/factories.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { uploadArticle, waitForTask } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
});
afterAll(async () => t?.close());

describe('knowledge search without an embedder', () => {
  it('ranks the document that matches by full text first and says the vector lane is unavailable', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const a = await uploadArticle(t.app, tenant.headers, { document_title: 'Refund policy', content: 'Customers may request a refund within thirty days of purchase. Refunds are paid to the original card.', categories: ['billing'] });
    const b = await uploadArticle(t.app, tenant.headers, { document_title: 'Shipping', content: 'Orders ship within two business days. International shipping takes up to two weeks.', categories: ['logistics'] });
    expect((await waitForTask(t, tenant.headers, a.task_id)).status).toBe('completed');
    expect((await waitForTask(t, tenant.headers, b.task_id)).status).toBe('completed');
    const response = await t.app.inject({
      method: 'POST', url: '/api/public/documents/search', headers: tenant.headers,
      payload: { query: 'how do I get a refund', search_method: {}, categories: [] },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.vector_lane).toBe('unavailable');
    expect(body.results[0].document_id).toBe(a.document_id);
    expect(body.results[0].scores.fulltext).toBeGreaterThan(0);
  });
});
