import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant } from '../helpers/factories.js';
import { uploadArticle, waitForTask } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
});
afterAll(async () => t?.close());

const ENGLISH =
  'Our support desk is open from nine to five on weekdays. Customers can reach us by e-mail or chat. ' +
  'Refunds are granted within thirty days of purchase when the product is returned unused. '.repeat(3) +
  'Shipping to Europe takes five business days, and to Asia up to two weeks. '.repeat(12);
const ARABIC =
  'يمكن للعملاء طلب استرداد المبلغ خلال ثلاثين يوما من تاريخ الشراء. يتم شحن الطلبات إلى دول الخليج خلال ثلاثة أيام عمل. '.repeat(
    4,
  );

const search = (headers: Record<string, string>, payload: Record<string, unknown>) =>
  t.app.inject({
    method: 'POST',
    url: '/api/public/documents/search',
    headers,
    payload: { search_method: {}, categories: [], ...payload },
  });

describe('article uploads and the task record', () => {
  it('accepts an article (202 pending), then completes it with chunks, language and no embeddings', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const upload = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Support handbook',
      content: ENGLISH,
      categories: ['support', 'faq'],
    });
    expect(upload.status).toBe('pending');
    expect(upload.task_id).toMatch(/^task_[0-9a-f-]{36}$/);
    expect(upload.document_id).toMatch(/^doc_[0-9a-f-]{36}$/);
    const task = await waitForTask(t, tenant.headers, upload.task_id);
    expect(task).toMatchObject({
      task_id: upload.task_id,
      document_id: upload.document_id,
      status: 'completed',
      error: null,
      embedding_status: 'unavailable',
    });
    expect(task.chunk_count).toBeGreaterThan(1);
    expect(task.embedding_error).toMatch(/EMBEDDINGS_PROVIDER=none/);
    expect(Date.parse(task.completed_at)).toBeGreaterThanOrEqual(Date.parse(task.created_at));

    const doc = (
      await t.app.inject({ method: 'GET', url: `/api/public/documents/${upload.document_id}`, headers: tenant.headers })
    ).json();
    expect(doc).toMatchObject({
      id: upload.document_id,
      title: 'Support handbook',
      categories: ['support', 'faq'],
      language: 'en',
      source_type: 'article',
      status: 'completed',
    });
    expect(doc.content).toContain('Refunds are granted');
    // Bare UUIDs are accepted for documents and tasks.
    const bare = upload.document_id.slice(4);
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/public/documents/${bare}`, headers: tenant.headers })).json().id,
    ).toBe(upload.document_id);
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: `/api/public/documents/task/${upload.task_id.slice(5)}`,
          headers: tenant.headers,
        })
      ).json().status,
    ).toBe('completed');
  });

  it('detects Arabic and finds it with an Arabic query (stemmed by the Arabic configuration)', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const ar = await uploadArticle(t.app, tenant.headers, { document_title: 'سياسة الاسترداد', content: ARABIC });
    const en = await uploadArticle(t.app, tenant.headers, { document_title: 'Handbook', content: ENGLISH });
    await waitForTask(t, tenant.headers, ar.task_id);
    await waitForTask(t, tenant.headers, en.task_id);
    expect(
      (
        await t.app.inject({ method: 'GET', url: `/api/public/documents/${ar.document_id}`, headers: tenant.headers })
      ).json().language,
    ).toBe('ar');
    const response = await search(tenant.headers, { query: 'كيف أطلب الاسترداد', top_k: 3 });
    const body = response.json();
    expect(body.results[0].document_id).toBe(ar.document_id);
    expect(body.results[0].language).toBe('ar');
    expect(body.results.every((r: { document_id: string }) => r.document_id !== en.document_id)).toBe(true);
  });

  it.each([
    [{ content: 'x' }, /document_title/],
    [{ document_title: 'x' }, /content/],
    [{ document_title: 'x', content: 5 }, /content/],
    [{ document_title: 'x', content: 'y', categories: 'faq' }, /categories/],
    [{ document_title: 'x', content: 'y', collection_id: 'nope' }, /collection_id/],
    [{ document_title: 'x', content: '   ' }, /blank/],
  ])('rejects the article %j with 400', async (payload, detail) => {
    const tenant = await createTenant(t.container, 'developer');
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/article',
      headers: tenant.headers,
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toMatch(detail);
  });

  it('refuses a collection of another company (404), members (403) and missing keys (401)', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const other = await createTenant(t.container, 'developer');
    const foreign = (
      await t.app.inject({
        method: 'POST',
        url: '/api/public/collections',
        headers: other.headers,
        payload: { name: 'Theirs', company_id: other.companyId },
      })
    ).json().id;
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/article',
      headers: tenant.headers,
      payload: { document_title: 'x', content: 'y', collection_id: foreign },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json().detail).toMatch(/Collection not found/);
    const member = await tenant.member('member');
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/public/documents/upload/article',
          headers: member.headers,
          payload: { document_title: 'x', content: 'y' },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/public/documents/upload/article',
          payload: { document_title: 'x', content: 'y' },
        })
      ).statusCode,
    ).toBe(401);
  });

  it('returns 404 for unknown or foreign documents and tasks, 400 for malformed ids', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const other = await createTenant(t.container, 'developer');
    const upload = await uploadArticle(t.app, other.headers, {
      document_title: 'Theirs',
      content: 'Private text of another company.',
    });
    for (const url of [
      `/api/public/documents/${upload.document_id}`,
      `/api/public/documents/task/${upload.task_id}`,
      `/api/public/documents/doc_${randomUUID()}`,
    ]) {
      const response = await t.app.inject({ method: 'GET', url, headers: tenant.headers });
      expect(response.statusCode).toBe(404);
      expect(response.json().detail).toMatch(/(Document|Task) not found/);
    }
    expect(
      (
        await t.app.inject({
          method: 'DELETE',
          url: `/api/public/documents/${upload.document_id}`,
          headers: tenant.headers,
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await t.app.inject({
          method: 'PUT',
          url: `/api/public/documents/${upload.document_id}`,
          headers: tenant.headers,
          payload: { document_title: 'mine' },
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/public/documents/doc_123', headers: tenant.headers })).statusCode,
    ).toBe(400);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/public/documents/task/xyz', headers: tenant.headers }))
        .statusCode,
    ).toBe(400);
  });
});

describe('listing documents', () => {
  it('pages and filters by categories, collection and dates', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const collection = (
      await t.app.inject({
        method: 'POST',
        url: '/api/public/collections',
        headers: tenant.headers,
        payload: { name: 'C', company_id: tenant.companyId },
      })
    ).json().id;
    for (let i = 0; i < 5; i++) {
      await uploadArticle(t.app, tenant.headers, {
        document_title: `Doc ${i}`,
        content: `Text ${i}`,
        categories: [i % 2 ? 'odd' : 'even'],
        ...(i < 2 ? { collection_id: collection } : {}),
      });
    }
    const list = (payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/api/public/documents/list', headers: tenant.headers, payload });
    const first = (await list({ limit: 2 })).json();
    expect(first).toMatchObject({ total: 5, page: 1, limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.data[0].content).toBeUndefined();
    const third = (await list({ limit: 2, page: 3 })).json();
    expect(third.data).toHaveLength(1);
    expect((await list({ categories: ['odd'] })).json().total).toBe(2);
    expect((await list({ categories: [] })).json().total).toBe(5);
    expect((await list({ collection_id: collection })).json().total).toBe(2);
    expect((await list({ start_date: '2000-01-01', end_date: '2000-12-31' })).json().total).toBe(0);
    expect((await list({ start_date: new Date(Date.now() - 60_000).toISOString() })).json().total).toBe(5);
    for (const [payload, detail] of [
      [{ start_date: '2026-02-01', end_date: '2026-01-01' }, /start_date/],
      [{ start_date: 'yesterday' }, /start_date/],
      [{ limit: 1000 }, /limit/],
      [{ page: 0 }, /page/],
    ] as const) {
      const response = await list(payload);
      expect(response.statusCode).toBe(400);
      expect(response.json().detail).toMatch(detail);
    }
  });
});

describe('updating and deleting documents', () => {
  it('re-chunks and re-indexes on a content update, and removes chunks on delete', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const upload = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Hours',
      content: 'The office opens at nine in the morning.',
    });
    await waitForTask(t, tenant.headers, upload.task_id);
    expect((await search(tenant.headers, { query: 'office opens nine' })).json().results).toHaveLength(1);

    const updated = await t.app.inject({
      method: 'PUT',
      url: `/api/public/documents/${upload.document_id}`,
      headers: tenant.headers,
      payload: { content: 'The warehouse closes at midnight.', categories: ['ops'] },
    });
    expect(updated.statusCode).toBe(200);
    const record = updated.json();
    expect(record).toMatchObject({ status: 'pending', categories: ['ops'] });
    expect(record.task_id).not.toBe(upload.task_id);
    await waitForTask(t, tenant.headers, record.task_id);
    expect((await search(tenant.headers, { query: 'office opens nine' })).json().results).toHaveLength(0);
    const found = (await search(tenant.headers, { query: 'warehouse midnight', categories: ['ops'] })).json();
    expect(found.results[0].document_id).toBe(upload.document_id);
    expect(
      (await search(tenant.headers, { query: 'warehouse midnight', categories: ['other'] })).json().results,
    ).toHaveLength(0);

    const stats = (
      await t.app.inject({ method: 'GET', url: '/api/public/documents/stats', headers: tenant.headers })
    ).json();
    expect(stats.total_chunks).toBe(1);

    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/api/public/documents/${upload.document_id}`,
      headers: tenant.headers,
    });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ status: 'deleted' });
    expect((await search(tenant.headers, { query: 'warehouse midnight' })).json().results).toHaveLength(0);
    const after = (
      await t.app.inject({ method: 'GET', url: '/api/public/documents/stats', headers: tenant.headers })
    ).json();
    expect(after).toMatchObject({ total_documents: 0, total_chunks: 0 });
    const postings = await t.container.db
      .selectFrom('kb_postings')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('company_id', '=', tenant.companyId)
      .executeTakeFirstOrThrow();
    expect(postings.n).toBe(0);
  });

  it('lets members read but not change documents', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const upload = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Read me',
      content: 'Members may read this.',
    });
    const member = await tenant.member('member');
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: `/api/public/documents/${upload.document_id}`,
          headers: member.headers,
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await t.app.inject({
          method: 'PUT',
          url: `/api/public/documents/${upload.document_id}`,
          headers: member.headers,
          payload: { document_title: 'x' },
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (
        await t.app.inject({
          method: 'DELETE',
          url: `/api/public/documents/${upload.document_id}`,
          headers: member.headers,
        })
      ).statusCode,
    ).toBe(403);
  });
});

