/**
 * A deployment on WhatsApp (DESIGN §12): Meta's GET verification handshake, Cloud API
 * notifications signed with X-Hub-Signature-256 (HMAC-SHA256 of the raw body with the app
 * secret), text answered to the sender through POST /{version}/{phone_number_id}/messages (split
 * at 4,096 characters, WhatsApp formatting), statuses ignored, redeliveries answered once, a voice
 * note without speech to text answered with a short text in the customer's language.
 */
import { createHmac, randomUUID } from 'node:crypto';
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
import { startFakeWhatsapp, type FakeWhatsapp } from './helpers/fake-whatsapp.js';

const APP_SECRET = '6c1f0e5a9b2d4c7e8f90a1b2c3d4e5f6';
const VERIFY_TOKEN = 'my-verify-token-2b1c';

let t: TestApp;
let meta: FakeWhatsapp;
let model: FakeOpenAi;
let setup: ChannelSetup;
let replyText = 'Your order **#1042** is on its way. [Track it](https://track.example.com/1042)';

beforeAll(async () => {
  meta = await startFakeWhatsapp();
  model = await startFakeOpenAi(() => ({ tokens: [replyText] }));
  t = await createTestApp({ LLM_PROVIDERS: fakeProviders(model), ALLOW_PRIVATE_URLS: 'true', RUN_WORKERS: 'true' });
  setup = await channelSetup(
    t.app,
    t.container,
    'whatsapp',
    {
      access_token: meta.token,
      phone_number_id: meta.phoneNumberId,
      app_secret: APP_SECRET,
      verify_token: VERIFY_TOKEN,
      base_url: meta.url,
    },
    { model: 'fake:gpt-test' },
  );
  await t.app.inject({
    method: 'PUT',
    url: `/api/public/deployments/${setup.deploymentId}`,
    headers: setup.tenant.headers,
    payload: { languages: 'en,ar' },
  });
});
afterAll(async () => {
  await t?.close();
  await meta?.close();
  await model?.close();
});

const url = () => `/channels/whatsapp/${setup.deploymentId}/webhook`;

/** A Cloud API notification as Meta sends it. */
function notification(value: Record<string, unknown>) {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: meta.phoneNumberId },
              ...value,
            },
            field: 'messages',
          },
        ],
      },
    ],
  });
}

const textFrom = (from: string, body: string, id = `wamid.${randomUUID()}`, name = 'Sheena Nelson') => ({
  contacts: [{ profile: { name }, wa_id: from }],
  messages: [{ from, id, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body } }],
});

