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

  it('describes every operation: description, declared tags, a description and examples on every response', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApi;
    expect(spec.servers?.[0]?.url).toMatch(/^https?:\/\//);
    const declared = new Set(spec.tags.map((tag) => tag.name));
    for (const [path, method, op] of operations(spec)) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(op.description, where).toBeTruthy();
      for (const tag of op.tags) expect(declared, `${where} tag ${tag}`).toContain(tag);
      for (const media of Object.values(op.requestBody?.content ?? {})) expect(media.example, where).toBeDefined();
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.description, `${where} ${status}`).not.toBe('Default Response');
        const json = response.content?.['application/json'];
        if (json) expect(json.example, `${where} ${status}`).toBeDefined();
      }
    }
  });

  it('marks the operations without credentials with security [] and every other with its scheme', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApi;
    const open = operations(spec).filter(([, , op]) => op.security?.length === 0);
    // Open to anyone: probes and the document; sign-in (its own checks: Origin, lock-out, rate
    // limits); the widget's entry routes (its publishable key and allowed origins); the vendors'
    // channel routes (each verified by the vendor's own signature or token); the MCP endpoint's
    // protected resource metadata (RFC 9728: how a client authenticates).
    expect(open.map(([, , op]) => op.operationId).sort()).toEqual([
      'acceptInvitationWithPassword',
      'createWidgetSession',
      'getWidget',
      'healthz',
      'mcpProtectedResource',
      'mcpProtectedResourceForPath',
      'metrics',
      'openapi',
      'readyz',
      'requestPasswordReset',
      'setPasswordWithLink',
      'signIn',
      'slackEvents',
      'teamsMessages',
      'whatsappWebhook',
      'whatsappWebhookVerify',
      'widgetScript',
    ]);
    for (const [path, , op] of operations(spec)) expect(op.security, path).toBeDefined();
  });

  it('lists only the error statuses an operation can return', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApi;
    const statuses = (id: string) =>
      Object.keys(operations(spec).find(([, , op]) => op.operationId === id)![2].responses).sort();
    // No input, no body: neither validation nor size nor media-type errors, nor a missing resource.
    expect(statuses('getKnowledgeStats')).toEqual(['200', '401', '403', '429', '500']);
    expect(statuses('getDocument')).toEqual(['200', '400', '401', '403', '404', '429', '500']);
    expect(statuses('uploadDocumentArticle')).toEqual(expect.arrayContaining(['202', '400', '413', '415']));
    expect(statuses('healthz')).toEqual(['200']);
  });

  it('documents the multipart body of upload/file and JSON errors on the streaming chat operation', async () => {
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApi;
    const byId = (id: string) => operations(spec).find(([, , op]) => op.operationId === id)![2];
    const form = byId('uploadDocumentFile').requestBody?.content['multipart/form-data'];
    expect(form?.schema).toMatchObject({
      required: ['file', 'document_title'],
      properties: { file: { type: 'string', format: 'binary' }, collection_id: { format: 'uuid' } },
    });
    const stream = byId('chatStream');
    expect(Object.keys(stream.responses['200']!.content ?? {})).toEqual(['text/event-stream']);
    for (const [status, response] of Object.entries(stream.responses)) {
      if (Number(status) >= 400) expect(Object.keys(response.content ?? {}), status).toEqual(['application/json']);
    }
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

interface Media {
  schema?: Record<string, unknown>;
  example?: unknown;
}
interface Operation {
  operationId: string;
  description?: string;
  tags: string[];
  security?: unknown[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
}
interface OpenApi {
  servers?: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
}

function operations(spec: OpenApi): [string, string, Operation][] {
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]): [string, string, Operation] => [path, method, op]),
  );
}
