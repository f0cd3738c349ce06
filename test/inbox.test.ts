/**
 * Hand-off to a person and the inbox (DESIGN §13): a customer asks for a person, the turn says so
 * (`chunk {handoff}`), the conversation waits in the inbox, the team is notified; a person is
 * assigned (two at once: one wins), replies (the customer sees it on the conversation's events and
 * messages), the customer writes meanwhile with no agent turn, the person releases, takes over,
 * closes (the support query resolved by that person). Every wrong state is a 409, roles 403,
 * other companies 404, bad bodies 400; a reply whose channel refuses it is kept and reported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chat, chatSetup, US_EAST, type ChatSetup } from './helpers/chat.js';
import { readFrames, type Frame } from './helpers/sse-client.js';
import { startFakeSlack, type FakeSlack } from './helpers/fake-slack.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { insertDeployment } from '../src/modules/deployments/deployments.repo.js';
import type { TestUser } from './helpers/factories.js';

let t: TestApp;
let base: string;
let slack: FakeSlack;
let openai: FakeOpenAi;
beforeAll(async () => {
  [slack, openai] = await Promise.all([startFakeSlack(), startFakeOpenAi()]);
  t = await createTestApp({ LLM_PROVIDERS: fakeProviders(openai) });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  // A Slack deliverer speaking Slack's Web API to the peer: the customer's "thread" is the
  // conversation's `user` (a channel id), as the channel module records it.
  t.container.chat.deliveries.register('slack', {
    async deliver(reply, signal) {
      const response = await fetch(`${slack.baseUrl}/chat.postMessage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${slack.token}`, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ channel: reply.externalUserId, text: reply.content }),
        signal,
      });
      const body = (await response.json()) as { ok: boolean; error?: string };
      if (!body.ok) throw new Error(`Slack refused the message: ${body.error}`);
    },
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([slack?.close(), openai?.close()]);
});

const inbox = (user: Pick<TestUser, 'headers'>, method: 'GET' | 'POST', path: string, payload?: unknown) =>
  t.app.inject({
    method,
    url: `/api/public/conversations${path}`,
    headers: user.headers,
    ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
  });

/** A customer who asked for a person: the conversation waits in the inbox. */
async function waiting(setup?: ChatSetup, user = 'cust-1') {
  const s = setup ?? (await chatSetup(t.app, t.container));
  const res = await chat(t.app, s, { query: 'I want to talk to a human please', user });
  expect(res.statusCode, res.body).toBe(200);
  return { setup: s, conversationId: res.json<{ conversation_id: string }>().conversation_id };
}

async function nextFrame(frames: AsyncGenerator<Frame>, type?: string): Promise<Frame> {
  for (;;) {
    const next = await frames.next();
    if (next.done) throw new Error('stream ended');
    if (!type || next.value.type === type) return next.value;
  }
}

