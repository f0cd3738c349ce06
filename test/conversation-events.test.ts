/**
 * The conversation events bus and the delivery seam: an event staged in a transaction on one
 * instance reaches a conversation's events stream on another (LISTEN/NOTIFY, the message read
 * from the database there); the stream starts with the current status; other companies get 404;
 * a channel's deliverer is called with the reply, and its failure or slowness is reported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chatSetup } from './helpers/chat.js';
import { readFrames, type Frame } from './helpers/sse-client.js';
import { appendMessages } from '../src/modules/chat/chat.repo.js';
import type { OutboundReply } from '../src/modules/chat/index.js';

let one: TestApp;
let two: TestApp;
let baseTwo: string;
beforeAll(async () => {
  one = await createTestApp();
  two = await createTestApp();
  baseTwo = await two.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await one?.close();
  await two?.close();
});

async function newConversation(t: TestApp) {
  const setup = await chatSetup(t.app, t.container);
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/chat/conversations',
    headers: setup.token,
    payload: { agent_id: setup.agentId, user: 'cust-1' },
  });
  expect(res.statusCode).toBe(201);
  return { setup, conversationId: res.json<{ id: string }>().id };
}

/** Reads frames until `until` says stop, leaving the stream open; returns them. */
async function collect(frames: AsyncGenerator<Frame>, until: (frame: Frame) => boolean) {
  const seen: Frame[] = [];
  for (;;) {
    const next = await frames.next();
    if (next.done) return seen;
    seen.push(next.value);
    if (until(next.value)) return seen;
  }
}

describe('conversation events', () => {
  it('reach a stream on another instance after the commit, with the current status first', async () => {
    const { setup, conversationId } = await newConversation(one);
    const abort = new AbortController();
    const response = await fetch(`${baseTwo}/api/v1/chat/conversations/${conversationId}/events`, {
      headers: setup.token,
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const frames = readFrames(response);
    const [first] = await collect(frames, () => true);
    expect(first).toMatchObject({
      type: 'handoff',
      data: { type: 'handoff', conversation_id: conversationId, status: 'bot', assignee_id: null },
    });
    // The stream on `two` is subscribed; `one` writes a message and its event in one transaction.
    await waitFor(() => two.container.chat.events.subscriberCount > 0);
    const events = one.container.chat.events;
    const staged = await one.container.db.transaction().execute(async (trx) => {
      const [row] = await appendMessages(trx, setup.tenant.companyId, conversationId, [
        { role: 'user', content: 'Is anyone there? مرحبا' },
      ]);
      const event = events.make({
        type: 'message',
        company_id: setup.tenant.companyId,
        conversation_id: conversationId,
        message: {
          id: row!.id,
          role: 'user',
          content: row!.content,
          author_id: null,
          delivery_status: null,
          delivery_error: null,
          created_at: row!.created_at.toISOString(),
        },
      });
      await events.stage(trx, [event]);
      return event;
    });
    events.publish([staged]);
    const [message] = await collect(frames, () => true);
    abort.abort();
    expect(message).toMatchObject({
      id: staged.id,
      type: 'message',
      data: { conversation_id: conversationId, message: { role: 'user', content: 'Is anyone there? مرحبا' } },
    });
    expect(message!.data).not.toHaveProperty('company_id');
  });

  it('is a 404 for a conversation of another company, and a 400 for an id that is not a UUID', async () => {
    const { conversationId } = await newConversation(one);
    const other = await chatSetup(one.app, one.container);
    const res = await one.app.inject({
      method: 'GET',
      url: `/api/v1/chat/conversations/${conversationId}/events`,
      headers: other.token,
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'NotFound', statusCode: 404 });
    const bad = await one.app.inject({
      method: 'GET',
      url: '/api/v1/chat/conversations/not-a-uuid/events',
      headers: other.token,
    });
    expect(bad.statusCode).toBe(400);
    expect(one.container.chat.events.subscriberCount).toBe(0);
  });
});

describe('the delivery registry', () => {
  const reply: OutboundReply = {
    companyId: 'c',
    conversationId: 'v',
    channel: 'slack',
    deploymentId: null,
    agentId: 'a',
    externalUserId: 'U1',
    messageId: 'm',
    content: 'Hello from a person',
    authorId: 'u',
    authorName: 'Dana',
    createdAt: new Date(),
  };

  it('calls the channel’s deliverer and reports its refusal in its own words', async () => {
    const registry = one.container.chat.deliveries;
    const seen: OutboundReply[] = [];
    registry.register('slack', {
      deliver: async (sent) => {
        seen.push(sent);
        if (sent.content.includes('fail')) throw new Error('Slack refused the message: channel_not_found');
      },
    });
    expect(registry.has('slack')).toBe(true);
    expect(registry.has('api')).toBe(false);
    expect(await registry.deliver(reply)).toEqual({ status: 'delivered', error: null });
    expect(seen).toEqual([reply]);
    expect(await registry.deliver({ ...reply, content: 'please fail' })).toEqual({
      status: 'failed',
      error: 'Slack refused the message: channel_not_found',
    });
    // A channel without a deliverer is delivered by the conversation's events.
    expect(await registry.deliver({ ...reply, channel: 'api' })).toEqual({ status: 'delivered', error: null });
  });

  it('gives up on a deliverer slower than the time limit', async () => {
    const slow = await createTestApp({ INTEGRATION_TIMEOUT_MS: '1000' });
    try {
      slow.container.chat.deliveries.register('teams', {
        deliver: (_sent, signal) =>
          new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))),
      });
      const outcome = await slow.container.chat.deliveries.deliver({ ...reply, channel: 'teams' });
      expect(outcome.status).toBe('failed');
      expect(outcome.error).toContain('did not accept the reply within 1000 ms');
    } finally {
      await slow.close();
    }
  });
});

async function waitFor(check: () => boolean) {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}
