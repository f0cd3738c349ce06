import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant } from '../helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none', MAX_UPLOAD_MB: '1' });
});
afterAll(async () => t?.close());

describe('knowledge routes in the API description and limits', () => {
  it('lists every documents and collections operation in /openapi.json with the Document schema', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operations = Object.values(spec.paths as Record<string, Record<string, { operationId?: string }>>).flatMap(
      (path) => Object.values(path).map((op) => op.operationId),
    );
    for (const id of [
      'listDocuments',
      'searchDocuments',
      'uploadDocumentFile',
      'uploadDocumentArticle',
      'uploadDocumentWebsite',
      'getDocumentTask',
      'checkDocumentSimilarity',
      'getKnowledgeStats',
      'getDocument',
      'updateDocument',
      'deleteDocument',
      'createCollection',
      'listCollections',
      'getCollection',
      'updateCollection',
      'deleteCollection',
    ]) {
      expect(operations).toContain(id);
    }
    expect(Object.keys(spec.components.schemas)).toEqual(expect.arrayContaining(['Document', 'Collection']));
  });

  it('answers 413 {detail} for an article body above MAX_UPLOAD_MB', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/article',
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ document_title: 'Big', content: 'x'.repeat(1024 * 1024 + 10) }),
    });
    expect(response.statusCode).toBe(413);
    expect(Object.keys(response.json())).toEqual(['detail']);
  });
});