describe('a customer asks for a person', () => {
  it('streams the hand-off chunk, lists the conversation as waiting, escalates the query and notifies the team', async () => {
    const setup = await chatSetup(t.app, t.container);
    const response = await fetch(`${base}/api/v1/chat/agent/stream`, {
      method: 'POST',
      headers: { ...setup.token, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ agent_key: setup.agentKey, query: 'Can I speak to a person?', user: 'cust-9' }),
    });
    const frames: Frame[] = [];
    for await (const frame of readFrames(response)) frames.push(frame);
    const handoff = frames.find((frame) => frame.type === 'chunk' && frame.data.kind === 'handoff');
    expect(handoff?.data).toMatchObject({ handoff: { status: 'waiting', reason: 'The customer asked for a person' } });
    expect(frames.at(-1)!.type).toBe('end');
    const conversationId = frames[0]!.data.conversation_id;

    const list = await inbox(setup.tenant, 'GET', '?status=handoff');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ total: 1, skip: 0, limit: 50 });
    expect(list.json().data[0]).toEqual({
      id: conversationId,
      status: 'handoff',
      channel: 'web',
      agent_id: setup.agentId,
      assignee_id: null,
      support_query_id: expect.any(String),
      user: 'cust-9',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const query = await t.container.db
      .selectFrom('support_queries')
      .selectAll()
      .where('conversation_id', '=', conversationId)
      .executeTakeFirstOrThrow();
    expect(query).toMatchObject({ escalated_to_human: true, status: 'in_progress' });
    const notes = await t.container.db
      .selectFrom('notifications')
      .selectAll()
      .where('company_id', '=', setup.tenant.companyId)
      .execute();
    expect(
      notes.map((note) => [note.notification_type, (note.metadata as Record<string, string>).action_type]),
    ).toEqual([['agent_action', 'handoff']]);
    expect(notes[0]!.metadata).toMatchObject({ conversation_id: conversationId, query_id: query.id });
  });

  it('stores what the customer writes meanwhile with no agent turn: {handoff: true, status}', async () => {
    const { setup, conversationId } = await waiting();
    const res = await chat(t.app, setup, { query: 'Hello? Anyone?', conversation_id: conversationId });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      conversation_id: conversationId,
      handoff: true,
      status: 'waiting',
      agent_response_text: '',
    });
    const stream = await fetch(`${base}/api/v1/chat/agent/stream`, {
      method: 'POST',
      headers: { ...setup.token, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ agent_key: setup.agentKey, query: 'Still there?', conversation_id: conversationId }),
    });
    const frames: Frame[] = [];
    for await (const frame of readFrames(stream)) frames.push(frame);
    expect(frames.map((frame) => frame.type)).toEqual(['start', 'chunk', 'end']);
    expect(frames[1]!.data).toMatchObject({ handoff: { status: 'waiting' } });
    const detail = (await inbox(setup.tenant, 'GET', `/${conversationId}`)).json();
    expect(detail.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'I want to talk to a human please'],
      ['assistant', expect.any(String)],
      ['user', 'Hello? Anyone?'],
      ['user', 'Still there?'],
    ]);
    expect(detail).toMatchObject({
      status: 'handoff',
      handoff_reason: 'The customer asked for a person',
      message_count: 4,
    });
  });
});

describe('a model hands the conversation over', () => {
  it('calling handoff_to_human: the turn says so, the inbox has it with the model’s reason, the model is not called again', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    openai.reply = (request) =>
      request.messages.some((message) => message.role === 'tool')
        ? { tokens: ['A colleague will take it from here.'] }
        : { toolCalls: [{ name: 'handoff_to_human', arguments: { reason: 'Refund above the agent’s limit' } }] };
    const before = openai.requests.length;
    const response = await fetch(`${base}/api/v1/chat/agent/stream`, {
      method: 'POST',
      headers: { ...setup.token, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ agent_key: setup.agentKey, query: 'I need a refund of 900 euros' }),
    });
    const frames: Frame[] = [];
    for await (const frame of readFrames(response)) frames.push(frame);
    const text = frames.filter((frame) => frame.type === 'agent_text_chunk').map((frame) => frame.data.content);
    expect(text.join('')).toBe('A colleague will take it from here.');
    expect(frames.find((frame) => frame.data.kind === 'handoff')?.data).toMatchObject({
      handoff: { status: 'waiting', reason: 'Refund above the agent’s limit' },
    });
    const sent = openai.requests.slice(before);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.tools!.map((tool) => tool.function.name)).toEqual(['handoff_to_human']);
    const conversationId = frames[0]!.data.conversation_id;
    expect((await inbox(setup.tenant, 'GET', `/${conversationId}`)).json()).toMatchObject({
      status: 'handoff',
      handoff_reason: 'Refund above the agent’s limit',
    });
    const next = await chat(t.app, setup, { query: 'ok thanks', conversation_id: conversationId });
    expect(next.json()).toMatchObject({ handoff: true, status: 'waiting' });
    expect(openai.requests.length).toBe(before + 2);
  });
});

