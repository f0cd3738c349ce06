import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';
import { createTenant } from '../helpers/factories.js';
import { uploadArticle } from './helpers.js';

describe('crash recovery of ingestion tasks', () => {
  it('finishes a task left processing by a dead worker once the service starts again', async () => {
    const before = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
    const tenant = await createTenant(before.container, 'developer');
    const upload = await uploadArticle(before.app, tenant.headers, {
      document_title: 'Interrupted',
      content: 'This document was being processed when the process died.',
    });
    const id = upload.document_id.slice(4);
    // The worker took the task an hour ago and died; its job is gone with it.
    await sql`update kb_documents set status = 'processing', attempt = 1, processing_started_at = now() - interval '1 hour' where id = ${id}`.execute(
      before.container.db,
    );
    await sql`delete from ${sql.table(`${before.container.config.jobsSchema}.job`)} where data->>'documentId' = ${id}`.execute(
      before.container.db,
    );
    await before.close();

    // The restarted service: same job queue as before (its own schema), workers on.
    const after = await createTestApp({
      EMBEDDINGS_PROVIDER: 'none',
      RUN_WORKERS: 'true',
      JOBS_SCHEMA: before.container.config.jobsSchema,
    });
    try {
      const deadline = Date.now() + 20_000;
      let task;
      do {
        await new Promise((resolve) => setTimeout(resolve, 200));
        task = (
          await after.app.inject({
            method: 'GET',
            url: `/api/public/documents/task/${upload.task_id}`,
            headers: tenant.headers,
          })
        ).json();
      } while (task.status !== 'completed' && Date.now() < deadline);
      expect(task).toMatchObject({ status: 'completed', error: null, chunk_count: 1 });
      const row = await after.container.db
        .selectFrom('kb_documents')
        .select('attempt')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row.attempt).toBe(2);
    } finally {
      await after.close();
    }
  });

  it('leaves a task that another worker is processing to it, and looks again later', async () => {
    const t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
    try {
      const tenant = await createTenant(t.container, 'developer');
      const upload = await uploadArticle(t.app, tenant.headers, {
        document_title: 'Busy',
        content: 'Another worker holds this one.',
      });
      const id = upload.document_id.slice(4);
      await sql`update kb_documents set status = 'processing', attempt = 1, processing_started_at = now() where id = ${id}`.execute(
        t.container.db,
      );
      await t.container.knowledge.ingest(id);
      const row = await t.container.db
        .selectFrom('kb_documents')
        .select(['status', 'attempt'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ status: 'processing', attempt: 1 });
      const later = await sql<{ n: number }>`
        select count(*)::int as n from ${sql.table(`${t.container.config.jobsSchema}.job`)}
        where name = 'knowledge.ingest' and data->>'documentId' = ${id} and start_after > now() + interval '5 minutes'`.execute(
        t.container.db,
      );
      expect(later.rows[0]!.n).toBe(1);
    } finally {
      await t.close();
    }
  });
});
