/**
 * Webhook deliveries end to end: events recorded in the transaction of their change, fanned out
 * and sent to a real receiver on a loopback port that verifies every message with the official
 * `standardwebhooks` library. Retries run on a shortened schedule (WEBHOOK_RETRY_SCHEDULE); the
 * production schedule is the default of src/config.ts. Receivers that fail, redirect, answer huge
 * bodies, are slow or hang; one stuck endpoint does not hold another's deliveries.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chat, chatSetup } from './helpers/chat.js';
import { createAgent, createDeployment, control } from './helpers/deployments.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { createEndUser, insertQuery } from './helpers/support-data.js';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js';

let t: TestApp;
const receivers: Receiver[] = [];
beforeAll(async () => {
  t = await createTestApp({
    ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms',
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_TIMEOUT_MS: '1500',
    WEBHOOK_MAX_RESPONSE_KB: '16',
    WEBHOOK_ENDPOINT_CONCURRENCY: '2',
  });
  t.container.webhooks.dispatcher.start();
});
afterAll(async () => {
  await t.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

const BASE = '/api/public/webhooks';

interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: { at: string; response_status: number | null; latency_ms: number; error: string | null }[];
  next_attempt_at: string | null;
}

async function receiver(): Promise<Receiver> {
  const started = await startReceiver();
  receivers.push(started);
  return started;
}

/** A webhook of the tenant's company pointing at `at`, its secret added to the receiver's. */
async function endpoint(tenant: TestTenant, at: Receiver, events: string[], url = at.url) {
  const res = await t.app.inject({ method: 'POST', url: BASE, headers: tenant.headers, payload: { url, events } });
  expect(res.statusCode).toBe(201);
  const created = res.json<{ id: string; secret: string }>();
  at.secrets.push(created.secret);
  return created;
}