describe('a person answers', () => {
  it('assign → reply (the customer sees it) → the customer writes → release → takeover → close', async () => {
    const { setup, conversationId } = await waiting();
    const dev = await setup.tenant.member('developer');
    // The customer's client follows the conversation's events.
    const abort = new AbortController();
    const events = await fetch(`${base}/api/v1/chat/conversations/${conversationId}/events`, {
      headers: setup.token,
      signal: abort.signal,
    });
    const customer = readFrames(events);
    expect((await nextFrame(customer)).data).toMatchObject({ type: 'handoff', status: 'handoff' });
    // The inbox's live stream.
    const live = await fetch(`${base}/api/public/conversations/events`, { headers: dev.headers, signal: abort.signal });
    expect(live.status).toBe(200);
    const console = readFrames(live);

    const assigned = await inbox(dev, 'POST', `/${conversationId}/assign`);
    expect(assigned.statusCode, assigned.body).toBe(200);
    expect(assigned.json()).toMatchObject({ status: 'assigned', assignee_id: dev.userId });
    expect(Object.keys(assigned.json()).sort()).toEqual(
      [
        'agent_id',
        'assignee_id',
        'channel',
        'created_at',
        'id',
        'status',
        'support_query_id',
        'updated_at',
        'user',
      ].sort(),
    );
    expect((await nextFrame(customer, 'handoff')).data).toMatchObject({ status: 'assigned', assignee_id: dev.userId });
    expect((await nextFrame(console, 'handoff')).data).toMatchObject({
      conversation_id: conversationId,
      status: 'assigned',
    });

    const reply = await inbox(dev, 'POST', `/${conversationId}/messages`, {
      content: 'Hi, I am Dana. How can I help?',
    });
    expect(reply.statusCode, reply.body).toBe(201);
    expect(reply.json()).toEqual({
      id: expect.any(String),
      role: 'human',
      content: 'Hi, I am Dana. How can I help?',
      author_id: dev.userId,
      created_at: expect.any(String),
      delivery_status: 'delivered',
      delivery_error: null,
    });
    const seen = await nextFrame(customer, 'message');
    expect(seen.data).toMatchObject({
      message: { id: reply.json().id, role: 'human', content: 'Hi, I am Dana. How can I help?', author_id: dev.userId },
    });
    // The customer writes while the person is typing: stored, shown to the person, no agent turn.
    const meanwhile = await chat(t.app, setup, { query: 'My order never arrived', conversation_id: conversationId });
    expect(meanwhile.json()).toMatchObject({ handoff: true, status: 'assigned', agent_response_text: '' });
    await nextFrame(console, 'message'); // the reply
    expect((await nextFrame(console, 'message')).data).toMatchObject({
      message: { role: 'user', content: 'My order never arrived' },
    });
    const history = await t.app.inject({
      method: 'GET',
      url: `/api/v1/chat/conversations/${conversationId}/messages`,
      headers: setup.token,
    });
    expect(history.json().data.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'human', 'user']);
    expect(history.json().data[2]).toMatchObject({ role: 'human', author_id: dev.userId });

    const released = await inbox(dev, 'POST', `/${conversationId}/release`);
    expect(released.json()).toMatchObject({ status: 'bot', assignee_id: null });
    expect((await inbox(dev, 'POST', `/${conversationId}/release`)).statusCode).toBe(409);
    const answered = await chat(t.app, setup, {
      query: 'What are your opening hours?',
      conversation_id: conversationId,
    });
    expect(answered.json()).not.toHaveProperty('handoff');
    expect(answered.json().agent_response_text).not.toBe('');

    const taken = await inbox(dev, 'POST', `/${conversationId}/takeover`, {});
    expect(taken.json()).toMatchObject({ status: 'assigned', assignee_id: dev.userId });
    const closed = await inbox(dev, 'POST', `/${conversationId}/close`, { resolution: 'Re-sent the parcel' });
    expect(closed.statusCode).toBe(200);
    expect(closed.json()).toMatchObject({ status: 'closed' });
    expect((await nextFrame(customer, 'handoff')).data).toMatchObject({ status: 'bot' });
    expect((await nextFrame(customer, 'handoff')).data).toMatchObject({ status: 'assigned' });
    expect((await nextFrame(customer, 'handoff')).data).toMatchObject({ status: 'closed', actor_id: dev.userId });
    abort.abort();

    // The records afterwards: the query resolved by the person, not by the agent.
    const query = await t.app.inject({
      method: 'GET',
      url: `/customer-support/${closed.json().support_query_id}`,
      headers: setup.tenant.headers,
    });
    expect(query.json()).toMatchObject({
      status: 'resolved',
      resolution: 'Re-sent the parcel',
      resolved_at: expect.any(String),
      metadata: { resolution_method: 'human', escalated_to_human: true, resolved_by: dev.userId },
    });
    const agent = await t.app.inject({
      method: 'GET',
      url: `/api/public/agents/${setup.agentId}`,
      headers: setup.tenant.headers,
    });
    expect(agent.json().performance_metrics).toMatchObject({ total_queries_handled: 1, success_rate: 0 });
    const stats = await t.app.inject({ method: 'GET', url: '/customer-support/stats', headers: setup.tenant.headers });
    expect(stats.json().resolution_metrics).toMatchObject({ total_resolved: 1, human_resolved: 1, agent_resolved: 0 });

    // A closed conversation: every action is a 409, and so is the customer writing.
    for (const action of ['assign', 'takeover', 'release', 'close'])
      expect((await inbox(dev, 'POST', `/${conversationId}/${action}`)).statusCode).toBe(409);
    const late = await inbox(dev, 'POST', `/${conversationId}/messages`, { content: 'One more thing' });
    expect(late.statusCode).toBe(409);
    expect(late.json()).toEqual({ detail: `Conversation ${conversationId} is closed`, status_code: 409 });
    expect((await chat(t.app, setup, { query: 'hello', conversation_id: conversationId })).statusCode).toBe(409);
  });

  it('refuses wrong states: assigning or replying to the agent’s conversation, another’s assignment', async () => {
    const setup = await chatSetup(t.app, t.container);
    const first = await chat(t.app, setup, { query: 'What are your opening hours?' });
    const botConversation = first.json().conversation_id as string;
    const dev = await setup.tenant.member('developer');
    const other = await setup.tenant.member('admin');
    expect((await inbox(dev, 'POST', `/${botConversation}/assign`)).statusCode).toBe(409);
    expect((await inbox(dev, 'POST', `/${botConversation}/release`)).statusCode).toBe(409);
    const early = await inbox(dev, 'POST', `/${botConversation}/messages`, { content: 'Hi' });
    expect(early.statusCode).toBe(409);
    expect(early.json().detail).toContain('take it over');
    // Taken over: the agent steps back at once.
    expect((await inbox(dev, 'POST', `/${botConversation}/takeover`)).json()).toMatchObject({ status: 'assigned' });
    const held = await chat(t.app, setup, { query: 'Thanks', conversation_id: botConversation });
    expect(held.json()).toMatchObject({ handoff: true, status: 'assigned' });
    // Someone else's: takeover and assign are 409; its assignee passes it on; a reply by a colleague is kept.
    expect((await inbox(other, 'POST', `/${botConversation}/takeover`)).statusCode).toBe(409);
    expect((await inbox(other, 'POST', `/${botConversation}/assign`)).statusCode).toBe(409);
    const passed = await inbox(dev, 'POST', `/${botConversation}/assign`, { assignee_id: other.userId });
    expect(passed.json()).toMatchObject({ status: 'assigned', assignee_id: other.userId });
    expect((await inbox(other, 'POST', `/${botConversation}/assign`)).json().assignee_id).toBe(other.userId);
  });

  it('two people assigning at once: one wins, the other gets 409', async () => {
    const { setup, conversationId } = await waiting();
    const [a, b] = await Promise.all([setup.tenant.member('developer'), setup.tenant.member('developer')]);
    const results = await Promise.all([
      inbox(a, 'POST', `/${conversationId}/assign`),
      inbox(b, 'POST', `/${conversationId}/assign`),
    ]);
    expect(results.map((res) => res.statusCode).sort()).toEqual([200, 409]);
    const winner = results.find((res) => res.statusCode === 200)!.json().assignee_id;
    const loser = results.find((res) => res.statusCode === 409)!.json();
    expect(loser.detail).toBe(`Conversation ${conversationId} is already assigned to ${winner}`);
    const detail = (await inbox(a, 'GET', `/${conversationId}`)).json();
    expect(detail.assignee_id).toBe(winner);
  });

  it('a reply auto-assigns a waiting conversation to its author', async () => {
    const { setup, conversationId } = await waiting();
    const dev = await setup.tenant.member('developer');
    expect((await inbox(dev, 'POST', `/${conversationId}/messages`, { content: 'On it' })).statusCode).toBe(201);
    expect((await inbox(dev, 'GET', `/${conversationId}`)).json()).toMatchObject({
      status: 'assigned',
      assignee_id: dev.userId,
    });
  });
});