describe('search', () => {
  it('honours top_k, lane switches and collection filters, and reports per-lane scores', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const collection = (
      await t.app.inject({
        method: 'POST',
        url: '/api/public/collections',
        headers: tenant.headers,
        payload: { name: 'Returns', company_id: tenant.companyId },
      })
    ).json().id;
    const uploads = [];
    for (let i = 0; i < 6; i++) {
      uploads.push(
        await uploadArticle(t.app, tenant.headers, {
          document_title: `Returns note ${i}`,
          content: `Returned items number ${i} are refunded to the original card within ${i + 3} days.`,
          ...(i === 0 ? { collection_id: collection } : {}),
        }),
      );
    }
    for (const upload of uploads) await waitForTask(t, tenant.headers, upload.task_id);
    const all = (await search(tenant.headers, { query: 'refunded to the original card', top_k: 3 })).json();
    expect(all.results).toHaveLength(3);
    expect(all.lanes).toEqual(['fulltext', 'docstore']);
    expect(all.results[0].scores.fulltext).toBeGreaterThan(0);
    expect(all.results[0].scores.docstore).toBe(1); // exact phrase
    expect(all.results[0].score).toBeGreaterThan(all.results[2].score - 1e-12);
    const ftOnly = (
      await search(tenant.headers, {
        query: 'refunded',
        search_method: { enable_vectorsearch: false, enable_docstoresearch: false },
      })
    ).json();
    expect(ftOnly.vector_lane).toBe('disabled');
    expect(ftOnly.lanes).toEqual(['fulltext']);
    expect(ftOnly.results).toHaveLength(4);
    expect(ftOnly.results.every((r: { scores: object }) => Object.keys(r.scores).join() === 'fulltext')).toBe(true);
    const scoped = (
      await search(tenant.headers, { query: 'refunded original card', collection_id: collection })
    ).json();
    expect(scoped.results.map((r: { document_id: string }) => r.document_id)).toEqual([uploads[0]!.document_id]);
    expect(scoped.results[0].collection_id).toBe(collection);
    const future = (await search(tenant.headers, { query: 'refunded', start_date: '2999-01-01' })).json();
    expect(future.results).toHaveLength(0);
  });

  it.each([
    [{ query: 'x', categories: [] }, /search_method/],
    [{ query: 'x', search_method: {} }, /categories/],
    [{ search_method: {}, categories: [] }, /query/],
    [{ query: 'x', search_method: {}, categories: [], top_k: 0 }, /top_k/],
    [{ query: 'x', search_method: {}, categories: [], top_k: 1000 }, /top_k/],
    [{ query: 'x', search_method: { enable_vectorsearch: 'yes' }, categories: [] }, /enable_vectorsearch/],
  ])('rejects the search body %j with 400', async (payload, detail) => {
    const tenant = await createTenant(t.container, 'member');
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/search',
      headers: tenant.headers,
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toMatch(detail);
  });

  it('returns 404 for a collection_id of another company', async () => {
    const tenant = await createTenant(t.container, 'member');
    const response = await search(tenant.headers, { query: 'x', collection_id: randomUUID() });
    expect(response.statusCode).toBe(404);
  });
});