const sign = (body: string, secret = APP_SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

async function post(body: string, signature = sign(body)) {
  return t.app.inject({
    method: 'POST',
    url: url(),
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
    payload: body,
  });
}

describe('WhatsApp webhook', () => {
  it('answers the verification handshake with the challenge as text, and 401s a wrong token', async () => {
    const ok = await t.app.inject({
      method: 'GET',
      url: `${url()}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=${VERIFY_TOKEN}`,
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain/);
    expect(ok.body).toBe('1158201444');
    const wrong = await t.app.inject({
      method: 'GET',
      url: `${url()}?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=guess`,
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).not.toContain('1158201444');
    const malformed = await t.app.inject({ method: 'GET', url: `${url()}?hub.mode=unsubscribe&hub.challenge=1` });
    expect(malformed.statusCode).toBe(400);
  });

  it('answers a text message to the sender in WhatsApp format, once however often Meta redelivers it', async () => {
    const body = notification(
      textFrom('16315551181', 'Where is my order?', 'wamid.HBgLMTYzMTU1NTExODEVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA='),
    );
    const results = await Promise.all([post(body), post(body), post(body)]);
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    await allDone(t.container, setup.deploymentId);
    expect(meta.sent).toEqual([
      { to: '16315551181', body: 'Your order *#1042* is on its way. Track it (https://track.example.com/1042)' },
    ]);
    const answer = meta.requests.find((r) => r.path.endsWith('/messages'))!;
    expect(answer.headers.authorization).toBe(`Bearer ${meta.token}`);
    expect(answer.json).toMatchObject({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '16315551181',
      type: 'text',
    });
    const [conversation] = await conversationsOf(t.container, setup.deploymentId);
    expect(conversation).toMatchObject({ external_user_id: '16315551181', channel: 'whatsapp' });
    const user = await t.container.db
      .selectFrom('end_users')
      .select(['name'])
      .where('id', '=', conversation!.end_user_id!)
      .executeTakeFirst();
    expect(user?.name).toBe('Sheena Nelson');
  });

  it('keeps one conversation per sender number and ignores statuses', async () => {
    await post(notification(textFrom('16315551181', 'And the invoice?')));
    await post(
      notification({
        statuses: [{ id: 'wamid.x', status: 'delivered', timestamp: '1700000000', recipient_id: '16315551181' }],
      }),
    );
    await allDone(t.container, setup.deploymentId, 2);
    expect(await channelEvents(t.container, setup.deploymentId)).toHaveLength(2);
    const conversations = await conversationsOf(t.container, setup.deploymentId);
    expect(conversations).toHaveLength(1);
    expect(conversations[0]!.message_count).toBe(4);
  });

  it('splits an answer longer than 4,096 characters', async () => {
    replyText = Array.from({ length: 30 }, (_, i) => `Step ${i}: ${'do this '.repeat(30)}`).join('\n\n');
    const before = meta.sent.length;
    await post(notification(textFrom('447700900123', 'How do I set it up?')));
    await waitUntil(() => meta.sent.length >= before + 2, 'the split answer');
    await allDone(t.container, setup.deploymentId, 3);
    const parts = meta.sent.slice(before);
    expect(parts.every((part) => part.body.length <= 4096 && part.to === '447700900123')).toBe(true);
    expect(
      parts
        .map((p) => p.body)
        .join(' ')
        .replace(/\s+/g, ' '),
    ).toBe(replyText.replace(/\s+/g, ' ').trim());
    replyText = 'Done.';
  });

  it("answers a voice note without speech to text with a short text in the customer's language", async () => {
    const before = meta.sent.length;
    await post(
      notification({
        contacts: [{ profile: { name: 'Omar' }, wa_id: '966501234567' }],
        messages: [
          {
            from: '966501234567',
            id: `wamid.${randomUUID()}`,
            timestamp: '1700000000',
            type: 'audio',
            audio: { mime_type: 'audio/ogg; codecs=opus', sha256: 'x', id: '1037543291543636', voice: true },
          },
        ],
      }),
    );
    await waitUntil(() => meta.sent.length > before, 'the voice-note reply');
    expect(meta.sent.at(-1)).toEqual({
      to: '966501234567',
      body: 'عذرًا، لا يمكنني الاستماع إلى الرسائل الصوتية. يرجى كتابة رسالتك.',
    });
  });

  it('refuses a bad or missing signature with 401 and a malformed body with 400, writing nothing', async () => {
    const before = (await channelEvents(t.container, setup.deploymentId)).length;
    const body = notification(textFrom('16315551181', 'forged'));
    expect((await post(body, sign(body, 'wrong-secret'))).statusCode).toBe(401);
    expect((await post(body, 'sha1=abc')).statusCode).toBe(401);
    const none = await t.app.inject({
      method: 'POST',
      url: url(),
      headers: { 'content-type': 'application/json' },
      payload: body,
    });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ detail: 'X-Hub-Signature-256 is required', status_code: 401 });
    for (const bad of [
      '{',
      JSON.stringify({ object: 'whatsapp_business_account', entry: 'x' }),
      notification({ messages: [{ id: 'w', from: 'not-a-number', type: 'text' }] }),
    ]) {
      expect((await post(bad)).statusCode, bad).toBe(400);
    }
    expect((await channelEvents(t.container, setup.deploymentId)).length).toBe(before);
  });
});