describe('delivery on the conversation’s channel', () => {
  async function slackConversation(user: string) {
    const setup = await chatSetup(t.app, t.container);
    await insertDeployment(t.container.db, {
      company_id: setup.tenant.companyId,
      deployable_type: 'agent',
      deployable_id: setup.agentId,
      agent_id: setup.agentId,
      channel: 'slack',
      region_id: US_EAST,
      status: 'active',
    });
    const slackSetup = { ...setup, agentKey: `agent:${setup.agentId}:slack:us-east` };
    return waiting(slackSetup, user);
  }

  it('sends the reply through the channel’s deliverer', async () => {
    const { setup, conversationId } = await slackConversation('C0SUPPORT');
    const res = await inbox(setup.tenant, 'POST', `/${conversationId}/messages`, { content: 'A person here' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ delivery_status: 'delivered', delivery_error: null });
    expect(slack.posted.at(-1)).toEqual({ channel: 'C0SUPPORT', text: 'A person here' });
  });

  it('a refused delivery: the person is told, the reply is kept with its error', async () => {
    const { setup, conversationId } = await slackConversation('C0GONE');
    const dev = await setup.tenant.member('developer');
    const abort = new AbortController();
    const live = await fetch(`${base}/api/public/conversations/events?conversation_id=${conversationId}`, {
      headers: dev.headers,
      signal: abort.signal,
    });
    const frames = readFrames(live);
    expect((await nextFrame(frames)).data).toMatchObject({ type: 'handoff', status: 'handoff' });
    const res = await inbox(dev, 'POST', `/${conversationId}/messages`, { content: 'Are you still there?' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      delivery_status: 'failed',
      delivery_error: 'Slack refused the message: channel_not_found',
    });
    expect((await nextFrame(frames, 'delivery')).data).toMatchObject({
      message_id: res.json().id,
      delivery_status: 'failed',
      delivery_error: 'Slack refused the message: channel_not_found',
    });
    abort.abort();
    const detail = (await inbox(dev, 'GET', `/${conversationId}`)).json();
    expect(detail.messages.at(-1)).toMatchObject({
      role: 'human',
      content: 'Are you still there?',
      delivery_status: 'failed',
      delivery_error: 'Slack refused the message: channel_not_found',
    });
  });
});

