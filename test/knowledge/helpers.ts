/** Helpers of the knowledge-base tests: uploads and waiting for their tasks. */
import type { FastifyInstance } from 'fastify';
import type { LaneFilters } from '../../src/modules/knowledge/knowledge.search.types.js';
import type { TestApp } from '../helpers/app.js';

/**
 * Runs the task's ingestion in this test's container (its config decides: embedder, network
 * policy) rather than waiting for whichever worker polls the shared queue first, then returns
 * the finished task record as the API reports it.
 */
export async function waitForTask(t: TestApp, headers: Record<string, string>, taskId: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await t.app.inject({ method: 'GET', url: `/api/public/documents/task/${taskId}`, headers });
    const task = response.json();
    if (response.statusCode !== 200) throw new Error(`task ${taskId}: ${response.statusCode} ${response.body}`);
    if (task.status === 'completed' || task.status === 'failed') return task;
    if (task.status === 'pending') await t.container.knowledge.ingest(String(task.document_id).replace(/^doc_/, ''));
    else await new Promise((resolve) => setTimeout(resolve, 100));
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${task.status}`);
  }
}

/** A new collection of the tenant's company; its id. */
export async function createCollection(
  app: FastifyInstance,
  tenant: { headers: Record<string, string>; companyId: string },
  name: string,
): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/public/collections',
    headers: tenant.headers,
    payload: { name, company_id: tenant.companyId },
  });
  if (response.statusCode !== 201) throw new Error(`collection failed: ${response.statusCode} ${response.body}`);
  return (response.json() as { id: string }).id;
}

export async function uploadArticle(
  app: FastifyInstance,
  headers: Record<string, string>,
  body: Record<string, unknown>,
) {
  const response = await app.inject({
    method: 'POST',
    url: '/api/public/documents/upload/article',
    headers,
    payload: body,
  });
  if (response.statusCode !== 202) throw new Error(`upload failed: ${response.statusCode} ${response.body}`);
  return response.json() as { task_id: string; document_id: string; status: string };
}

/** A multipart/form-data body with one file and text fields. */
export function multipart(
  fields: Record<string, string>,
  file?: { name: string; type: string; bytes: Uint8Array; field?: string },
) {
  const boundary = `----kb${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`,
      ),
    );
    parts.push(Buffer.from(file.bytes));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/**
 * The filters a lane is compared under, in and out of memory: none, a collection, a category, a
 * date window that holds every document (and, with `past`, one that holds none).
 */
export function laneFilterCases(collectionId: () => string, past = false): [string, () => LaneFilters][] {
  return [
    ['no filter', () => ({})],
    ['collection', () => ({ collectionIds: [collectionId()] })],
    ['categories', () => ({ categories: ['third'] })],
    ['dates', () => ({ startDate: new Date(Date.now() - 3_600_000), endDate: new Date(Date.now() + 3_600_000) })],
    ...(past
      ? [['dates past', () => ({ endDate: new Date(Date.now() - 3_600_000) })] as [string, () => LaneFilters]]
      : []),
  ];
}
