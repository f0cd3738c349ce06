import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chat, chatSetup } from './helpers/chat.js';
import { createTenant } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t?.close());

const url = '/api/v1/chat/conversations';

describe('conversations', () => {
  it('creates, lists with filters, renames and closes', async () => {
    const setup = await chatSetup(t.app, t.container);
    const created = await t.app.inject({
      method: 'POST',
      url,
      headers: setup.token,
      payload: { agent_id: setup.agentId, deployment_id: setup.deploymentId, title: 'Order help', user: 'cust-1' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({
      agent_id: setup.agentId,
      deployment_id: setup.deploymentId,
      title: 'Order help',
      status: 'open',
      user: 'cust-1',
      message_count: 0,
    });
    await t.app.inject({
      method: 'POST',
      url,
      headers: setup.token,
      payload: { agent_id: setup.agentId, user: 'cust-2' },
    });
    const all = await t.app.inject({ method: 'GET', url: `${url}?limit=10`, headers: setup.token });
    expect(all.json()).toMatchObject({ total: 2, skip: 0, limit: 10 });
    const mine = await t.app.inject({ method: 'GET', url: `${url}?user=cust-1`, headers: setup.token });
    expect(mine.json().data.map((c: { id: string }) => c.id)).toEqual([created.json().id]);
    const renamed = await t.app.inject({
      method: 'PATCH',
      url: `${url}/${created.json().id}`,
      headers: setup.token,
      payload: { title: 'Where is my order' },
    });
    expect(renamed.json()).toMatchObject({ title: 'Where is my order', status: 'open' });
    const closed = await t.app.inject({
      method: 'PATCH',
      url: `${url}/${created.json().id}`,
      headers: setup.token,
      payload: { status: 'closed' },
    });
    expect(closed.json().status).toBe('closed');
    expect(closed.json().closed_at).toMatch(/Z$/);
    const open = await t.app.inject({ method: 'GET', url: `${url}?status=open`, headers: setup.token });
    expect(open.json().total).toBe(1);
  });

  it.each([
    ['POST', url, { agent_id: 'x' }, /agent_id.*UUID/],
    ['POST', url, {}, /'agent_id': is required/],
    ['POST', url, { agent_id: '00000000-0000-4000-8000-000000000000', title: 5 }, /'title': must be string/],
    ['GET', `${url}?limit=101`, undefined, /limit/],
    ['GET', `${url}?status=archived`, undefined, /status.*one of: open, closed/],
    ['GET', `${url}?agent_id=nope`, undefined, /agent_id/],
  ] as const)('%s %s rejects bad input with 400', async (method, path, payload, message) => {
    const setup = await chatSetup(t.app, t.container);
    const res = await t.app.inject({ method, url: path, headers: setup.token, ...(payload ? { payload } : {}) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'ValidationError', statusCode: 400 });
    expect(res.json().message).toMatch(message);
  });

  it("rejects an empty PATCH, an unknown agent or deployment, and other companies' conversations", async () => {
    const setup = await chatSetup(t.app, t.container);
    const other = await chatSetup(t.app, t.container);
    const theirs = (
      await t.app.inject({ method: 'POST', url, headers: other.token, payload: { agent_id: other.agentId } })
    ).json();
    expect(
      (await t.app.inject({ method: 'POST', url, headers: setup.token, payload: { agent_id: other.agentId } }))
        .statusCode,
    ).toBe(404);
    const deployment = await t.app.inject({
      method: 'POST',
      url,
      headers: setup.token,
      payload: { agent_id: setup.agentId, deployment_id: other.deploymentId },
    });
    expect(deployment.statusCode).toBe(404);
    expect(deployment.json().message).toMatch(/Deployment not found/);
    for (const [method, path, payload] of [
      ['GET', `${url}/${theirs.id}`, undefined],
      ['PATCH', `${url}/${theirs.id}`, { title: 'x' }],
      ['GET', `${url}/${theirs.id}/messages`, undefined],
      ['POST', `${url}/${theirs.id}/feedback`, { rating: 5 }],
    ] as const) {
      const res = await t.app.inject({ method, url: path, headers: setup.token, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      expect(res.json().message).toMatch(/Conversation not found/);
    }
    expect(
      (await t.app.inject({ method: 'PATCH', url: `${url}/${theirs.id}`, headers: other.token, payload: {} }))
        .statusCode,
    ).toBe(400);
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': setup.tenant.apiKey } })).statusCode).toBe(
      401,
    );
  });

  it('limits a bound token to its agent', async () => {
    const setup = await chatSetup(t.app, t.container, {}, { bound: true });
    const other = (
      await t.app.inject({
        method: 'POST',
        url: '/api/public/agents',
        headers: setup.tenant.headers,
        payload: { title: 'Sales' },
      })
    ).json();
    const unbound = (await setup.tenant.chatToken()).headers;
    const foreign = (
      await t.app.inject({ method: 'POST', url, headers: unbound, payload: { agent_id: other.id } })
    ).json();
    expect(
      (await t.app.inject({ method: 'POST', url, headers: setup.token, payload: { agent_id: other.id } })).statusCode,
    ).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: `${url}/${foreign.id}`, headers: setup.token })).statusCode).toBe(
      404,
    );
    await t.app.inject({ method: 'POST', url, headers: setup.token, payload: { agent_id: setup.agentId } });
    const list = await t.app.inject({ method: 'GET', url, headers: setup.token });
    expect(list.json().data.every((c: { agent_id: string }) => c.agent_id === setup.agentId)).toBe(true);
    expect(list.json().total).toBe(1);
  });

  it("records feedback once per conversation and feeds the support query's satisfaction", async () => {
    const setup = await chatSetup(t.app, t.container);
    const { conversation_id } = (await chat(t.app, setup, { query: 'Hello there' })).json();
    const first = await t.app.inject({
      method: 'POST',
      url: `${url}/${conversation_id}/feedback`,
      headers: setup.token,
      payload: { rating: 2, comment: 'meh' },
    });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ conversation_id, rating: 2, comment: 'meh' });
    const second = await t.app.inject({
      method: 'POST',
      url: `${url}/${conversation_id}/feedback`,
      headers: setup.token,
      payload: { rating: 5 },
    });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ id: first.json().id, rating: 5, comment: '' });
    for (const rating of [0, 6, 4.5, '5']) {
      const bad = await t.app.inject({
        method: 'POST',
        url: `${url}/${conversation_id}/feedback`,
        headers: setup.token,
        payload: { rating },
      });
      expect(bad.statusCode, String(rating)).toBe(400);
    }
    const conversation = (
      await t.app.inject({ method: 'GET', url: `${url}/${conversation_id}`, headers: setup.token })
    ).json();
    const query = (
      await t.app.inject({
        method: 'GET',
        url: `/customer-support/${conversation.support_query_id}`,
        headers: setup.tenant.headers,
      })
    ).json();
    expect(query.metadata.customer_satisfaction).toBe(5);
    const agent = (
      await t.app.inject({ method: 'GET', url: `/api/public/agents/${setup.agentId}`, headers: setup.tenant.headers })
    ).json();
    expect(agent.performance_metrics).toMatchObject({
      total_queries_handled: 1,
      customer_satisfaction_avg: 5,
      success_rate: 0,
    });
  });

  it('carries a rating given before the first message over to the support query', async () => {
    const setup = await chatSetup(t.app, t.container);
    const created = (
      await t.app.inject({ method: 'POST', url, headers: setup.token, payload: { agent_id: setup.agentId } })
    ).json();
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `${url}/${created.id}/feedback`,
          headers: setup.token,
          payload: { rating: 4 },
        })
      ).statusCode,
    ).toBe(201);
    await chat(t.app, setup, { query: 'Hello', conversation_id: created.id });
    const conversation = (
      await t.app.inject({ method: 'GET', url: `${url}/${created.id}`, headers: setup.token })
    ).json();
    const query = (
      await t.app.inject({
        method: 'GET',
        url: `/customer-support/${conversation.support_query_id}`,
        headers: setup.tenant.headers,
      })
    ).json();
    expect(query.metadata.customer_satisfaction).toBe(4);
  });

  it("opens a conversation with the agent's welcome message, which the model then sees", async () => {
    const setup = await chatSetup(t.app, t.container, { welcome_message: 'Hi! Ask me about orders.' });
    const created = await t.app.inject({
      method: 'POST',
      url,
      headers: setup.token,
      payload: { agent_id: setup.agentId },
    });
    expect(created.json().message_count).toBe(1);
    const messages = await t.app.inject({
      method: 'GET',
      url: `${url}/${created.json().id}/messages`,
      headers: setup.token,
    });
    expect(messages.json().data).toMatchObject([
      { role: 'assistant', content: 'Hi! Ask me about orders.', citations: [] },
    ]);
    const turn = await chat(t.app, setup, { query: 'Where is my order?', conversation_id: created.json().id });
    expect(turn.statusCode).toBe(200);
    const after = await t.app.inject({ method: 'GET', url: `${url}/${created.json().id}`, headers: setup.token });
    expect(after.json().message_count).toBe(3);
  });

  it("keeps conversations to the token's company", async () => {
    const setup = await chatSetup(t.app, t.container);
    await t.app.inject({ method: 'POST', url, headers: setup.token, payload: { agent_id: setup.agentId } });
    expect((await t.app.inject({ method: 'GET', url, headers: setup.token })).json().total).toBe(1);
    const stranger = await createTenant(t.container);
    const list = await t.app.inject({ method: 'GET', url, headers: (await stranger.chatToken()).headers });
    expect(list.json().total).toBe(0);
  });

  it('is described in the OpenAPI document', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const paths = res.json().paths as Record<string, Record<string, { security?: unknown[] }>>;
    for (const path of [
      '/api/v1/chat/conversations',
      '/api/v1/chat/conversations/{conversationId}/messages',
      '/api/v1/chat/agent/chat',
      '/api/v1/chat/agent/stream',
      '/api/public/agents',
      '/api/public/regions',
    ]) {
      expect(paths[path], path).toBeDefined();
    }
    expect(paths['/api/v1/chat/agent/chat']!.post!.security).toEqual([{ apiToken: [] }]);
  });
});