describe('the inbox list', () => {
  it('filters by status, channel, agent, assignee and text, paginated', async () => {
    const setup = await chatSetup(t.app, t.container);
    const dev = await setup.tenant.member('developer');
    const a = await waiting(setup, 'cust-a');
    const b = await waiting(setup, 'cust-b');
    await chat(t.app, setup, { query: 'Where is the invoice for March?', conversation_id: b.conversationId });
    const bot = await chat(t.app, setup, { query: 'What are your opening hours?', user: 'cust-c' });
    await inbox(dev, 'POST', `/${a.conversationId}/assign`);
    const ids = async (query: string) =>
      (await inbox(setup.tenant, 'GET', query)).json().data.map((row: { id: string }) => row.id);
    expect(await ids('')).toEqual([bot.json().conversation_id, b.conversationId, a.conversationId]);
    expect(await ids('?status=assigned')).toEqual([a.conversationId]);
    expect(await ids('?status=handoff')).toEqual([b.conversationId]);
    expect(await ids('?status=bot')).toEqual([bot.json().conversation_id]);
    expect(await ids(`?assignee_id=${dev.userId}`)).toEqual([a.conversationId]);
    expect(await ids(`?agent_id=${setup.agentId}&channel=web&limit=2`)).toHaveLength(2);
    expect(await ids('?channel=slack')).toEqual([]);
    expect(await ids('?q=INVOICE%20for%20march')).toEqual([b.conversationId]);
    expect(await ids('?q=cust-a')).toEqual([a.conversationId]);
    expect(await ids('?q=100%25')).toEqual([]);
    const page = (await inbox(setup.tenant, 'GET', '?skip=1&limit=1')).json();
    expect(page).toMatchObject({ total: 3, skip: 1, limit: 1 });
    expect(page.data.map((row: { id: string }) => row.id)).toEqual([b.conversationId]);
  });
});

