/**
 * The web widget's HTTP surface (DESIGN §12): settings in `config.widget`, the key and snippet,
 * CORS per key, visitor sessions and tokens, messages (whole and streamed, resumed), history,
 * feedback, the conversation events, and every refusal: tokens wrong, forged, expired or of
 * another widget, another visitor's or company's conversation, rotated keys, paused deployments.
 */
import { SignJWT } from 'jose';
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visitorTokenKey } from '../src/modules/widget/widget.tokens.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { readFrames, type Frame } from './helpers/sse-client.js';
import { ORIGIN, session, userHash, widgetSetup, type WidgetSetup } from './helpers/widget.js';
import { uploadArticle, waitForTask } from './knowledge/helpers.js';

let t: TestApp;
let base: string;
let w: WidgetSetup;

const ARTICLE = {
  document_title: 'Returns and refunds',
  content:
    'Q: How long do refunds take?\nA: Refunds are paid to the original card within 5 business days after we receive the item.',
};
const QUESTION = 'How long does a refund take?';
/** A person of the team (their id never reaches a visitor). */
const PERSON = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';

beforeAll(async () => {
  t = await createTestApp({
    EMBEDDINGS_PROVIDER: 'none',
    CHAT_STREAM_RETRY_MS: '200',
    RATE_LIMIT_WIDGET_ADDRESS_PER_MINUTE: '100000',
    RATE_LIMIT_WIDGET_SESSIONS_PER_MINUTE: '100000',
    RATE_LIMIT_WIDGET_VISITOR_PER_MINUTE: '100000',
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  w = await widgetSetup(t.app, t.container, { title: 'Help', greeting: 'Hi there', identity_secret: 'a'.repeat(32) });
  const upload = await uploadArticle(t.app, w.tenant.headers, ARTICLE);
  expect((await waitForTask(t, w.tenant.headers, upload.task_id)).status).toBe('completed');
});
afterAll(async () => t?.close());

const put = (setup: WidgetSetup, config: unknown) =>
  t.app.inject({
    method: 'PUT',
    url: `/api/public/deployments/${setup.deploymentId}`,
    headers: setup.tenant.headers,
    payload: { config: JSON.stringify(config) },
  });

const send = (key: string, auth: Record<string, string>, payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: `/widget/v1/${key}/messages`,
    headers: { ...auth, ...headers },
    payload: payload as object,
  });

async function streamed(key: string, auth: Record<string, string>, body: unknown, lastEventId?: string) {
  const response = await fetch(`${base}/widget/v1/${key}/messages`, {
    method: 'POST',
    headers: {
      ...auth,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      origin: ORIGIN,
      ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
    },
    body: JSON.stringify(body),
  });
  const frames: Frame[] = [];
  if (response.status === 200) for await (const frame of readFrames(response)) frames.push(frame);
  return { response, frames };
}

describe('config.widget of a web deployment', () => {
  it.each([
    [{ allowed_origins: ['*'] }, /config\.widget\.allowed_origins.*"\*"/],
    [{ allowed_origins: ['https://shop.example.com/path'] }, /not an origin/],
    [{ allowed_origins: ['ftp://shop.example.com'] }, /http or https/],
    [{ allowed_origins: ['https://*.example.com'] }, /wildcards|not an origin/],
    [{ allowed_origins: 'https://shop.example.com' }, /array/],
    [{ color: 'blue' }, /config\.widget\.color/],
    [{ title: 'x'.repeat(81) }, /config\.widget\.title.*80/],
    [{ title: '   ' }, /blank/],
    [{ position: 'top' }, /bottom-right, bottom-left/],
    [{ language: 'not a language' }, /config\.widget\.language/],
    [{ identity_secret: 'short' }, /identity_secret.*16/],
    [{ colour: '#fff' }, /unknown field 'colour'/],
    ['not an object', /config\.widget.*object/],
  ])('refuses %j with a 400 naming the field', async (widget, message) => {
    const res = await put(w, { widget });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: expect.stringMatching(message), status_code: 400 });
  });

  it('refuses widget settings on a deployment of another channel', async () => {
    const other = await widgetSetup(t.app, t.container);
    await t.app.inject({
      method: 'PUT',
      url: `/api/public/deployments/${other.deploymentId}`,
      headers: other.tenant.headers,
      payload: { channel: 'slack', config: '{}' },
    });
    const res = await put(other, { widget: { title: 'x' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/web deployments only.*slack/);
  });

  it('seals the identity secret: never shown, kept when sent back masked or left out, removed with null', async () => {
    const setup = await widgetSetup(t.app, t.container, { identity_secret: 's'.repeat(20) });
    const shown = await t.app.inject({
      method: 'GET',
      url: `/api/public/deployments/${setup.deploymentId}`,
      headers: setup.tenant.headers,
    });
    expect(shown.body).not.toContain('s'.repeat(20));
    expect(JSON.parse(shown.json().config).widget.identity_secret).toBe('********');
    const stored = await t.container.db
      .selectFrom('deployments')
      .select('config')
      .where('id', '=', setup.deploymentId)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(stored.config).widget.identity_secret).toMatch(/^enc:v1:/);
    const widgetInfo = async () =>
      (
        await t.app.inject({
          method: 'GET',
          url: `/api/public/deployments/${setup.deploymentId}/widget`,
          headers: setup.tenant.headers,
        })
      ).json().settings;
    expect((await widgetInfo()).identity_secret).toBe('********');
    expect(
      (await put(setup, { widget: { allowed_origins: [ORIGIN], identity_secret: '********', title: 'T' } })).statusCode,
    ).toBe(200);
    expect((await widgetInfo()).identity_secret).toBe('********');
    expect((await put(setup, { widget: { allowed_origins: [ORIGIN] } })).statusCode).toBe(200);
    expect((await widgetInfo()).identity_secret).toBe('********');
    expect((await put(setup, { widget: { identity_secret: null } })).statusCode).toBe(200);
    expect((await widgetInfo()).identity_secret).toBeNull();
  });

  it('normalises origins and applies defaults', async () => {
    const setup = await widgetSetup(t.app, t.container, {
      allowed_origins: ['HTTPS://Shop.Example.com/', 'http://localhost:3000'],
      color: '#ABC',
    });
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/public/deployments/${setup.deploymentId}/widget`,
      headers: setup.tenant.headers,
    });
    expect(res.json().settings).toMatchObject({
      allowed_origins: ['https://shop.example.com', 'http://localhost:3000'],
      color: '#abc',
      position: 'bottom-right',
      theme: 'auto',
      language: 'en',
      identity_secret: null,
    });
  });
});

describe('the key and snippet', () => {
  it('answers a pk_ key and a snippet with the versioned script URL', async () => {
    expect(w.key).toMatch(/^pk_[A-Za-z0-9_-]{32}$/);
    expect(w.snippet).toMatch(
      new RegExp(`^<script src="[^"]+/widget\\.js\\?v=[^"]+" data-key="${w.key}" async></script>$`),
    );
  });

  it('is a 404 for another company and a 409 for a deployment of another channel', async () => {
    const other = await widgetSetup(t.app, t.container);
    const foreign = await t.app.inject({
      method: 'GET',
      url: `/api/public/deployments/${w.deploymentId}/widget`,
      headers: other.tenant.headers,
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ detail: expect.stringContaining(w.deploymentId), status_code: 404 });
    await t.app.inject({
      method: 'PUT',
      url: `/api/public/deployments/${other.deploymentId}`,
      headers: other.tenant.headers,
      payload: { channel: 'slack' },
    });
    const slack = await t.app.inject({
      method: 'GET',
      url: `/api/public/deployments/${other.deploymentId}/widget`,
      headers: other.tenant.headers,
    });
    expect(slack.statusCode).toBe(409);
    // Its key no longer opens the widget: the public routes serve web deployments only.
    expect((await t.app.inject({ method: 'GET', url: `/widget/v1/${other.key}` })).statusCode).toBe(404);
  });

  it('rotates: the new key works and the old one is a 404 at once; members may not rotate', async () => {
    const setup = await widgetSetup(t.app, t.container);
    const visitor = await session(t.app, setup.key);
    const member = await setup.tenant.member('member');
    const refused = await t.app.inject({
      method: 'POST',
      url: `/api/public/deployments/${setup.deploymentId}/widget/rotate`,
      headers: member.headers,
    });
    expect(refused.statusCode).toBe(403);
    const rotated = await t.app.inject({
      method: 'POST',
      url: `/api/public/deployments/${setup.deploymentId}/widget/rotate`,
      headers: setup.tenant.headers,
    });
    expect(rotated.statusCode).toBe(200);
    const { key } = rotated.json<{ key: string }>();
    expect(key).not.toBe(setup.key);
    const old = await t.app.inject({ method: 'GET', url: `/widget/v1/${setup.key}` });
    expect(old.statusCode).toBe(404);
    expect(old.json()).toEqual({ detail: expect.stringContaining('Widget key'), status_code: 404 });
    expect((await send(setup.key, visitor.auth, { text: 'hi' })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/widget/v1/${key}` })).statusCode).toBe(200);
    // A visitor token is bound to the deployment, not the key: the visitor keeps its session.
    expect(
      (await t.app.inject({ method: 'GET', url: `/widget/v1/${key}/messages`, headers: visitor.auth })).statusCode,
    ).toBe(200);
  });
});

