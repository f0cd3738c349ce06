/**
 * An event of a new vendor thread is claimed by the instance that accepts it, in the acceptance
 * statement itself: no job, no second transaction. The claim is as durable as the event: a
 * service killed mid-answer leaves the event held by a dead worker, and the sweep of another
 * instance hands it back — the customer gets one reply. An event of an existing thread is claimed
 * under the lock the acceptance took, never beside another event of its thread.
 */
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import type { InboundEvent } from '../src/modules/channels/channels.inbound.js';
import * as channelsRepo from '../src/modules/channels/channels.repo.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { allDone, channelEvents, channelSetup, type ChannelSetup } from './helpers/channels.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { childEnv, listeningUrl, start, waitFor, type Started } from './helpers/processes.js';
import { createScratchDatabase } from './helpers/scratch-db.js';
import { startSlackPeer, type SlackPeer } from './helpers/slack-peer.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const ANSWER = 'Your parcel left the depot this morning.';
/** The job queue both instances share (the database is this file's own). */
const JOBS_SCHEMA = 'jobs_channels_claim';

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let t: TestApp;
let slack: SlackPeer;
let model: FakeOpenAi;
let setup: ChannelSetup;
let service: Started | undefined;
/** The first question to the model hangs after its first token (the service is killed meanwhile). */
let hang = true;

beforeAll(async () => {
  scratch = await createScratchDatabase();
  const handle = createDatabase(scratch.url, 2);
  await migrateToLatest(handle.db);
  await handle.close();
  slack = await startSlackPeer();
  model = await startFakeOpenAi(() =>
    hang ? { tokens: ['Your parcel ', 'left'], hangAfter: 1 } : { tokens: [ANSWER] },
  );
  t = await createTestApp({
    DATABASE_URL: scratch.url,
    LLM_PROVIDERS: fakeProviders(model),
    ALLOW_PRIVATE_URLS: 'true',
    RUN_WORKERS: 'true',
    EMBEDDINGS_PROVIDER: 'none',
    JOBS_SCHEMA,
  });
  setup = await channelSetup(
    t.app,
    t.container,
    'slack',
    { bot_token: slack.token, channel: 'C0SUPPORT', signing_secret: slack.signingSecret, base_url: slack.baseUrl },
    { model: 'fake:gpt-test' },
  );
}, 120_000);

