/**
 * A worker process killed with SIGKILL while its webhook deliveries are in flight: the receiver
 * holds the requests, the worker dies (before its 10 s time limit), a second worker starts; once
 * the dead worker's leases run out (WEBHOOK_LEASE_MS, 11 s here) the second sends every delivery again with the same webhook-id, and each
 * ends succeeded with the one attempt that was answered on record. Nothing is lost, nothing is
 * recorded twice. The worker processes run the project's CLI (`switchboard worker`) on a database
 * of their own; the API side is a test app without workers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import {
  startWorkerProcess as startWorker,
  stopWorkerProcesses,
  type WorkerProcess as Worker,
} from './helpers/processes.js';
import { createScratchDatabase } from './helpers/scratch-db.js';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js';

const JOBS_SCHEMA = 'jobs_webhooks_crash';

async function until(what: string, check: () => Promise<boolean> | boolean, worker?: Worker) {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${worker?.output() ?? ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let t: TestApp;
let receiver: Receiver;
const workers: Worker[] = [];

const workerEnv = () => ({
  NODE_ENV: 'test',
  LOG_LEVEL: 'info',
  DATABASE_URL: scratch.url,
  JOBS_SCHEMA,
  RUN_WORKERS: 'true',
  EMBEDDINGS_PROVIDER: 'none',
  ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '10000',
  // The lease outlives the time limit (by 30 s by default; by one here, so the test waits 11 s).
  WEBHOOK_LEASE_MS: '11000',
});

beforeAll(async () => {
  scratch = await createScratchDatabase();
  const handle = createDatabase(scratch.url, 2);
  await migrateToLatest(handle.db);
  await handle.close();
  receiver = await startReceiver();
  t = await createTestApp({
    DATABASE_URL: scratch.url,
    JOBS_SCHEMA,
    ALLOW_PRIVATE_URLS: 'true',
    EMBEDDINGS_PROVIDER: 'none',
  });
});

afterAll(async () => {
  await stopWorkerProcesses(workers);
  await t?.close();
  await receiver?.close();
  await scratch?.drop();
});

describe('a worker killed mid-delivery', () => {
  let tenant: TestTenant;
  let webhookId: string;
  let firstIds: string[];

  beforeAll(async () => {
    tenant = await createTenant(t.container, 'developer');
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/public/webhooks',
      headers: tenant.headers,
      payload: { url: receiver.url, events: ['notification.created'] },
    });
    expect(created.statusCode).toBe(201);
    webhookId = created.json<{ id: string }>().id;
    receiver.secrets.push(created.json<{ secret: string }>().secret);
    receiver.answer = () => ({ hold: true });

    const first = startWorker(workerEnv());
    workers.push(first);
    await first.ready;
    for (let i = 0; i < 3; i++) {
      await t.container.db.transaction().execute((trx) =>
        t.container.notifications.notify(trx, {
          companyId: tenant.companyId,
          notificationType: 'system',
          category: 'system',
          title: `Event ${i}`,
          message: 'Sent while the worker dies',
        }),
      );
    }
    // The endpoint allows four in flight: all three are at the receiver, held.
    await until('three held deliveries', () => receiver.held() === 3, first);
    firstIds = receiver.received.map((message) => message.id);
    first.child.kill('SIGKILL');
    await first.exited;
    receiver.answer = () => ({ status: 200 });
    const second = startWorker(workerEnv());
    workers.push(second);
    await second.ready;
    await until(
      'every delivery to succeed',
      async () => {
        const rows = await t.container.db
          .selectFrom('webhook_deliveries')
          .select('status')
          .where('endpoint_id', '=', webhookId)
          .execute();
        return rows.length === 3 && rows.every((row) => row.status === 'succeeded');
      },
      second,
    );
  }, 180_000);

  it('sends each delivery again with the same webhook-id, verified, and records one attempt each', async () => {
    expect(new Set(firstIds).size).toBe(3);
    const again = receiver.received.slice(3);
    expect(again.map((message) => message.id).sort()).toEqual([...firstIds].sort());
    expect(receiver.received.every((message) => message.verifiedWith === 0)).toBe(true);
    for (const id of firstIds) {
      const bodies = receiver.received.filter((message) => message.id === id).map((message) => message.body);
      expect(bodies).toHaveLength(2);
      expect(bodies[0]).toBe(bodies[1]);
    }
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/public/webhooks/${webhookId}/deliveries`,
      headers: tenant.headers,
    });
    const deliveries = res.json<{ data: { status: string; attempts: { response_status: number }[] }[] }>().data;
    expect(deliveries).toHaveLength(3);
    for (const delivery of deliveries) {
      expect(delivery.status).toBe('succeeded');
      expect(delivery.attempts.map((attempt) => attempt.response_status)).toEqual([200]);
    }
  });
});