describe('GET /widget/v1/{key} and CORS', () => {
  it('answers the settings a page shows, right to left for Arabic, available while active', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/widget/v1/${w.key}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      title: 'Help',
      greeting: 'Hi there',
      color: '#2563eb',
      position: 'bottom-right',
      placeholder: 'Type your message…',
      language: 'en',
      direction: 'ltr',
      theme: 'auto',
      available: true,
    });
    const arabic = await widgetSetup(t.app, t.container, { language: 'ar' }, { status: 'paused' });
    const info = (await t.app.inject({ method: 'GET', url: `/widget/v1/${arabic.key}` })).json();
    expect(info).toMatchObject({ language: 'ar', direction: 'rtl', available: false });
  });

  it('allows the listed origin, refuses another with 403 and no CORS headers, serves requests without Origin', async () => {
    const allowed = await t.app.inject({ method: 'GET', url: `/widget/v1/${w.key}`, headers: { origin: ORIGIN } });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(allowed.headers.vary).toMatch(/Origin/);
    const other = await t.app.inject({
      method: 'GET',
      url: `/widget/v1/${w.key}`,
      headers: { origin: 'https://evil.example.net' },
    });
    expect(other.statusCode).toBe(403);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(other.json()).toEqual({ detail: expect.stringContaining('https://evil.example.net'), status_code: 403 });
    const sessionRefused = await t.app.inject({
      method: 'POST',
      url: `/widget/v1/${w.key}/sessions`,
      headers: { origin: 'null' },
      payload: {},
    });
    expect(sessionRefused.statusCode).toBe(403);
  });

  it('answers a preflight for an allowed origin and refuses one for another', async () => {
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: `/widget/v1/${w.key}/messages`,
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/authorization/);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/last-event-id/);
    const refused = await t.app.inject({
      method: 'OPTIONS',
      url: `/widget/v1/${w.key}/messages`,
      headers: { origin: 'https://evil.example.net', 'access-control-request-method': 'POST' },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses every browser origin when none is listed', async () => {
    const setup = await widgetSetup(t.app, t.container, { allowed_origins: [] });
    const res = await t.app.inject({ method: 'GET', url: `/widget/v1/${setup.key}`, headers: { origin: ORIGIN } });
    expect(res.statusCode).toBe(403);
  });

  it('is a 404 for an unknown or malformed key', async () => {
    for (const key of ['pk_' + 'x'.repeat(32), 'nope', 'pk_%00']) {
      const res = await t.app.inject({ method: 'GET', url: `/widget/v1/${key}` });
      expect([400, 404]).toContain(res.statusCode);
    }
  });
});