async function deliveries(tenant: TestTenant, id: string): Promise<Delivery[]> {
  const res = await t.app.inject({ method: 'GET', url: `${BASE}/${id}/deliveries?limit=100`, headers: tenant.headers });
  expect(res.statusCode).toBe(200);
  return res.json<{ data: Delivery[] }>().data;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A team notification written the way the platform writes one (in a transaction of its own). */
async function notify(tenant: TestTenant, title = 'Agent sent an e-mail', rollback = false) {
  return t.container.db
    .transaction()
    .execute(async (trx) => {
      const { id } = await t.container.notifications.notify(trx, {
        companyId: tenant.companyId,
        notificationType: 'email_sent',
        category: 'agent',
        title,
        message: 'The agent wrote to support@example.com',
        metadata: { recipient_email: 'support@example.com' },
      });
      if (rollback) throw new Error('rolled back');
      return id;
    })
    .catch((error: Error) => (rollback && error.message === 'rolled back' ? null : Promise.reject(error)));
}

describe('a committed change reaches the receiver, signed', () => {
  it('delivers notification.created once, verified by standardwebhooks, with the notification as the API shows it', async () => {
    const tenant = await createTenant(t.container);
    const at = await receiver();
    const hook = await endpoint(tenant, at, ['notification.created']);
    const id = (await notify(tenant))!;
    const [message] = await at.waitFor(1);
    expect(message!.verifiedWith).toBe(0);
    expect(message!.contentType).toBe('application/json');
    expect(message!.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Object.keys(message!.payload).sort()).toEqual(['data', 'timestamp', 'type']);
    expect(message!.payload.type).toBe('notification.created');
    const shown = await t.app.inject({ method: 'GET', url: `/team-notifications/${id}`, headers: tenant.headers });
    expect(shown.statusCode).toBe(200);
    const { status: _status, read_at: _readAt, ...rest } = shown.json<Record<string, unknown>>();
    expect(message!.payload.data).toMatchObject(rest);
    const [delivery] = await until(
      () => deliveries(tenant, hook.id),
      (list) => list[0]?.status === 'succeeded',
      'the delivery to succeed',
    );
    expect(delivery!.id).toBe(message!.id);
    expect(delivery!.attempts).toHaveLength(1);
    expect(delivery!.attempts[0]).toMatchObject({ response_status: 204, error: null });
    expect(delivery!.next_attempt_at).toBeNull();
    expect(at.received).toHaveLength(1);
  });

  it('records nothing for a rolled-back change, an unsubscribed type or a disabled endpoint', async () => {
    const tenant = await createTenant(t.container);
    const at = await receiver();
    const subscribed = await endpoint(tenant, at, ['notification.created']);
    const other = await endpoint(tenant, at, ['document.failed']);
    const disabled = await endpoint(tenant, at, ['notification.created']);
    await t.app.inject({
      method: 'PATCH',
      url: `${BASE}/${disabled.id}`,
      headers: tenant.headers,
      payload: { enabled: false },
    });
    expect(await notify(tenant, 'never committed', true)).toBeNull();
    await notify(tenant, 'committed');
    const [message] = await at.waitFor(1);
    expect(message!.payload.data).toMatchObject({ title: 'committed' });
    await until(
      () => deliveries(tenant, subscribed.id),
      (list) => list[0]?.status === 'succeeded',
      'delivery',
    );
    expect(await deliveries(tenant, other.id)).toEqual([]);
    expect(await deliveries(tenant, disabled.id)).toEqual([]);
    const events = await t.container.db
      .selectFrom('webhook_events')
      .select('type')
      .where('company_id', '=', tenant.companyId)
      .execute();
    expect(events).toEqual([{ type: 'notification.created' }]);
    expect(at.received).toHaveLength(1);
  });

  it('sends deployment.status_changed and support_query.created|updated|resolved with their API records', async () => {
    const tenant = await createTenant(t.container);
    const at = await receiver();
    await endpoint(tenant, at, [
      'deployment.status_changed',
      'support_query.created',
      'support_query.updated',
      'support_query.resolved',
    ]);
    const agent = await createAgent(t.container, tenant);
    const deployment = await createDeployment(t.app, tenant, agent.id);
    expect((await control(t.app, tenant, deployment.id, 'start')).statusCode).toBe(200);
    const [changed] = await at.waitFor(1);
    expect(changed!.payload).toMatchObject({
      type: 'deployment.status_changed',
      data: { id: deployment.id, status: 'deploying' },
    });
    const shownDeployment = await t.app.inject({
      method: 'GET',
      url: `/api/public/deployments/${deployment.id}`,
      headers: tenant.headers,
    });
    expect(Object.keys(changed!.payload.data).sort()).toEqual(Object.keys(shownDeployment.json()).sort());

    const userId = await createEndUser(t.container, tenant.companyId);
    const query = await insertQuery(t.container, tenant.companyId, {
      agentId: agent.id,
      userId,
      createdAt: new Date(),
      status: 'open',
    });
    await t.container.db
      .updateTable('support_queries')
      .set({ status: 'in_progress' })
      .where('id', '=', query.id)
      .execute();
    await t.container.db
      .updateTable('support_queries')
      .set({ status: 'resolved', resolved_at: new Date() })
      .where('id', '=', query.id)
      .execute();
    const all = await at.waitFor(4);
    const queryMessages = all.filter((message) => message.payload.type.startsWith('support_query.'));
    expect(queryMessages.map((message) => message.payload.type).sort()).toEqual([
      'support_query.created',
      'support_query.resolved',
      'support_query.updated',
    ]);
    const shown = await t.app.inject({ method: 'GET', url: `/customer-support/${query.id}`, headers: tenant.headers });
    for (const message of queryMessages) {
      expect(message.verifiedWith).toBe(0);
      expect(Object.keys(message.payload.data).sort()).toEqual(Object.keys(shown.json()).sort());
    }
  });
});

describe('a chat turn that hands the conversation to a person', () => {
  it('sends support_query.created, conversation.handoff and the team notification, each as the API shows it', async () => {
    const setup = await chatSetup(t.app, t.container);
    const at = await receiver();
    await endpoint(setup.tenant, at, [
      'support_query.created',
      'support_query.updated',
      'conversation.handoff',
      'notification.created',
    ]);
    const res = await chat(t.app, setup, { query: 'I want to talk to a human please', user: 'cust-webhooks' });
    expect(res.statusCode, res.body).toBe(200);
    const conversationId = res.json<{ conversation_id: string }>().conversation_id;
    const types = () => at.received.map((message) => message.payload.type);
    await until(
      async () => types(),
      (seen) =>
        ['support_query.created', 'conversation.handoff', 'notification.created'].every((type) => seen.includes(type)),
      'the three events',
    );
    expect(at.received.every((message) => message.verifiedWith === 0)).toBe(true);
    const handoff = at.received.find((message) => message.payload.type === 'conversation.handoff')!;
    const shown = await t.app.inject({
      method: 'GET',
      url: `/api/public/conversations/${conversationId}`,
      headers: setup.tenant.headers,
    });
    expect(shown.statusCode).toBe(200);
    expect(handoff.payload.data).toMatchObject({ id: conversationId, status: 'handoff' });
    expect(Object.keys(handoff.payload.data).sort()).toEqual(Object.keys(shown.json()).sort());
    const created = at.received.find((message) => message.payload.type === 'support_query.created')!;
    expect(created.payload.data).toMatchObject({ conversation_id: conversationId, company_id: setup.tenant.companyId });
    expect(at.received.filter((message) => message.payload.type === 'conversation.handoff')).toHaveLength(1);
  });
});

describe('test messages, rotation and manual retries', () => {
  it('sends webhook.test to the endpoint alone and logs the attempt', async () => {
    const tenant = await createTenant(t.container);
    const at = await receiver();
    const hook = await endpoint(tenant, at, ['document.failed']);
    const res = await t.app.inject({ method: 'POST', url: `${BASE}/${hook.id}/test`, headers: tenant.headers });
    expect(res.statusCode).toBe(202);
    const queued = res.json<Delivery>();
    expect(queued).toMatchObject({ event_type: 'webhook.test', status: 'pending', attempts: [] });
    const [message] = await at.waitFor(1);
    expect(message).toMatchObject({ id: queued.id, verifiedWith: 0 });
    expect(message!.payload).toMatchObject({ type: 'webhook.test', data: { webhook_id: hook.id } });
    await until(
      () => deliveries(tenant, hook.id),
      (list) => list[0]?.status === 'succeeded',
      'the test delivery',
    );
  });

  it('signs with both secrets for a day after a rotation; each verifies on its own', async () => {
    const tenant = await createTenant(t.container);
    const oldOnly = await receiver();
    const hook = await endpoint(tenant, oldOnly, ['notification.created']);
    const rotated = await t.app.inject({
      method: 'POST',
      url: `${BASE}/${hook.id}/rotate-secret`,
      headers: tenant.headers,
    });
    const newSecret = rotated.json<{ secret: string }>().secret;
    await notify(tenant);
    const [message] = await oldOnly.waitFor(1);
    const signatures = message!.signature.split(' ');
    expect(signatures).toHaveLength(2);
    // The receiver still on the old secret accepts it; so does one on the new secret alone.
    expect(message!.verifiedWith).toBe(0);
    const { Webhook } = await import('standardwebhooks');
    const headers = {
      'webhook-id': message!.id,
      'webhook-timestamp': message!.timestamp,
      'webhook-signature': message!.signature,
    };
    expect(() => new Webhook(newSecret).verify(message!.body, headers)).not.toThrow();
    expect(() => new Webhook(hook.secret).verify(message!.body, headers)).not.toThrow();
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(message!.body, headers),
    ).toThrow();
  });

  it('retries a delivery by hand with the same webhook-id (202)', async () => {
    const tenant = await createTenant(t.container);
    const at = await receiver();
    const hook = await endpoint(tenant, at, ['notification.created']);
    await notify(tenant);
    const [first] = await at.waitFor(1);
    const [delivered] = await until(
      () => deliveries(tenant, hook.id),
      (list) => list[0]?.status === 'succeeded',
      'delivery',
    );
    const res = await t.app.inject({
      method: 'POST',
      url: `${BASE}/${hook.id}/deliveries/${delivered!.id}/retry`,
      headers: tenant.headers,
    });
    expect(res.statusCode).toBe(202);
    expect(res.json<Delivery>()).toMatchObject({ id: delivered!.id, status: 'pending' });
    const both = await at.waitFor(2);
    expect(both[1]!.id).toBe(first!.id);
    expect(both[1]!.body).toBe(first!.body);
    expect(both[1]!.verifiedWith).toBe(0);
    const [after] = await until(
      () => deliveries(tenant, hook.id),
      (list) => list[0]?.status === 'succeeded' && list[0].attempts.length === 2,
      'the second attempt',
    );
    expect(after!.attempts.map((attempt) => attempt.response_status)).toEqual([204, 204]);
  });
});