afterAll(async () => {
  if (service && service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  await service?.exited;
  await t?.close();
  await Promise.all([slack?.close(), model?.close()]);
  await scratch?.drop();
});

const answerJobs = async (eventId: string) =>
  Number(
    (
      await sql<{ count: string }>`select count(*) as count from ${sql.table(`${JOBS_SCHEMA}.job`)}
        where name = 'channels.answer' and data->>'eventId' = ${eventId}`.execute(t.container.db)
    ).rows[0]!.count,
  );

describe('claiming at acceptance', () => {
  it('holds a new thread’s event from the acceptance on; killed mid-answer, another instance replies once', async () => {
    service = start(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: childEnv({
        NODE_ENV: 'test',
        DATABASE_URL: scratch.url,
        PORT: '0',
        HOST: '127.0.0.1',
        RUN_WORKERS: 'true',
        LOG_LEVEL: 'info',
        LLM_PROVIDERS: fakeProviders(model),
        ALLOW_PRIVATE_URLS: 'true',
        EMBEDDINGS_PROVIDER: 'none',
        JOBS_SCHEMA,
      }),
    });
    const base = (await listeningUrl(service, 100_000)).replace(/\/$/, '');
    const body = slack.envelope({
      type: 'message',
      channel: 'D0CRASH',
      channel_type: 'im',
      user: 'U0CUSTOMER',
      text: 'Where is my parcel?',
      ts: '1700000100.000100',
    });
    const res = await fetch(`${base}/channels/slack/${setup.deploymentId}/events`, {
      method: 'POST',
      headers: slack.sign(body),
      body,
    });
    expect(res.status).toBe(200);
    // Acknowledged: the event is already held by the accepting instance's worker, with no job.
    const [event] = await channelEvents(t.container, setup.deploymentId);
    expect(event!.worker_id).not.toBeNull();
    expect(event!.worker_id).not.toBe(t.container.queue.workerId());
    expect(event!.state).toBe('queued');
    expect(await answerJobs(event!.id)).toBe(0);

    // Mid-answer (the model sent its first token and hangs), the service is killed.
    await waitFor(() => model.requests.length === 1, 'the question to reach the model');
    service.child.kill('SIGKILL');
    await service.exited;
    hang = false;
    const before = slack.posted.length;

    // The sweep of the other instance hands the dead worker's event back; it is answered once.
    await waitFor(async () => {
      await t.container.queue.sweep();
      return slack.posted.length > before;
    }, 'the reply from the other instance');
    await allDone(t.container, setup.deploymentId);
    const replies = slack.posted.filter((posted) => posted.thread_ts === '1700000100.000100');
    expect(replies).toHaveLength(1);
    expect(replies[0]!.blocks?.[0]?.text?.text).toBe(ANSWER);
    const row = await t.container.db
      .selectFrom('channel_events')
      .select(['attempts', 'worker_id', 'state'])
      .where('id', '=', event!.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ attempts: 2, worker_id: null, state: 'done' });
  });

  it('writes a thread-starting message in one statement only when its thread and keys are new', async () => {
    const deployment = { id: setup.deploymentId, company_id: setup.tenant.companyId, channel: 'slack' as const };
    const start = (n: number, threadKey = `D0START:1700000300.00010${n}`): InboundEvent => ({
      kind: 'message',
      threadKey,
      keys: [`event:EvSTART${n}`, `msg:D0START:1700000300.00010${n}`],
      replyTo: { channel: 'D0START', thread_ts: `1700000300.00010${n}` },
      input: { text: `hello ${n}`, user: null },
      startsThread: true,
    });
    const db = t.container.db;
    // Delivered twice at once (a retry racing the original): one write, held; the other writes nothing.
    const raced = await Promise.all([
      channelsRepo.acceptThreadStart(db, deployment, start(1), 900_101),
      channelsRepo.acceptThreadStart(db, deployment, start(1), 900_102),
    ]);
    const held = raced.filter((event) => event !== undefined);
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({
      attempts: 1,
      state: 'queued',
      thread: { thread_key: 'D0START:1700000300.000101' },
    });
    // Redelivered later: nothing written (the caller's transaction then drops it as a duplicate).
    expect(await channelsRepo.acceptThreadStart(db, deployment, start(1), 900_103)).toBeUndefined();
    const dropped = await db
      .transaction()
      .execute((trx) => channelsRepo.acceptEvents(trx, deployment, [start(1)], { workerId: 900_103, max: 1 }));
    expect(dropped).toMatchObject({ claimed: [], waiting: [], dropped: 1 });
    // New keys in a thread that exists: nothing written here; the transaction writes it, waiting.
    expect(
      await channelsRepo.acceptThreadStart(db, deployment, start(2, 'D0START:1700000300.000101'), 900_104),
    ).toBeUndefined();
    const waiting = await db.transaction().execute((trx) =>
      channelsRepo.acceptEvents(trx, deployment, [start(2, 'D0START:1700000300.000101')], {
        workerId: 900_104,
        max: 1,
      }),
    );
    expect(waiting.claimed).toEqual([]);
    expect(waiting.waiting).toHaveLength(1);
    const events = (await channelEvents(t.container, setup.deploymentId)).filter((event) =>
      event.thread_key.startsWith('D0START:'),
    );
    expect(events.map((event) => event.worker_id)).toEqual([held[0]!.worker_id, null]);
  });

  it('claims one event of a thread at a time when two acceptances of its first messages race', async () => {
    const deployment = { id: setup.deploymentId, company_id: setup.tenant.companyId, channel: 'slack' as const };
    const message = (n: number): InboundEvent => ({
      kind: 'message',
      threadKey: 'D0RACE:1700000200.000100',
      keys: [`event:EvRACE${n}`],
      replyTo: { channel: 'D0RACE', thread_ts: '1700000200.000100' },
      input: { text: `question ${n}`, user: null },
    });
    // Two instances (worker ids far from any registered one) accept one message each at once.
    const accept = (n: number, workerId: number) =>
      t.container.db.transaction().execute(async (trx) => {
        const accepted = await channelsRepo.acceptEvents(trx, deployment, [message(n)], { workerId, max: 1 });
        const waiting = accepted.waiting[0];
        const next = waiting ? await channelsRepo.claimNext(trx, waiting.thread, workerId) : undefined;
        return { claimed: accepted.claimed.length, next: next?.id };
      });
    const results = await Promise.all([accept(1, 900_001), accept(2, 900_002)]);
    // The first to write the thread holds its event; the other sees it held and takes nothing.
    expect(results.map((result) => result.claimed).sort()).toEqual([0, 1]);
    expect(results.every((result) => result.next === undefined)).toBe(true);
    const events = (await channelEvents(t.container, setup.deploymentId)).filter(
      (event) => event.thread_key === 'D0RACE:1700000200.000100',
    );
    expect(events).toHaveLength(2);
    expect(events.filter((event) => event.worker_id !== null)).toHaveLength(1);
    // A follow-up of the thread, accepted once the holder finished: claimed under the thread lock.
    const held = events.find((event) => event.worker_id !== null)!;
    await t.container.db
      .updateTable('channel_events')
      .set({ state: 'done', worker_id: null })
      .where('id', '=', held.id)
      .execute();
    const third = await accept(3, 900_003);
    expect(third.claimed).toBe(0);
    // The thread's oldest unfinished event comes first: the one the race left waiting.
    expect(third.next).toBe(events.find((event) => event.worker_id === null)!.id);
  });
});