describe('visitor sessions', () => {
  it('starts an anonymous session with {} or no body', async () => {
    const anonymous = await session(t.app, w.key);
    expect(anonymous).toMatchObject({ identified: false, visitor_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const empty = await t.app.inject({ method: 'POST', url: `/widget/v1/${w.key}/sessions` });
    expect(empty.statusCode).toBe(201);
  });

  it('identifies a customer whose user_hash is right, the same visitor on every device; a wrong hash stays anonymous', async () => {
    const secret = 'a'.repeat(32);
    const first = await session(t.app, w.key, {
      user_id: 'cust-42',
      email: 'c42@example.com',
      user_hash: userHash(secret, 'cust-42'),
    });
    const second = await session(t.app, w.key, {
      user_id: 'cust-42',
      user_hash: userHash(secret, 'cust-42').toUpperCase(),
    });
    expect(first.identified).toBe(true);
    expect(second.visitor_id).toBe(first.visitor_id);
    const wrong = await session(t.app, w.key, { user_id: 'cust-42', user_hash: userHash('b'.repeat(32), 'cust-42') });
    expect(wrong.identified).toBe(false);
    expect(wrong.visitor_id).not.toBe(first.visitor_id);
    const noHash = await session(t.app, w.key, { user_id: 'cust-42' });
    expect(noHash.identified).toBe(false);
  });

  it.each([
    [{ user_id: 'x', role: 'admin' }, /role/],
    [{ email: 'not-an-email' }, /email/],
    [{ user_id: '' }, /user_id/],
    [{ user_id: 'a\u0000b' }, /./],
  ])('refuses the body %j with a 400', async (body, message) => {
    const res = await t.app.inject({ method: 'POST', url: `/widget/v1/${w.key}/sessions`, payload: body });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: expect.stringMatching(message), status_code: 400 });
  });
});