describe('failing receivers', () => {
  it('retries on the schedule, then fails the delivery, disables the endpoint and tells the team', async () => {
    const tenant = await createTenant(t.container);
    const at = await receiver();
    at.answer = () => ({ status: 500, body: 'boom' });
    const hook = await endpoint(tenant, at, ['document.ingested']);
    await t.app.inject({ method: 'POST', url: `${BASE}/${hook.id}/test`, headers: tenant.headers });
    await at.waitFor(1);
    // A test message is one attempt and never disables an endpoint.
    const [test] = await until(
      () => deliveries(tenant, hook.id),
      (list) => list[0]?.status === 'failed',
      'the test to fail',
    );
    expect(test!.attempts).toHaveLength(1);
    await t.container.db
      .insertInto('webhook_events')
      .values({ company_id: tenant.companyId, type: 'document.ingested', resource_id: randomUUID() })
      .execute();
    const list = await until(
      () => deliveries(tenant, hook.id),
      (items) => items.length === 2 && items[0]!.status === 'failed',
      'the delivery to fail',
    );
    const failed = list[0]!;
    expect(failed.attempts).toHaveLength(4);
    expect(failed.attempts.every((attempt) => attempt.response_status === 500 && attempt.error === 'HTTP 500')).toBe(
      true,
    );
    expect(failed.next_attempt_at).toBeNull();
    expect(
      at.received.filter((message) => message.id === failed.id).every((message) => message.verifiedWith === 0),
    ).toBe(true);
    const shown = await t.app.inject({ method: 'GET', url: `${BASE}/${hook.id}`, headers: tenant.headers });
    expect(shown.json()).toMatchObject({ enabled: false });
    expect(shown.json<{ disabled_reason: string }>().disabled_reason).toContain(failed.id);
    const notes = await t.app.inject({ method: 'GET', url: '/team-notifications?limit=10', headers: tenant.headers });
    const titles = notes.json<{ data: { title: string; message: string }[] }>().data;
    const note = titles.find((item) => item.title === 'Webhook endpoint disabled');
    expect(note?.message).toContain(new URL(at.url).origin);
    expect(note?.message).not.toContain('/hooks');
  });

  it("waits at least the receiver's Retry-After before the next attempt", async () => {
    const tenant = await createTenant(t.container);
    const at = await receiver();
    at.answer = () => ({ status: 503, retryAfter: '120' });
    const hook = await endpoint(tenant, at, ['notification.created']);
    await notify(tenant);
    const [delivery] = await until(
      () => deliveries(tenant, hook.id),
      (list) => (list[0]?.attempts.length ?? 0) === 1,
      'the first attempt',
    );
    expect(delivery!.status).toBe('pending');
    const wait = Date.parse(delivery!.next_attempt_at!) - Date.parse(delivery!.attempts[0]!.at);
    expect(wait).toBeGreaterThanOrEqual(120_000);
  });

  it.each([
    [
      'redirects',
      { redirect: 'http://example.com/elsewhere' },
      /redirected \(HTTP 307\) to example\.com; redirects are not followed/,
      307,
    ],
    ['answers a huge body', { hugeBytes: 8 * 1024 * 1024 }, /larger than 16384 bytes/, 200],
    ['is slower than the time limit', { delayMs: 5000, status: 200 }, /no answer within 1500 ms/, null],
  ] as const)('records a failed attempt when the receiver %s', async (_what, answer, error, status) => {
    const tenant = await createTenant(t.container);
    const at = await receiver();
    at.answer = () => answer;
    const hook = await endpoint(tenant, at, ['notification.created']);
    await t.app.inject({ method: 'POST', url: `${BASE}/${hook.id}/test`, headers: tenant.headers });
    const [delivery] = await until(
      () => deliveries(tenant, hook.id),
      (list) => list[0]?.status === 'failed',
      'failure',
    );
    expect(delivery!.attempts).toHaveLength(1);
    expect(delivery!.attempts[0]!.error).toMatch(error);
    expect(delivery!.attempts[0]!.response_status).toBe(status);
  });

  it('keeps one endpoint that hangs to its concurrency limit while another gets all of its deliveries', async () => {
    const tenant = await createTenant(t.container);
    const stuck = await receiver();
    stuck.answer = () => ({ hold: true });
    const healthy = await receiver();
    await endpoint(tenant, stuck, ['notification.created']);
    await endpoint(tenant, healthy, ['notification.created']);
    for (let i = 0; i < 6; i++) await notify(tenant, `message ${i}`);
    await healthy.waitFor(6);
    expect(healthy.received.every((message) => message.verifiedWith === 0)).toBe(true);
    expect(stuck.held()).toBeLessThanOrEqual(2);
    stuck.answer = () => ({ status: 200 });
    stuck.release(200);
    await stuck.waitFor(6);
    expect(new Set(stuck.received.map((message) => message.id)).size).toBe(6);
  });
});

