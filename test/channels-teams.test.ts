/**
 * A deployment on Microsoft Teams (DESIGN §12): activities authenticated by the Bot Connector's
 * JWT (a key of the OpenID metadata endorsed for the channel, issuer, audience, expiry, the
 * serviceurl claim equal to the activity's serviceUrl, whose host is allowed), answered as a
 * reply activity with a client-credentials token, a typing indicator first, and the agent's
 * welcome message when the bot is added to a conversation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import {
  allDone,
  channelEvents,
  channelSetup,
  conversationsOf,
  waitUntil,
  type ChannelSetup,
} from './helpers/channels.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { startTeamsPeer, type TeamsPeer } from './helpers/teams-peer.js';

let t: TestApp;
let teams: TeamsPeer;
let model: FakeOpenAi;
let setup: ChannelSetup;

beforeAll(async () => {
  teams = await startTeamsPeer();
  model = await startFakeOpenAi(() => ({ tokens: ['Your order **shipped**.'] }));
  t = await createTestApp({ LLM_PROVIDERS: fakeProviders(model), ALLOW_PRIVATE_URLS: 'true', RUN_WORKERS: 'true' });
  setup = await channelSetup(t.app, t.container, 'teams', teams.config(), {
    model: 'fake:gpt-test',
    welcome_message: 'Hi! I am the Acme helper.',
  });
});
afterAll(async () => {
  await t?.close();
  await teams?.close();
  await model?.close();
});

const url = () => `/channels/teams/${setup.deploymentId}/messages`;

async function post(activity: Record<string, unknown>, authorization?: string) {
  return t.app.inject({
    method: 'POST',
    url: url(),
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    payload: JSON.stringify(activity),
  });
}

describe('Teams activities', () => {
  it('the roll-out checked the bot credentials at the token endpoint', () => {
    expect(teams.tokensIssued()).toBeGreaterThan(0);
  });

  it('greets when the bot is added to a conversation', async () => {
    const activity = teams.activity({
      type: 'conversationUpdate',
      text: undefined,
      membersAdded: [{ id: teams.botId }],
      conversation: { id: 'a:1WelcomeConversation' },
    });
    expect((await post(activity, await teams.sign())).statusCode).toBe(200);
    await waitUntil(() => teams.sent.some((s) => s.conversationId === 'a:1WelcomeConversation'), 'the welcome');
    const welcome = teams.sent.find((s) => s.conversationId === 'a:1WelcomeConversation')!;
    expect(welcome.activity).toMatchObject({
      type: 'message',
      text: 'Hi! I am the Acme helper.',
      from: { id: teams.botId },
    });
  });

  it('answers a message as a reply to it, after a typing indicator, once for a redelivered activity', async () => {
    const activity = teams.activity({ text: '<at>Helper</at> Where is my order?' });
    const token = await teams.sign();
    const results = await Promise.all([post(activity, token), post(activity, token)]);
    expect(results.map((r) => r.statusCode)).toEqual([200, 200]);
    await waitUntil(() => teams.sent.some((s) => s.replyToId === activity.id), 'the reply');
    await allDone(t.container, setup.deploymentId, 2);
    const inConversation = teams.sent.filter((s) => s.conversationId === 'a:1ConversationIdXyz');
    expect(inConversation.some((s) => s.activity.type === 'typing')).toBe(true);
    const replies = inConversation.filter((s) => s.activity.type === 'message');
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({
      replyToId: activity.id,
      activity: { text: 'Your order **shipped**.', textFormat: 'markdown', replyToId: activity.id },
    });
    expect(replies[0]!.authorization).toMatch(/^Bearer eyJ0\./);
    expect(model.requests.at(-1)!.messages.at(-1)!.content).toBe('Where is my order?');
    const conversation = (await conversationsOf(t.container, setup.deploymentId)).find((c) => c.message_count > 0);
    expect(conversation).toMatchObject({ external_user_id: '8a6e0c5c-1f2b-4c43-9a0e-0d8c6c5d7e11', channel: 'teams' });
  });

  it('ignores its own activities and other activity types', async () => {
    const before = (await channelEvents(t.container, setup.deploymentId)).length;
    const own = teams.activity({ from: { id: teams.botId, name: 'Helper' } });
    expect((await post(own, await teams.sign())).statusCode).toBe(200);
    expect((await post(teams.activity({ type: 'typing' }), await teams.sign())).statusCode).toBe(200);
    expect((await channelEvents(t.container, setup.deploymentId)).length).toBe(before);
  });

  it('refuses what the Bot Connector did not sign for this bot with 401, writing nothing', async () => {
    const before = (await channelEvents(t.container, setup.deploymentId)).length;
    const sentBefore = teams.sent.length;
    const activity = teams.activity();
    const cases: [string | undefined, RegExp][] = [
      [undefined, /bearer token is required/],
      ['Basic abc', /bearer token is required/],
      [await teams.sign({}, { key: 'unknown', kid: 'key-9' }), /does not list/],
      [await teams.sign({}, { key: 'unknown' }), /refused/],
      [await teams.sign({ aud: 'someone-else' }), /refused/],
      [await teams.sign({ iss: 'https://evil.example.com' }), /refused/],
      [await teams.sign({ exp: Math.floor(Date.now() / 1000) - 6 * 60 }), /refused/],
      [await teams.sign({ serviceurl: 'https://smba.trafficmanager.net/amer/' }), /serviceurl/],
    ];
    for (const [authorization, reason] of cases) {
      const res = await post(activity, authorization);
      expect(res.statusCode, String(reason)).toBe(401);
      expect(res.json().detail).toMatch(reason);
    }
    // Signed for a service URL the integration does not allow.
    const elsewhere = teams.activity({ serviceUrl: 'https://smba.trafficmanager.net/amer/' });
    const token = await teams.sign({ serviceurl: 'https://smba.trafficmanager.net/amer/' });
    expect((await post(elsewhere, token)).statusCode).toBe(401);
    // An expired token within the five minutes' skew still passes (its activity is then answered).
    expect((await channelEvents(t.container, setup.deploymentId)).length).toBe(before);
    expect(teams.sent.length).toBe(sentBefore);
  });

  it('accepts a token expired less than five minutes ago (clock skew), and 400s a malformed activity', async () => {
    const skewed = await teams.sign({ exp: Math.floor(Date.now() / 1000) - 60 });
    expect((await post(teams.activity({ conversation: { id: 'a:1Skew' } }), skewed)).statusCode).toBe(200);
    const bad = await post(
      { type: 'message', serviceUrl: teams.activity().serviceUrl, channelId: 'msteams' },
      await teams.sign(),
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.json().status_code).toBe(400);
    await waitUntil(
      () => teams.sent.some((s) => s.conversationId === 'a:1Skew' && s.activity.type === 'message'),
      'the skewed reply',
    );
  });
});
