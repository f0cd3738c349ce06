import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerWorker } from '../../src/jobs/workers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant } from '../helpers/factories.js';
import { uploadArticle } from './helpers.js';

describe('crash recovery of ingestion tasks', () => {
  // Both services start in the hook (process-starting setup is bounded by the hook timeout): the
  // one that dies holding a task, then the restarted one with its workers on.
  let after: TestApp;
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  let upload: Awaited<ReturnType<typeof uploadArticle>>;
  let id: string;
  beforeAll(async () => {
    const before = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
    tenant = await createTenant(before.container, 'developer');
    upload = await uploadArticle(before.app, tenant.headers, {
      document_title: 'Interrupted',
      content: 'This document was being processed when the process died.',
    });
    id = upload.document_id.slice(4);
    // The worker took the task an hour ago and died; its job is gone with it.
    await sql`update kb_documents set status = 'processing', attempt = 1, processing_started_at = now() - interval '1 hour' where id = ${id}`.execute(
      before.container.db,
    );
    await sql`delete from ${sql.table(`${before.container.config.jobsSchema}.job`)} where data->>'documentId' = ${id}`.execute(
      before.container.db,
    );
    await before.close();

    // The restarted service: same job queue as before (its own schema), workers on.
    after = await createTestApp({
      EMBEDDINGS_PROVIDER: 'none',
      RUN_WORKERS: 'true',
      JOBS_SCHEMA: before.container.config.jobsSchema,
    });
  });
  afterAll(async () => {
    await after?.close();
  });

  it('finishes a task left processing by a dead worker once the service starts again', async () => {
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
  });

  it('hands back at once the task of a dead worker and leaves a live worker its task', async () => {
    const t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
    const schema = t.container.config.jobsSchema;
    // A live worker of this queue: registered, holding its lock.
    const live = await registerWorker({
      connectionString: t.container.databaseUrl,
      queue: schema,
      heartbeatMs: 60_000,
      onError: () => undefined,
    });
    try {
      const tenant = await createTenant(t.container, 'developer');
      const owned = async (title: string, workerId: number) => {
        const upload = await uploadArticle(t.app, tenant.headers, { document_title: title, content: `${title} text.` });
        const id = upload.document_id.slice(4);
        await sql`update kb_documents set status = 'processing', attempt = 1, worker_id = ${workerId},
                  processing_started_at = now() where id = ${id}`.execute(t.container.db);
        return id;
      };
      // A worker that died: its row is there, its lock is not held.
      const dead = await sql<{ id: number }>`
        insert into job_workers (queue, host, pid) values (${schema}, 'gone', 1) returning id`.execute(t.container.db);
      const deadId = dead.rows[0]!.id;
      const orphan = await owned('Orphan', deadId);
      const busy = await owned('Busy', live.id);
      const jobsFor = async (id: string) =>
        (
          await sql<{ n: number }>`select count(*)::int as n from ${sql.table(`${schema}.job`)}
            where name = 'knowledge.ingest' and state = 'created' and data->>'documentId' = ${id}`.execute(
            t.container.db,
          )
        ).rows[0]!.n;
      const before = { orphan: await jobsFor(orphan), busy: await jobsFor(busy) };

      expect(await t.container.queue.sweep()).toBe(1);

      const rows = await t.container.db
        .selectFrom('kb_documents')
        .select(['id', 'status', 'worker_id'])
        .where('id', 'in', [orphan, busy])
        .execute();
      expect(rows.find((row) => row.id === orphan)).toMatchObject({ status: 'pending', worker_id: null });
      expect(rows.find((row) => row.id === busy)).toMatchObject({ status: 'processing', worker_id: live.id });
      expect(await jobsFor(orphan)).toBe(before.orphan + 1);
      expect(await jobsFor(busy)).toBe(before.busy);
      const registry = await sql<{
        id: number;
      }>`select id from job_workers where id in (${deadId}, ${live.id})`.execute(t.container.db);
      expect(registry.rows.map((row) => row.id)).toEqual([live.id]);

      // The task handed back is ingested by the next attempt.
      await t.container.knowledge.ingest(orphan);
      const done = await t.container.db
        .selectFrom('kb_documents')
        .select(['status', 'attempt', 'chunk_count'])
        .where('id', '=', orphan)
        .executeTakeFirstOrThrow();
      expect(done).toEqual({ status: 'completed', attempt: 2, chunk_count: 1 });
    } finally {
      await live.close();
      await t.close();
    }
  });
});