describe('visitor tokens', () => {
  const key = () => visitorTokenKey(Buffer.from(inject('secretKey'), 'hex'));
  const forge = async (claims: { aud: string; sub: string; exp: number; iss?: string }, secret = key()) =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(claims.iss ?? 'switchboard:widget')
      .setAudience(claims.aud)
      .setSubject(claims.sub)
      .setIssuedAt()
      .setExpirationTime(claims.exp)
      .sign(secret);
  const now = () => Math.floor(Date.now() / 1000);
  const visitorId = '0b8f2c36-7f3e-4d6a-9f51-2d3c4b5a6978';

  it.each([
    ['no token', {}],
    ['a malformed header', { authorization: 'Token abc' }],
    ['garbage', { authorization: 'Bearer not.a.jwt' }],
  ])('refuses %s with 401', async (_name, headers) => {
    const res = await send(w.key, headers, { text: 'hi' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ detail: expect.stringMatching(/visitor token/i), status_code: 401 });
  });

  it('refuses a forged, an expired, another widget’s and an alg:none token', async () => {
    const aud = `widget:${w.deploymentId}`;
    const forged = await forge({ aud, sub: visitorId, exp: now() + 600 }, new Uint8Array(32).fill(7));
    const expired = await forge({ aud, sub: visitorId, exp: now() - 10 });
    const otherWidget = await widgetSetup(t.app, t.container);
    const foreign = (await session(t.app, otherWidget.key)).visitor_token;
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ aud, sub: visitorId, exp: now() + 600, iss: 'switchboard:widget' })).toString('base64url')}.`;
    for (const token of [forged, foreign, none]) {
      const res = await send(w.key, { authorization: `Bearer ${token}` }, { text: 'hi' });
      expect(res.statusCode).toBe(401);
    }
    const late = await send(w.key, { authorization: `Bearer ${expired}` }, { text: 'hi' });
    expect(late.statusCode).toBe(401);
    expect(late.json().detail).toMatch(/expired/);
    // A token signed with the right key for the right widget works.
    const good = await forge({ aud, sub: visitorId, exp: now() + 600 });
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: `/widget/v1/${w.key}/messages`,
          headers: { authorization: `Bearer ${good}` },
        })
      ).statusCode,
    ).toBe(200);
  });
});

describe('messages', () => {
  it('answers whole without Accept: text/event-stream, and the history shows both messages with their citations', async () => {
    const visitor = await session(t.app, w.key);
    const res = await send(w.key, visitor.auth, { text: QUESTION });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      conversation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      message: {
        id: expect.any(String),
        role: 'assistant',
        content: expect.stringContaining('5 business days'),
        created_at: expect.any(String),
      },
    });
    const history = await t.app.inject({ method: 'GET', url: `/widget/v1/${w.key}/messages`, headers: visitor.auth });
    expect(history.statusCode).toBe(200);
    const { conversation_id, data } = history.json();
    expect(conversation_id).toBe(body.conversation_id);
    expect(data.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(data[0].content).toBe(QUESTION);
    expect(data[1].citations).toEqual([expect.objectContaining({ title: 'Returns and refunds', url: null })]);
    // The conversation is a web conversation of the deployment with a support query.
    const row = await t.container.db
      .selectFrom('conversations')
      .select(['channel', 'deployment_id', 'support_query_id', 'external_user_id'])
      .where('id', '=', body.conversation_id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      channel: 'web',
      deployment_id: w.deploymentId,
      external_user_id: `widget-visitor:${visitor.visitor_id}`,
    });
    expect(row.support_query_id).not.toBeNull();
  });

  it("streams the chat family's events with a citation, continues the conversation, and resumes by Last-Event-ID", async () => {
    const visitor = await session(t.app, w.key);
    const { response, frames } = await streamed(w.key, visitor.auth, { text: QUESTION });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const types = frames.map((f) => f.type);
    expect(types[0]).toBe('start');
    expect(types).toContain('agent_text_chunk');
    expect(types.at(-1)).toBe('end');
    const conversationId = frames[0]!.data.conversation_id;
    const citations = frames.find((f) => f.type === 'chunk' && f.data.kind === 'citations')!.data.citations as {
      title: string;
      url: string | null;
    }[];
    expect(citations[0]).toEqual({ document_id: expect.any(String), title: 'Returns and refunds', url: null });
    // The end: nothing more (204); an event in the middle: the rest, from the kept turn.
    expect((await streamed(w.key, visitor.auth, {}, frames.at(-1)!.id!)).response.status).toBe(204);
    const rest = await streamed(w.key, visitor.auth, {}, frames[0]!.id!);
    expect(rest.frames.map((f) => f.type)).toEqual(types.slice(1));
    // A second message continues the conversation.
    const next = await streamed(w.key, visitor.auth, { text: 'Thanks!', conversation_id: conversationId });
    expect(next.frames[0]!.data.conversation_id).toBe(conversationId);
    // Another visitor cannot resume it.
    const stranger = await session(t.app, w.key);
    const stolen = await streamed(w.key, stranger.auth, {}, frames[0]!.id!);
    expect(stolen.response.status).toBe(404);
  });

  it('makes the identified customer the end user of the conversation', async () => {
    const customer = await session(t.app, w.key, { user_id: 'cust-7', user_hash: userHash('a'.repeat(32), 'cust-7') });
    const res = await send(w.key, customer.auth, { text: QUESTION });
    const row = await t.container.db
      .selectFrom('conversations')
      .select('external_user_id')
      .where('id', '=', res.json().conversation_id)
      .executeTakeFirstOrThrow();
    expect(row.external_user_id).toBe('cust-7');
  });

  it.each([
    [{}, /text/],
    [{ text: '   ' }, /text/],
    [{ text: 'x'.repeat(4001) }, /text/],
    [{ text: 'hi', agent_key: 'agent:x' }, /agent_key/],
    [{ text: 'hi', conversation_id: 'not-a-uuid' }, /conversation_id/],
    [{ text: 'a\u0000b' }, /./],
  ])('refuses the body %j with a 400', async (body, message) => {
    const visitor = await session(t.app, w.key);
    const res = await send(w.key, visitor.auth, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: expect.stringMatching(message), status_code: 400 });
  });

  it("is a 404 for another visitor's conversation and for another company's", async () => {
    const owner = await session(t.app, w.key);
    const first = (await send(w.key, owner.auth, { text: QUESTION })).json();
    const stranger = await session(t.app, w.key);
    const res = await send(w.key, stranger.auth, { text: 'hi', conversation_id: first.conversation_id });
    expect(res.statusCode).toBe(404);
    const history = await t.app.inject({
      method: 'GET',
      url: `/widget/v1/${w.key}/messages?conversation_id=${first.conversation_id}`,
      headers: stranger.auth,
    });
    expect(history.statusCode).toBe(404);
    // Another company's widget, with its own visitor, names this conversation: a 404 too.
    const other = await widgetSetup(t.app, t.container);
    const foreign = await session(t.app, other.key);
    expect(
      (await send(other.key, foreign.auth, { text: 'hi', conversation_id: first.conversation_id })).statusCode,
    ).toBe(404);
    // A conversation of the chat API (not the widget's) is nobody's here.
    const chatConversation = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers: w.token,
      payload: { agent_key: w.agentKey, query: QUESTION },
    });
    const id = chatConversation.json().conversation_id;
    expect((await send(w.key, owner.auth, { text: 'hi', conversation_id: id })).statusCode).toBe(404);
  });

  it('answers 409 while the deployment is paused, and serves again once it resumes', async () => {
    const setup = await widgetSetup(t.app, t.container);
    const visitor = await session(t.app, setup.key);
    const pause = await t.app.inject({
      method: 'POST',
      url: `/api/public/deployments/${setup.deploymentId}/pause`,
      headers: setup.tenant.headers,
    });
    expect(pause.statusCode).toBe(200);
    const paused = await send(setup.key, visitor.auth, { text: 'hi' });
    expect(paused.statusCode).toBe(409);
    expect(paused.json()).toEqual({ detail: expect.stringMatching(/paused/), status_code: 409 });
    expect((await streamed(setup.key, visitor.auth, { text: 'hi' })).response.status).toBe(409);
    await t.app.inject({
      method: 'POST',
      url: `/api/public/deployments/${setup.deploymentId}/resume`,
      headers: setup.tenant.headers,
    });
    expect((await send(setup.key, visitor.auth, { text: 'hi' })).statusCode).toBe(200);
  });

  it('answers an empty history for a visitor without conversations', async () => {
    const visitor = await session(t.app, w.key);
    const res = await t.app.inject({ method: 'GET', url: `/widget/v1/${w.key}/messages`, headers: visitor.auth });
    expect(res.json()).toEqual({ conversation_id: null, data: [] });
  });
});

describe('feedback and conversation events', () => {
  it("rates the visitor's conversation (201, then 200), sets the support query's satisfaction, refuses others", async () => {
    const visitor = await session(t.app, w.key);
    const { conversation_id } = (await send(w.key, visitor.auth, { text: QUESTION })).json();
    const url = `/widget/v1/${w.key}/conversations/${conversation_id}/feedback`;
    const first = await t.app.inject({ method: 'POST', url, headers: visitor.auth, payload: { rating: 4 } });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ conversation_id, rating: 4, comment: '' });
    const again = await t.app.inject({
      method: 'POST',
      url,
      headers: visitor.auth,
      payload: { rating: 5, comment: 'great' },
    });
    expect(again.statusCode).toBe(200);
    const query = await t.container.db
      .selectFrom('conversations as c')
      .innerJoin('support_queries as q', 'q.id', 'c.support_query_id')
      .select('q.customer_satisfaction')
      .where('c.id', '=', conversation_id)
      .executeTakeFirstOrThrow();
    expect(Number(query.customer_satisfaction)).toBe(5);
    for (const rating of [0, 6, 2.5, 'five']) {
      const bad = await t.app.inject({ method: 'POST', url, headers: visitor.auth, payload: { rating } });
      expect(bad.statusCode, String(rating)).toBe(400);
    }
    const stranger = await session(t.app, w.key);
    expect(
      (await t.app.inject({ method: 'POST', url, headers: stranger.auth, payload: { rating: 1 } })).statusCode,
    ).toBe(404);
  });

  it("streams the conversation's status to its visitor and refuses others", async () => {
    const visitor = await session(t.app, w.key);
    const { conversation_id } = (await send(w.key, visitor.auth, { text: QUESTION })).json();
    const controller = new AbortController();
    const response = await fetch(`${base}/widget/v1/${w.key}/conversations/${conversation_id}/events`, {
      headers: { ...visitor.auth, origin: ORIGIN },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const frames = readFrames(response);
    const first = await frames.next();
    expect(first.value).toMatchObject({ type: 'handoff', data: { conversation_id, status: 'bot' } });
    // A person's reply, as the inbox publishes it, reaches the visitor.
    const events = t.container.chat.events;
    const reply = events.make({
      type: 'message',
      company_id: w.tenant.companyId,
      conversation_id,
      message: {
        id: '5a0f3c4e-8d7b-4c1a-9e2f-3b4c5d6e7f80',
        role: 'human',
        content: 'Hello, I am Sara from support.',
        author_id: PERSON,
        delivery_status: 'delivered',
        delivery_error: null,
        created_at: new Date().toISOString(),
      },
    });
    // The team's side of a hand-off: who took it, why, and how deliveries went stay with the team.
    const taken = events.make({
      type: 'handoff',
      company_id: w.tenant.companyId,
      conversation_id,
      status: 'assigned',
      reason: 'VIP customer, refund dispute',
      assignee_id: PERSON,
      actor_id: PERSON,
    });
    const delivery = events.make({
      type: 'delivery',
      company_id: w.tenant.companyId,
      conversation_id,
      message_id: '5a0f3c4e-8d7b-4c1a-9e2f-3b4c5d6e7f80',
      delivery_status: 'failed',
      delivery_error: 'internal detail',
    });
    events.publish([taken, delivery, reply]);
    const status = await frames.next();
    expect(status.value).toMatchObject({ type: 'handoff', id: taken.id });
    expect((status.value as Frame).data).toEqual({
      id: taken.id,
      type: 'handoff',
      conversation_id,
      status: 'assigned',
    });
    const next = await frames.next();
    expect(next.value).toMatchObject({
      type: 'message',
      data: { conversation_id, message: { role: 'human', content: 'Hello, I am Sara from support.' } },
    });
    expect(Object.keys((next.value as Frame).data.message as object).sort()).toEqual([
      'content',
      'created_at',
      'id',
      'role',
    ]);
    expect(JSON.stringify([status.value, next.value])).not.toMatch(new RegExp(`${PERSON}|VIP|internal detail`));
    controller.abort();
    const stranger = await session(t.app, w.key);
    const refused = await t.app.inject({
      method: 'GET',
      url: `/widget/v1/${w.key}/conversations/${conversation_id}/events`,
      headers: stranger.auth,
    });
    expect(refused.statusCode).toBe(404);
  });
});

describe('with WIDGET_ALLOW_ANY_ORIGIN and tight limits', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await createTestApp({
      EMBEDDINGS_PROVIDER: 'none',
      WIDGET_ALLOW_ANY_ORIGIN: 'true',
      RATE_LIMIT_WIDGET_VISITOR_PER_MINUTE: '2',
      RATE_LIMIT_WIDGET_SESSIONS_PER_MINUTE: '3',
    });
  });
  afterAll(async () => strict?.close());

  it('accepts "*" and then serves any origin', async () => {
    const setup = await widgetSetup(strict.app, strict.container, { allowed_origins: ['*'] });
    const res = await strict.app.inject({
      method: 'GET',
      url: `/widget/v1/${setup.key}`,
      headers: { origin: 'https://anywhere.example' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://anywhere.example');
  });

  it('limits messages per visitor and sessions per address with 429 and Retry-After', async () => {
    const setup = await widgetSetup(strict.app, strict.container);
    const visitor = await session(strict.app, setup.key);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const res = await strict.app.inject({
        method: 'POST',
        url: `/widget/v1/${setup.key}/messages`,
        headers: { ...visitor.auth, origin: ORIGIN },
        payload: { text: 'hello' },
      });
      statuses.push(res.statusCode);
      if (res.statusCode === 429) {
        expect(res.headers['retry-after']).toBeDefined();
        expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
        expect(res.json()).toEqual({ detail: expect.stringMatching(/Rate limit/), status_code: 429 });
      }
    }
    expect(statuses).toEqual([200, 200, 429]);
    const sessions: number[] = [];
    for (let i = 0; i < 4; i += 1)
      sessions.push(
        (await strict.app.inject({ method: 'POST', url: `/widget/v1/${setup.key}/sessions`, payload: {} })).statusCode,
      );
    expect(sessions.slice(-1)).toEqual([429]);
  });
});
