import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant } from '../helpers/factories.js';
import { makeLongPdf } from './file-builders.js';
import { multipart } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none', MAX_UPLOAD_MB: '50' });
});
afterAll(async () => t?.close());

describe('ingestion beside requests', () => {
  it('answers /healthz throughout the ingestion of a 150-page PDF (parsed in the CPU pool, not on the event loop)', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const bytes = await makeLongPdf(150, 20);
    const form = multipart({ document_title: 'Device manual' }, { name: 'manual.pdf', type: 'application/pdf', bytes });
    const upload = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/file',
      headers: { ...tenant.headers, ...form.headers },
      payload: form.payload,
    });
    expect(upload.statusCode).toBe(202);
    const documentId = String(upload.json().document_id).replace(/^doc_/, '');

    let finished = false;
    const ingestion = t.container.knowledge.ingest(documentId).finally(() => (finished = true));
    const answers: number[] = [];
    const stagesSeen = new Set<string>();
    while (!finished) {
      const health = await t.app.inject({ method: 'GET', url: '/healthz' });
      answers.push(health.statusCode);
      const task = (
        await t.app.inject({
          method: 'GET',
          url: `/api/public/documents/task/${upload.json().task_id}`,
          headers: tenant.headers,
        })
      ).json();
      if (task.status === 'processing' && task.progress) stagesSeen.add(task.progress.stage);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await ingestion;

    // Every probe answered, several of them while the document was being read.
    expect(answers.length).toBeGreaterThanOrEqual(2);
    expect(answers.every((status) => status === 200)).toBe(true);
    expect(stagesSeen.size).toBeGreaterThan(0);
    const task = (
      await t.app.inject({
        method: 'GET',
        url: `/api/public/documents/task/${upload.json().task_id}`,
        headers: tenant.headers,
      })
    ).json();
    expect(task).toMatchObject({ status: 'completed', error: null });
    expect(task.chunk_count).toBeGreaterThan(10);
  }, 300_000);
});
