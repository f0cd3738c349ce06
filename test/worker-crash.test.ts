/**
 * A worker process killed with SIGKILL in the middle of its work: an ingestion held at its
 * embeddings call (a local embeddings server that does not answer until released) and a roll-out
 * held at its integrations check (the table locked by the test). A second worker process started
 * afterwards finishes both — the dead worker's tasks are handed back by its start-up sweep, not
 * after a job expiry — and the document has exactly the chunks of an uninterrupted ingestion.
 * The worker processes run the project's CLI (`switchboard worker`) on a database of their own.
 * The crash is set up in a hook; the tests observe the recovery. The seconds from the second
 * worker's start to each completion are printed, not asserted.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { control, createAgent, createDeployment, logsOf } from './helpers/deployments.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { conceptVector } from './knowledge/embeddings-peer.js';
import { uploadArticle } from './knowledge/helpers.js';
import {
  startWorkerProcess as startWorker,
  stopWorkerProcesses,
  type WorkerProcess as Worker,
} from './helpers/processes.js';
import { createScratchDatabase } from './helpers/scratch-db.js';

const JOBS_SCHEMA = 'jobs_crash';

/** An OpenAI-compatible embeddings server whose answers can be held back. */
async function startHeldEmbeddings() {
  const waiting: { response: ServerResponse; inputs: string[] }[] = [];
  let held = true;
  let received = 0;
  const answer = (response: ServerResponse, inputs: string[]) => {
    if (response.destroyed) return;
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        object: 'list',
        data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: conceptVector(input) })),
      }),
    );
  };
  const server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string | string[] };
    const inputs = Array.isArray(payload.input) ? payload.input : [payload.input];
    received++;
    if (held) waiting.push({ response, inputs });
    else answer(response, inputs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    received: () => received,
    release() {
      held = false;
      for (const { response, inputs } of waiting.splice(0)) answer(response, inputs);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function waitFor<T>(what: string, read: () => Promise<T | undefined>, worker?: Worker): Promise<T> {
  const deadline = Date.now() + 25_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${worker?.output() ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let t: TestApp;
let embeddings: Awaited<ReturnType<typeof startHeldEmbeddings>>;
const workers: Worker[] = [];

beforeAll(async () => {
  scratch = await createScratchDatabase();
  const handle = createDatabase(scratch.url, 2);
  await migrateToLatest(handle.db);
  await handle.close();
  embeddings = await startHeldEmbeddings();
  // The API side, without workers, on the workers' queue.
  t = await createTestApp({ DATABASE_URL: scratch.url, JOBS_SCHEMA, EMBEDDINGS_PROVIDER: 'none' });
});

afterAll(async () => {
  await stopWorkerProcesses(workers);
  await t?.close();
  await embeddings?.close();
  await scratch?.drop();
});

const workerEnv = () => ({
  NODE_ENV: 'test',
  LOG_LEVEL: 'info',
  DATABASE_URL: scratch.url,
  JOBS_SCHEMA,
  RUN_WORKERS: 'true',
  EMBEDDINGS_PROVIDER: 'openai',
  EMBEDDINGS_URL: embeddings.url,
  EMBEDDINGS_MODEL: 'concepts-64',
  EMBEDDINGS_TIMEOUT_MS: '600000',
  // Short thresholds: the design's defaults (5 / 20 / 10 s) only bound a vanished host.
  WORKER_HEARTBEAT_SECONDS: '1',
  WORKER_DEAD_AFTER_SECONDS: '5',
  WORKER_SWEEP_SECONDS: '2',
});

const content = Array.from(
  { length: 40 },
  (_, i) => `Paragraph ${i}: orders ship within ${i + 1} days and refunds reach the original card in a week.`,
).join(' ');

describe('a worker process killed mid-task', () => {
  let tenant: TestTenant;
  let documentId: string;
  let deploymentId: string;
  let held: { document: { status: string; worker_id: number | null }; deployment: Record<string, unknown> };
  let second: Worker;
  let restartedAt: number;

  // The crash is the setup: worker A takes the ingestion (held at its embeddings call) and the
  // roll-out (held at the integrations check, whose table the test locks), and is killed; then
  // worker B starts, and its start-up sweep finds A dead (its lock is gone) and hands both back.
  beforeAll(async () => {
    tenant = await createTenant(t.container, 'developer');
    // The lock is taken once worker A is ready: its start-up reads the integrations table (sealing
    // secrets stored in clear), and the lock is for the roll-out alone.
    const first = startWorker(workerEnv());
    workers.push(first);
    await first.ready;
    const locker = new pg.Client({ connectionString: scratch.url });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table integrations in access exclusive mode');

    const upload = await uploadArticle(t.app, tenant.headers, { document_title: 'Shipping', content });
    documentId = upload.document_id.slice(4);
    const agent = await createAgent(t.container, tenant);
    const deployment = await createDeployment(t.app, tenant, agent.id);
    deploymentId = deployment.id;
    expect((await control(t.app, tenant, deployment.id, 'start')).statusCode).toBe(200);

    await waitFor('the ingestion to be held', async () => (embeddings.received() > 0 ? true : undefined), first);
    await waitFor(
      'the roll-out to wait on the integrations lock',
      async () => {
        const waiting = await sql<{ n: number }>`
          select count(*)::int as n from pg_locks where not granted and relation = 'integrations'::regclass`.execute(
          t.container.db,
        );
        return waiting.rows[0]!.n > 0 ? true : undefined;
      },
      first,
    );
    held = {
      document: await t.container.db
        .selectFrom('kb_documents')
        .select(['status', 'worker_id'])
        .where('id', '=', documentId)
        .executeTakeFirstOrThrow(),
      deployment: await t.container.db
        .selectFrom('deployments')
        .select(['status', 'rollout_worker_id'])
        .where('id', '=', deployment.id)
        .executeTakeFirstOrThrow(),
    };

    first.child.kill('SIGKILL');
    await first.exited;
    await locker.query('commit');
    await locker.end();
    embeddings.release();

    restartedAt = performance.now();
    second = startWorker(workerEnv());
    workers.push(second);
    await second.ready;
    console.info(`worker B: started → ready ${seconds(performance.now() - restartedAt)}`);
  });

  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

  const documentDone = (id: string) =>
    waitFor(
      `the ingestion of ${id} to finish`,
      async () => {
        const row = await t.container.db
          .selectFrom('kb_documents')
          .select(['status', 'attempt', 'chunk_count', 'embedding_status', 'worker_id'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        return row.status === 'completed' || row.status === 'failed' ? row : undefined;
      },
      second,
    );

  it('worker A held both tasks when it was killed', () => {
    expect(held.document.status).toBe('processing');
    expect(held.document.worker_id).not.toBeNull();
    expect(held.deployment).toEqual({ status: 'deploying', rollout_worker_id: held.document.worker_id });
  });

  it('the restarted worker completes the ingestion, as a second attempt', async () => {
    const document = await documentDone(documentId);
    console.info(`worker B: restart → ingestion completed ${seconds(performance.now() - restartedAt)}`);
    expect(document).toMatchObject({ status: 'completed', attempt: 2, embedding_status: 'completed' });
  });

  it('the restarted worker runs the roll-out again and activates the deployment once', async () => {
    const rollout = await waitFor(
      'the roll-out to finish',
      async () => {
        const row = await t.container.db
          .selectFrom('deployments')
          .select(['status', 'error'])
          .where('id', '=', deploymentId)
          .executeTakeFirstOrThrow();
        return row.status === 'deploying' ? undefined : row;
      },
      second,
    );
    console.info(`worker B: restart → roll-out finished ${seconds(performance.now() - restartedAt)}`);
    expect(rollout).toEqual({ status: 'active', error: null });
    const logs = (await logsOf(t.app, tenant, deploymentId)).map((entry) => entry.message);
    expect(logs).toContain('Roll-out attempt 1 was interrupted (its worker stopped); it runs again');
    expect(logs.filter((message) => message.includes('deploying → active'))).toHaveLength(1);
  });

  it('leaves the document with exactly the chunks of an uninterrupted ingestion of the same text', async () => {
    const document = await documentDone(documentId);
    const again = await uploadArticle(t.app, tenant.headers, { document_title: 'Shipping again', content });
    const baselineId = again.document_id.slice(4);
    expect(await documentDone(baselineId)).toMatchObject({ status: 'completed' });
    const chunks = await sql<{ document_id: string; n: number; ordinals: number }>`
      select document_id, count(*)::int as n, count(distinct ordinal)::int as ordinals from kb_chunks
      where document_id in (${documentId}, ${baselineId}) group by document_id`.execute(t.container.db);
    const byDocument = new Map(chunks.rows.map((row) => [row.document_id, row]));
    const baseline = byDocument.get(baselineId)!;
    expect(baseline.n).toBeGreaterThan(1);
    expect(byDocument.get(documentId)).toMatchObject({ n: baseline.n, ordinals: baseline.n });
    expect(document.chunk_count).toBe(baseline.n);
  });
});
