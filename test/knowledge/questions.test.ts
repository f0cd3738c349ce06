import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant, type TestTenant } from '../helpers/factories.js';
import { uploadArticle, waitForTask } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
});
afterAll(async () => t?.close());

const HOURS = 'Our shop in Jeddah opens from 9 am to 10 pm every day.';

async function titles(tenant: TestTenant, query: string): Promise<string[]> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/public/documents/search',
    headers: tenant.headers,
    payload: { query, categories: [], search_method: { enable_vectorsearch: false } },
  });
  expect(response.statusCode).toBe(200);
  return response.json().results.map((result: { title: string }) => result.title);
}

describe('alternative questions of a document', () => {
  it.each([
    [{ questions: 'When?' }, /questions/],
    [{ questions: [42] }, /questions/],
    [{ questions: [''] }, /questions/],
    [{ questions: ['x'.repeat(301)] }, /questions/],
    [{ questions: Array.from({ length: 21 }, (_, i) => `Question ${i}?`) }, /questions/],
  ])('refuses %j on upload and update with 400 naming the field', async (patch, detail) => {
    const tenant = await createTenant(t.container, 'developer');
    const upload = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/article',
      headers: tenant.headers,
      payload: { document_title: 'Opening hours', content: HOURS, ...patch },
    });
    expect(upload.statusCode).toBe(400);
    expect(upload.json().detail).toMatch(detail);
    const created = await uploadArticle(t.app, tenant.headers, { document_title: 'Opening hours', content: HOURS });
    const update = await t.app.inject({
      method: 'PUT',
      url: `/api/public/documents/${created.document_id}`,
      headers: tenant.headers,
      payload: patch,
    });
    expect(update.statusCode).toBe(400);
    expect(update.json().detail).toMatch(detail);
  });

  it('are kept, indexed with the title (search finds the document by them), and changed by an update (reindexed)', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const other = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Delivery',
      content: 'Orders are delivered in 2 to 4 business days.',
    });
    await waitForTask(t, tenant.headers, other.task_id);
    const upload = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Opening hours',
      content: HOURS,
      questions: [' When can I visit the store? ', 'When can I visit the store?', 'Are you open on Fridays?'],
    });
    const done = await waitForTask(t, tenant.headers, upload.task_id);
    expect(done.status).toBe('completed');
    const record = await t.app.inject({
      method: 'GET',
      url: `/api/public/documents/${upload.document_id}`,
      headers: tenant.headers,
    });
    expect(record.json().questions).toEqual(['When can I visit the store?', 'Are you open on Fridays?']);
    expect((await titles(tenant, 'visit the store'))[0]).toBe('Opening hours');

    const updated = await t.app.inject({
      method: 'PUT',
      url: `/api/public/documents/${upload.document_id}`,
      headers: tenant.headers,
      payload: { questions: ['Is there parking near the branch?'] },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ status: 'pending', questions: ['Is there parking near the branch?'] });
    expect(updated.json().task_id).not.toBe(upload.task_id);
    await waitForTask(t, tenant.headers, updated.json().task_id);
    expect((await titles(tenant, 'parking near the branch'))[0]).toBe('Opening hours');
    expect(await titles(tenant, 'visit the store')).not.toContain('Opening hours');

    // The same questions again: nothing to reindex.
    const same = await t.app.inject({
      method: 'PUT',
      url: `/api/public/documents/${upload.document_id}`,
      headers: tenant.headers,
      payload: { questions: ['Is there parking near the branch?'] },
    });
    expect(same.json()).toMatchObject({ status: 'completed', task_id: updated.json().task_id });
  });
});
