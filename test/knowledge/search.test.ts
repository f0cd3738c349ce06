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
    const a = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Refund policy',
      content: 'Customers may request a refund within thirty days of purchase. Refunds are paid to the original card.',
      categories: ['billing'],
    });
    const b = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Shipping',
      content: 'Orders ship within two business days. International shipping takes up to two weeks.',
      categories: ['logistics'],
    });
    expect((await waitForTask(t, tenant.headers, a.task_id)).status).toBe('completed');
    expect((await waitForTask(t, tenant.headers, b.task_id)).status).toBe('completed');
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/search',
      headers: tenant.headers,
      payload: { query: 'how do I get a refund', search_method: {}, categories: [] },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.vector_lane).toBe('unavailable');
    expect(body.results[0].document_id).toBe(a.document_id);
    expect(body.results[0].scores.fulltext).toBeGreaterThan(0);
  });

  it('reads queries with quotes, backslashes and tsquery operators as plain words, in every lane', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const title = "O'Brien's back\\slash guide";
    const doc = await uploadArticle(t.app, tenant.headers, {
      document_title: title,
      content: "O'Brien's guide explains the back\\slash key: press it twice & wait.",
    });
    const other = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Keyboard care',
      content: 'Clean the keyboard with a dry cloth once a week.',
    });
    expect((await waitForTask(t, tenant.headers, doc.task_id)).status).toBe('completed');
    expect((await waitForTask(t, tenant.headers, other.task_id)).status).toBe('completed');
    for (const query of [title, "o'brien's back\\slash: guide & | ! <-> :*", "''' \\\\ '", '!!! & |']) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/public/documents/search',
        headers: tenant.headers,
        payload: { query, search_method: {}, categories: [] },
      });
      expect(response.statusCode, query).toBe(200);
      const body = response.json();
      if (query === title) {
        expect(body.results[0]).toMatchObject({ document_id: doc.document_id, title });
        expect(body.results[0].scores.docstore).toBeCloseTo(1, 5); // the title, by trigrams
        expect(body.results[0].scores.fulltext).toBeGreaterThan(0);
        expect(body.results[0].text).toContain('press it twice');
      }
    }
  });
});