describe('roles, tenancy and bad input', () => {
  it('members read, developers and above act', async () => {
    const { setup, conversationId } = await waiting();
    const member = await setup.tenant.member('member');
    expect((await inbox(member, 'GET', '')).statusCode).toBe(200);
    expect((await inbox(member, 'GET', `/${conversationId}`)).statusCode).toBe(200);
    for (const action of ['assign', 'takeover', 'release', 'close']) {
      const res = await inbox(member, 'POST', `/${conversationId}/${action}`);
      expect(res.statusCode).toBe(403);
      expect(res.json().detail).toContain('developer');
    }
    expect((await inbox(member, 'POST', `/${conversationId}/messages`, { content: 'hi' })).statusCode).toBe(403);
    // Assigning to a member (who may not answer) is refused.
    const dev = await setup.tenant.member('developer');
    const toMember = await inbox(dev, 'POST', `/${conversationId}/assign`, { assignee_id: member.userId });
    expect(toMember.statusCode).toBe(400);
    expect(toMember.json().detail).toContain('assignee_id');
    expect((await inbox(dev, 'GET', `/${conversationId}`)).json().status).toBe('handoff');
  });

  it('another company’s conversation is a 404 for every route, and never listed', async () => {
    const { conversationId } = await waiting();
    const other = await chatSetup(t.app, t.container);
    for (const [method, path, body] of [
      ['GET', `/${conversationId}`, undefined],
      ['POST', `/${conversationId}/assign`, undefined],
      ['POST', `/${conversationId}/takeover`, undefined],
      ['POST', `/${conversationId}/release`, undefined],
      ['POST', `/${conversationId}/close`, undefined],
      ['POST', `/${conversationId}/messages`, { content: 'hi' }],
      ['GET', `/events?conversation_id=${conversationId}`, undefined],
    ] as const) {
      const res = await inbox(other.tenant, method, path, body);
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      expect(res.json()).toEqual({ detail: `Conversation not found: ${conversationId}`, status_code: 404 });
    }
    expect((await inbox(other.tenant, 'GET', '')).json().total).toBe(0);
    // Assigning to a user of another company.
    const own = await waiting(other);
    const res = await inbox(other.tenant, 'POST', `/${own.conversationId}/assign`, {
      assignee_id: (await waiting()).setup.tenant.userId,
    });
    expect(res.statusCode).toBe(400);
  });

  it('bad bodies and parameters are 400s naming the problem, and change nothing', async () => {
    const { setup, conversationId } = await waiting();
    const cases: [string, unknown, string][] = [
      ['/messages', { content: 'hi', role: 'assistant' }, 'role'],
      ['/messages', { content: '' }, 'content'],
      ['/messages', { content: '   \n ' }, 'content'],
      ['/messages', { content: 'x'.repeat(4001) }, 'content'],
      ['/messages', { content: 'bad\u0000byte' }, 'NUL'],
      ['/messages', { content: 42 }, 'content'],
      ['/messages', {}, 'content'],
      ['/assign', { assignee_id: 'nobody' }, 'assignee_id'],
      ['/assign', { assignee_id: setup.tenant.userId, extra: true }, 'extra'],
      ['/close', { resolution: 'x'.repeat(2001) }, 'resolution'],
      ['/takeover', { force: true }, 'force'],
    ];
    for (const [path, body, word] of cases) {
      const res = await inbox(setup.tenant, 'POST', `/${conversationId}${path}`, body);
      expect(res.statusCode, `${path} ${JSON.stringify(body).slice(0, 60)}`).toBe(400);
      expect(res.json().detail).toContain(word);
    }
    expect((await inbox(setup.tenant, 'GET', '/not-a-uuid')).statusCode).toBe(400);
    expect((await inbox(setup.tenant, 'GET', '?status=open')).statusCode).toBe(400);
    expect((await inbox(setup.tenant, 'GET', '?limit=101')).statusCode).toBe(400);
    const detail = (await inbox(setup.tenant, 'GET', `/${conversationId}`)).json();
    expect(detail).toMatchObject({ status: 'handoff', assignee_id: null, message_count: 2 });
  });
});
