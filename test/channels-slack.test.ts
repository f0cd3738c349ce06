/**
 * A deployment on Slack (DESIGN §12): the Events API route verifies Slack's v0 signature and its
 * five-minute window before anything else, echoes url_verification, acknowledges at once, and the
 * answering job replies in the thread through chat.postMessage — one turn per customer message,
 * however often Slack retries or delivers it twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import {
  allDone,
  channelEvents,
  channelSetup,
  conversationsOf,
  deploymentLogs,
  securityNotifications,
  waitUntil,
  type ChannelSetup,
} from './helpers/channels.js';
import { control } from './helpers/deployments.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { startSlackPeer, type SlackPeer } from './helpers/slack-peer.js';

let t: TestApp;
let slack: SlackPeer;
let model: FakeOpenAi;
let setup: ChannelSetup;
let replyText = '**Your order** has shipped. See [tracking](https://track.example.com/1Z9) & more.';

beforeAll(async () => {
  slack = await startSlackPeer();
  model = await startFakeOpenAi(() => ({ tokens: [replyText] }));
  t = await createTestApp({ LLM_PROVIDERS: fakeProviders(model), ALLOW_PRIVATE_URLS: 'true', RUN_WORKERS: 'true' });
  setup = await channelSetup(
    t.app,
    t.container,
    'slack',
    {
      bot_token: slack.token,
      channel: 'C0SUPPORT',
      signing_secret: slack.signingSecret,
      base_url: slack.baseUrl,
    },
    { model: 'fake:gpt-test' },
  );
});
afterAll(async () => {
  await t?.close();
  await slack?.close();
  await model?.close();
});

const url = (id = setup.deploymentId) => `/channels/slack/${id}/events`;

async function deliver(body: string, options: Parameters<SlackPeer['sign']>[1] = {}, id?: string) {
  return t.app.inject({ method: 'POST', url: url(id), headers: slack.sign(body, options), payload: body });
}

const dm = (text: string, ts: string, extra: Record<string, unknown> = {}) => ({
  type: 'message',
  channel: 'D0CUSTOMER',
  channel_type: 'im',
  user: 'U0CUSTOMER',
  text,
  ts,
  ...extra,
});

describe('Slack events route', () => {
  it('echoes url_verification when the request is signed', async () => {
    const body = JSON.stringify({
      token: 'x',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    });
    const res = await deliver(body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
  });

  it('answers a DM in its thread, in mrkdwn, through the chat turn', async () => {
    const before = slack.posted.length;
    const res = await deliver(slack.envelope(dm('Where is my order?', '1700000000.000100')));
    expect(res.statusCode).toBe(200);
    await waitUntil(() => slack.posted.length > before, 'the reply at the Slack peer');
    const posted = slack.posted[before]!;
    expect(posted.authorization).toBe(`Bearer ${slack.token}`);
    expect(posted.channel).toBe('D0CUSTOMER');
    expect(posted.thread_ts).toBe('1700000000.000100');
    expect(posted.blocks?.[0]?.text?.text).toBe(
      '*Your order* has shipped. See <https://track.example.com/1Z9|tracking> &amp; more.',
    );
    await allDone(t.container, setup.deploymentId);
    const [conversation] = await conversationsOf(t.container, setup.deploymentId);
    expect(conversation).toMatchObject({ external_user_id: 'U0CUSTOMER', channel: 'slack', message_count: 2 });
    // The model saw the customer's words as the user's message.
    expect(model.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: 'user', content: 'Where is my order?' });
  });

  it('continues the thread as one conversation, and a new thread root as another', async () => {
    await deliver(slack.envelope(dm('And the invoice?', '1700000000.000200', { thread_ts: '1700000000.000100' })));
    await deliver(slack.envelope(dm('Another question', '1700000000.000300')));
    await allDone(t.container, setup.deploymentId, 3);
    const conversations = await conversationsOf(t.container, setup.deploymentId);
    expect(conversations).toHaveLength(2);
    expect(conversations[0]!.message_count).toBe(4);
    expect(slack.posted.filter((p) => p.thread_ts === '1700000000.000100')).toHaveLength(2);
    expect(slack.posted.filter((p) => p.thread_ts === '1700000000.000300')).toHaveLength(1);
  });

  it('answers a retried event and a mention delivered twice exactly once', async () => {
    const before = slack.posted.length;
    const event = {
      type: 'app_mention',
      channel: 'C0GENERAL',
      user: 'U0OTHER',
      text: '<@U0BOT> hours?',
      ts: '1700000001.000100',
    };
    const body = slack.envelope(event, 'Ev0MENTION1');
    const first = await Promise.all([deliver(body), deliver(body, { retry: 1 }), deliver(body, { retry: 2 })]);
    expect(first.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    // The same message as a `message` event with its own event id: the (channel, ts) key drops it.
    await deliver(slack.envelope({ ...event, type: 'message', channel_type: 'channel' }, 'Ev0MENTION2'));
    await allDone(t.container, setup.deploymentId, 4);
    expect(slack.posted.length - before).toBe(1);
    expect(slack.posted.at(-1)).toMatchObject({ channel: 'C0GENERAL', thread_ts: '1700000001.000100' });
    expect(model.requests.at(-1)!.messages.at(-1)!.content).toBe('hours?');
    // A reply in that thread (no mention) continues it; an unrelated channel message is ignored.
    await deliver(
      slack.envelope({
        type: 'message',
        channel: 'C0GENERAL',
        channel_type: 'channel',
        user: 'U0OTHER',
        text: 'thanks',
        ts: '1700000001.000200',
        thread_ts: '1700000001.000100',
      }),
    );
    await deliver(
      slack.envelope({
        type: 'message',
        channel: 'C0GENERAL',
        channel_type: 'channel',
        user: 'U0OTHER',
        text: 'lunch?',
        ts: '1700000001.000300',
      }),
    );
    await allDone(t.container, setup.deploymentId, 5);
    expect((await channelEvents(t.container, setup.deploymentId)).length).toBe(5);
    expect(slack.posted.length - before).toBe(2);
  });

  it("delivers a person's reply (hand-off) into the conversation's thread through the same delivery", async () => {
    const before = slack.posted.length;
    const [conversation] = await conversationsOf(t.container, setup.deploymentId);
    const outcome = await t.container.chat.deliveries.deliver({
      companyId: setup.tenant.companyId,
      conversationId: conversation!.id,
      channel: 'slack',
      deploymentId: setup.deploymentId,
      agentId: setup.agentId,
      externalUserId: 'U0CUSTOMER',
      messageId: '00000000-0000-4000-8000-000000000001',
      content: 'Hi, **Dana** here — I will look into it.',
      authorId: setup.tenant.userId,
      authorName: 'Dana',
      createdAt: new Date(),
    });
    expect(outcome).toEqual({ status: 'delivered', error: null });
    expect(slack.posted.length).toBe(before + 1);
    expect(slack.posted.at(-1)).toMatchObject({ channel: 'D0CUSTOMER', thread_ts: '1700000000.000100' });
    expect(slack.posted.at(-1)!.blocks![0]!.text!.text).toBe('Hi, *Dana* here — I will look into it.');
    const elsewhere = await t.container.chat.deliveries.deliver({
      companyId: setup.tenant.companyId,
      conversationId: '00000000-0000-4000-8000-000000000002',
      channel: 'slack',
      deploymentId: setup.deploymentId,
      agentId: setup.agentId,
      externalUserId: null,
      messageId: '00000000-0000-4000-8000-000000000003',
      content: 'lost',
      authorId: setup.tenant.userId,
      authorName: 'Dana',
      createdAt: new Date(),
    });
    expect(elsewhere.status).toBe('failed');
    expect(slack.posted.length).toBe(before + 1);
  });

  it('never answers bots, its own messages or message changes', async () => {
    const before = (await channelEvents(t.container, setup.deploymentId)).length;
    for (const event of [
      dm('from a bot', '1700000002.000100', { bot_id: 'B0OTHER' }),
      dm('edited', '1700000002.000200', { subtype: 'message_changed' }),
      dm('own', '1700000002.000300', { user: 'U0BOT' }),
      { type: 'reaction_added', user: 'U0CUSTOMER', reaction: 'thumbsup', item: {} },
    ]) {
      expect((await deliver(slack.envelope(event))).statusCode).toBe(200);
    }
    expect((await channelEvents(t.container, setup.deploymentId)).length).toBe(before);
  });

  it('splits a long answer into sections of at most 3,000 characters', async () => {
    const before = slack.posted.length;
    replyText = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}: ${'word '.repeat(40)}`).join('\n\n');
    await deliver(slack.envelope(dm('Tell me everything', '1700000003.000100')));
    await waitUntil(() => slack.posted.length > before, 'the long reply');
    const blocks = slack.posted[before]!.blocks!;
    expect(blocks.length).toBeGreaterThan(2);
    expect(blocks.every((block) => block.text!.text.length <= 3000)).toBe(true);
    const words = (text: string) => text.replace(/\s+/g, ' ').trim();
    expect(words(blocks.map((block) => block.text!.text).join(' '))).toBe(words(replyText));
    replyText = 'Done.';
  });

  it('tells the customer to try again later when the model fails, once, and keeps that answer', async () => {
    const before = slack.posted.length;
    const reply = model.reply;
    model.reply = () => ({ status: 500 });
    try {
      await deliver(slack.envelope(dm('Are you there?', '1700000004.000100')));
      await allDone(t.container, setup.deploymentId, 1);
      await waitUntil(() => slack.posted.length > before, 'the apology');
    } finally {
      model.reply = reply;
    }
    const sent = slack.posted.filter((posted) => posted.thread_ts === '1700000004.000100');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.blocks?.[0]?.text?.text).toBe(
      "Sorry, I can't answer right now. Please try again in a little while.",
    );
    const event = await t.container.db
      .selectFrom('channel_events')
      .select(['state', 'answer', 'error'])
      .where('deployment_id', '=', setup.deploymentId)
      .where('thread_key', '=', 'D0CUSTOMER:1700000004.000100')
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({
      state: 'done',
      error: null,
      answer: { text: "Sorry, I can't answer right now. Please try again in a little while." },
    });
  });
});

describe('Slack refusals', () => {
  it('refuses a bad signature, a stale timestamp and missing headers with 401, writing nothing', async () => {
    const before = (await channelEvents(t.container, setup.deploymentId)).length;
    const body = slack.envelope(dm('forged', '1700000004.000100'));
    const bad = await deliver(body, { secret: 'not-the-secret' });
    expect(bad.statusCode).toBe(401);
    expect(bad.json()).toEqual({ detail: 'X-Slack-Signature does not match the body', status_code: 401 });
    const stale = await deliver(body, { timestamp: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(stale.statusCode).toBe(401);
    expect(stale.json().detail).toMatch(/five minutes/);
    const bare = await t.app.inject({
      method: 'POST',
      url: url(),
      headers: { 'content-type': 'application/json' },
      payload: body,
    });
    expect(bare.statusCode).toBe(401);
    // A signature over other bytes than the body sent.
    const tampered = await t.app.inject({
      method: 'POST',
      url: url(),
      headers: slack.sign(body),
      payload: body.replace('forged', 'forgeD'),
    });
    expect(tampered.statusCode).toBe(401);
    expect((await channelEvents(t.container, setup.deploymentId)).length).toBe(before);
  });

  it('notifies the company once for a burst of refusals', async () => {
    const other = await channelSetup(t.app, t.container, 'slack', {
      bot_token: slack.token,
      channel: 'C0SUPPORT',
      signing_secret: slack.signingSecret,
      base_url: slack.baseUrl,
    });
    const body = slack.envelope(dm('probe', '1700000005.000100'));
    for (let i = 0; i < 12; i++)
      expect((await deliver(body, { secret: 'wrong' }, other.deploymentId)).statusCode).toBe(401);
    const notes = await securityNotifications(t.container, other.tenant.companyId);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ priority: 'high', title: 'Refused slack requests' });
    expect(notes[0]!.message).not.toContain(slack.signingSecret);
  });

  it('answers 400 to a signed body that is not a Slack event', async () => {
    for (const body of [
      'not json',
      '[]',
      JSON.stringify({ type: 'event_callback', event_id: 'Ev1' }),
      JSON.stringify({
        type: 'event_callback',
        event_id: 'Ev2',
        event: { type: 'message', channel_type: 'im', ts: 5, user: 'U1', channel: 'D1' },
      }),
    ]) {
      const res = await deliver(body);
      expect(res.statusCode, body).toBe(400);
      expect(res.json().status_code).toBe(400);
    }
  });

  it('404s an unknown deployment and a deployment of another channel', async () => {
    const body = slack.envelope(dm('hi', '1700000006.000100'));
    const unknown = await deliver(body, {}, '00000000-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().detail).toContain('00000000-0000-4000-8000-000000000000');
    const wrong = await t.app.inject({
      method: 'POST',
      url: `/channels/whatsapp/${setup.deploymentId}/webhook`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(wrong.statusCode).toBe(404);
    expect(wrong.json().detail).toContain(setup.deploymentId);
  });

  it('acknowledges a paused deployment with 200, answers nothing and logs it once a minute', async () => {
    expect((await control(t.app, setup.tenant, setup.deploymentId, 'pause')).statusCode).toBe(200);
    const before = (await channelEvents(t.container, setup.deploymentId)).length;
    for (let i = 0; i < 3; i++) {
      const res = await deliver(slack.envelope(dm(`paused ${i}`, `1700000007.00010${i}`)));
      expect(res.statusCode).toBe(200);
    }
    expect((await channelEvents(t.container, setup.deploymentId)).length).toBe(before);
    const lines = (await deploymentLogs(t.app, setup.tenant, setup.deploymentId)).filter((l) =>
      /the deployment is paused/.test(l.message),
    );
    expect(lines).toHaveLength(1);
    expect((await control(t.app, setup.tenant, setup.deploymentId, 'resume')).statusCode).toBe(200);
  });
});