describe('similarity check and statistics', () => {
  it('finds a near-duplicate by shingles without an embedder, honouring the threshold', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const upload = await uploadArticle(t.app, tenant.headers, {
      document_title: 'Handbook',
      content: ENGLISH,
      categories: ['faq'],
    });
    await uploadArticle(t.app, tenant.headers, {
      document_title: 'Other',
      content: 'Completely unrelated words about gardening and tomatoes.',
    }).then((u) => waitForTask(t, tenant.headers, u.task_id));
    await waitForTask(t, tenant.headers, upload.task_id);
    const check = (payload: Record<string, unknown>) =>
      t.app.inject({
        method: 'POST',
        url: '/api/public/documents/check-similarity',
        headers: tenant.headers,
        payload: { customer_id: tenant.companyId, ...payload },
      });
    const same = (await check({ document: ENGLISH })).json();
    expect(same).toMatchObject({ is_duplicate: true, method: 'shingles', threshold: 0.9 });
    expect(same.max_similarity).toBeCloseTo(1, 5);
    expect(same.matches[0]).toMatchObject({ document_id: upload.document_id, title: 'Handbook' });
    const edited = ENGLISH.replace('nine to five', 'eight to six').replace('thirty days', 'sixty days');
    const loose = (await check({ document: edited, similarity: 0.5 })).json();
    expect(loose.is_duplicate).toBe(true);
    const strict = (await check({ document: 'Refunds are granted within thirty days.', similarity: 0.9 })).json();
    expect(strict).toMatchObject({ is_duplicate: false, matches: [] });
    // Another company's id, existing or not, is a 404 like any row of another company (DESIGN §4).
    const unknownId = randomUUID();
    const unknown = await check({ document: 'x', customer_id: unknownId });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ detail: `Company not found: ${unknownId}` });
    const other = await createTenant(t.container);
    const foreign = await check({ document: ENGLISH, customer_id: other.companyId });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ detail: `Company not found: ${other.companyId}` });
    expect((await check({ document: 'x', similarity: 1.5 })).statusCode).toBe(400);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/public/documents/check-similarity',
          headers: tenant.headers,
          payload: { document: 'x' },
        })
      ).statusCode,
    ).toBe(400);

    const stats = (
      await t.app.inject({ method: 'GET', url: '/api/public/documents/stats', headers: tenant.headers })
    ).json();
    expect(stats).toMatchObject({
      total_documents: 2,
      total_collections: 0,
      by_status: { pending: 0, processing: 0, completed: 2, failed: 0 },
      by_source_type: { article: 2 },
      by_language: { en: 2 },
      categories: [{ category: 'faq', count: 1 }],
      embeddings: { available: false, provider: null, embedded_chunks: 0, documents_without_embeddings: 2 },
      vector_index: 'in-process',
    });
    expect(stats.embeddings.reason).toMatch(/EMBEDDINGS_PROVIDER=none/);
  });
});
