import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant, type TestTenant } from '../helpers/factories.js';
import { multipart, uploadArticle, waitForTask } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
});
afterAll(async () => t?.close());

async function createCollection(tenant: TestTenant, body: Record<string, unknown> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/api/public/collections',
    headers: tenant.headers,
    payload: { name: `FAQ ${randomUUID().slice(0, 6)}`, company_id: tenant.companyId, ...body },
  });
}

describe('collections', () => {
  it('creates a collection (201) with the record of the interface', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const response = await createCollection(tenant, {
      name: 'Billing',
      description: 'Invoices and refunds',
      is_private: true,
    });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toMatchObject({
      name: 'Billing',
      description: 'Invoices and refunds',
      is_private: true,
      company_id: tenant.companyId,
      created_by_id: tenant.userId,
      document_count: 0,
    });
    expect(body.vector_namespace).toBe(`kb:${tenant.companyId}:${body.id}`);
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
  });

  it.each([
    [{ name: '' }, /name/],
    [{ name: 42 }, /name/],
    [{ company_id: 'not-a-uuid' }, /company_id/],
    [{ is_private: 'yes' }, /is_private/],
  ])('rejects an invalid body %j with 400 {detail}', async (patch, detail) => {
    const tenant = await createTenant(t.container, 'developer');
    const response = await createCollection(tenant, patch);
    expect(response.statusCode).toBe(400);
    expect(Object.keys(response.json())).toEqual(['detail']);
    expect(response.json().detail).toMatch(detail);
  });

  it("answers a company_id other than the caller's like an unknown company (404); a member 403, no key 401", async () => {
    const tenant = await createTenant(t.container, 'developer');
    const other = await createTenant(t.container);
    const foreign = await createCollection(tenant, { company_id: other.companyId });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ detail: `Company not found: ${other.companyId}` });
    const unknownId = randomUUID();
    expect((await createCollection(tenant, { company_id: unknownId })).json()).toEqual({
      detail: `Company not found: ${unknownId}`,
    });
    const collections = await t.app.inject({ method: 'GET', url: '/api/public/collections', headers: other.headers });
    expect(collections.json()).toEqual([]);
    const member = await tenant.member('member');
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/public/collections',
      headers: member.headers,
      payload: { name: 'x', company_id: tenant.companyId },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json().detail).toMatch(/developer/);
    expect((await t.app.inject({ method: 'GET', url: '/api/public/collections' })).statusCode).toBe(401);
  });

  it('returns 409 for a second collection with the same name', async () => {
    const tenant = await createTenant(t.container, 'developer');
    expect((await createCollection(tenant, { name: 'Same' })).statusCode).toBe(201);
    const again = await createCollection(tenant, { name: 'same' });
    expect(again.statusCode).toBe(409);
    expect(again.json().detail).toMatch(/already exists/);
  });

  it("lists only the company's collections with skip/limit, limit above 1000 → 400", async () => {
    const tenant = await createTenant(t.container, 'developer');
    const other = await createTenant(t.container, 'developer');
    for (let i = 0; i < 3; i++) await createCollection(tenant);
    await createCollection(other);
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/public/collections?skip=1&limit=5',
      headers: tenant.headers,
    });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toHaveLength(2);
    expect(list.json().every((c: { company_id: string }) => c.company_id === tenant.companyId)).toBe(true);
    const member = await tenant.member('member');
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/public/collections', headers: member.headers })).json(),
    ).toHaveLength(3);
    const tooMany = await t.app.inject({
      method: 'GET',
      url: '/api/public/collections?limit=1001',
      headers: tenant.headers,
    });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().detail).toMatch(/limit/);
  });

  it("gets and updates a collection; another company's id is 404, a malformed one 400", async () => {
    const tenant = await createTenant(t.container, 'developer');
    const other = await createTenant(t.container, 'developer');
    const id = (await createCollection(tenant)).json().id;
    const updated = await t.app.inject({
      method: 'PUT',
      url: `/api/public/collections/${id}`,
      headers: tenant.headers,
      payload: { name: 'Renamed', is_private: true },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ id, name: 'Renamed', is_private: true });
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/public/collections/${id}`, headers: tenant.headers })).json()
        .name,
    ).toBe('Renamed');
    const foreign = await t.app.inject({ method: 'GET', url: `/api/public/collections/${id}`, headers: other.headers });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ detail: `Collection not found: ${id}` });
    expect(
      (
        await t.app.inject({
          method: 'PUT',
          url: `/api/public/collections/${id}`,
          headers: other.headers,
          payload: { name: 'x' },
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/public/collections/123', headers: tenant.headers })).statusCode,
    ).toBe(400);
  });

  it('detaches documents on delete, and deletes them with ?cascade=true', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const keep = (await createCollection(tenant)).json().id;
    const drop = (await createCollection(tenant)).json().id;
    const a = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Kept',
      content: 'Detached documents stay searchable after their collection goes.',
      collection_id: keep,
    });
    const b = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Dropped',
      content: 'Cascaded documents disappear with their collection.',
      collection_id: drop,
    });
    await waitForTask(t, tenant.headers, a.task_id);
    await waitForTask(t, tenant.headers, b.task_id);
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/public/collections/${keep}`, headers: tenant.headers })).json()
        .document_count,
    ).toBe(1);

    const detached = await t.app.inject({
      method: 'DELETE',
      url: `/api/public/collections/${keep}`,
      headers: tenant.headers,
    });
    expect(detached.statusCode).toBe(200);
    expect(detached.json()).toEqual({ status: 'deleted' });
    const doc = await t.app.inject({
      method: 'GET',
      url: `/api/public/documents/${a.document_id}`,
      headers: tenant.headers,
    });
    expect(doc.json().collection_id).toBeNull();

    expect(
      (
        await t.app.inject({
          method: 'DELETE',
          url: `/api/public/collections/${drop}?cascade=true`,
          headers: tenant.headers,
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/public/documents/${b.document_id}`, headers: tenant.headers }))
        .statusCode,
    ).toBe(404);
    const search = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/search',
      headers: tenant.headers,
      payload: { query: 'documents collection', search_method: {}, categories: [], top_k: 10 },
    });
    expect(search.json().results.map((r: { document_id: string }) => r.document_id)).toEqual([a.document_id]);
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/api/public/collections/${drop}`, headers: tenant.headers }))
        .statusCode,
    ).toBe(404);
  });

  it('reports readiness of collections for a roll-out', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const ready = (await createCollection(tenant)).json().id;
    const broken = (await createCollection(tenant)).json().id;
    const ok = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Fine',
      content: 'This one indexes well.',
      collection_id: ready,
    });
    const bad = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Blank',
      content: ' \n\t ',
      collection_id: broken,
    }).catch(() => null);
    await waitForTask(t, tenant.headers, ok.task_id);
    expect(bad).toBeNull();
    // A failed document: a PDF that cannot be read.
    const form = multipart(
      { document_title: 'Broken', collection_id: broken },
      { name: 'broken.pdf', type: 'application/pdf', bytes: new TextEncoder().encode('%PDF-1.7\nnot a pdf\n%%EOF') },
    );
    const failing = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/file',
      headers: { ...tenant.headers, ...form.headers },
      payload: form.payload,
    });
    await waitForTask(t, tenant.headers, failing.json().task_id);
    const missing = randomUUID();
    const other = await createTenant(t.container, 'developer');
    const foreign = (await createCollection(other)).json().id;
    const readiness = await t.container.knowledge.collectionsReadiness(tenant.companyId, [
      ready,
      broken,
      missing,
      foreign,
      'junk',
    ]);
    expect(readiness).toEqual({ missing: [missing, foreign, 'junk'], processing: [], failed: [broken] });
  });
});