describe('retention', () => {
  it('deletes events, deliveries and attempts older than the retention period, nothing newer', async () => {
    const tenant = await createTenant(t.container);
    const at = await receiver();
    const hook = await endpoint(tenant, at, ['notification.created']);
    await notify(tenant);
    await at.waitFor(1);
    await until(
      () => deliveries(tenant, hook.id),
      (list) => list[0]?.status === 'succeeded',
      'delivery',
    );
    const old = new Date(Date.now() - 31 * 86_400_000);
    const [event] = await t.container.db
      .insertInto('webhook_events')
      .values({
        company_id: tenant.companyId,
        type: 'notification.created',
        resource_id: randomUUID(),
        occurred_at: old,
        dispatched_at: old,
        payload: '{}',
      })
      .returning('id')
      .execute();
    await t.container.db
      .insertInto('webhook_deliveries')
      .values({
        company_id: tenant.companyId,
        endpoint_id: hook.id,
        event_id: event!.id,
        event_type: 'notification.created',
        status: 'succeeded',
        created_at: old,
      })
      .execute();
    expect(await deliveries(tenant, hook.id)).toHaveLength(2);
    expect(await t.container.webhooks.dispatcher.sweepExpired()).toBeGreaterThanOrEqual(1);
    const left = await deliveries(tenant, hook.id);
    expect(left).toHaveLength(1);
    expect(left[0]!.status).toBe('succeeded');
  });
});
