/**
 * An MCP server as an integration (`type: mcp`): a server built with the official SDK answers the
 * live check (its tools listed and cached) and a model's tool calls through the fake provider;
 * failures, a slow server (the time limit) and a huge answer (truncated) are reported as other
 * tools' are; the secret header is masked and never in the logs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatSetup, type ChatSetup } from './helpers/chat.js';
import { fakeProviders, startFakeOpenAi, type ChatCompletionRequest, type FakeOpenAi } from './helpers/fake-openai.js';
import { createLoggedTestApp, integrationsApi, type LoggedTestApp } from './helpers/integrations.js';
import { HUGE_CHARS, startMcpPeer, type McpPeer } from './helpers/mcp-peer.js';

let t: LoggedTestApp;
let openai: FakeOpenAi;
let peer: McpPeer;

beforeAll(async () => {
  [openai, peer] = await Promise.all([startFakeOpenAi(), startMcpPeer({ slowMs: 8000 })]);
  t = await createLoggedTestApp({
    LLM_PROVIDERS: fakeProviders(openai),
    ALLOW_PRIVATE_URLS: 'true',
    INTEGRATION_TIMEOUT_MS: '1500',
    CHAT_MAX_TOOL_STEPS: '2',
  });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await Promise.all([openai?.close(), peer?.close()]);
});

const toolMessages = (request: ChatCompletionRequest) => request.messages.filter((message) => message.role === 'tool');

async function mcpIntegration(setup: ChatSetup, config: Record<string, unknown> = {}) {
  const api = integrationsApi(t.app, setup.tenant);
  const res = await api.create({
    name: 'Warehouse',
    type: 'mcp',
    agent_id: setup.agentId,
    config: { url: peer.url, headers: { Authorization: `Bearer ${peer.token}` }, ...config },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { api, id: res.json<{ id: string }>().id };
}

async function turn(setup: ChatSetup, query: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/chat/agent/chat',
    headers: setup.token,
    payload: { agent_key: setup.agentKey, query },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ agent_response_text: string; conversation_id: string }>();
}

/** The fake model calls `tool` with `args` once, then answers with what the tool said. */
function callOnce(tool: string, args: Record<string, unknown>) {
  openai.reply = (request) =>
    toolMessages(request).length
      ? { tokens: [`Tool said: ${String(toolMessages(request)[0]!.content).slice(0, 300)}`] }
      : { tokens: ['Checking.'], toolCalls: [{ name: tool, arguments: args }] };
}

describe('an MCP server as an integration', () => {
  it('masks the header, lists the tools at the live check, and offers them to the model', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    const { api, id } = await mcpIntegration(setup);
    const shown = (await api.get(id)).json<{ config: { headers: Record<string, string> } }>();
    expect(shown.config.headers.Authorization).toMatch(/^••••/);
    expect(JSON.stringify(shown)).not.toContain(peer.token);

    const check = await api.test(id);
    expect(check.json()).toMatchObject({ ok: true, detail: expect.stringContaining('warehouse: 4 tools') });

    callOnce('mcp_lookup_order', { order: '1042' });
    const before = openai.requests.length;
    const answer = await turn(setup, 'Where is order 1042?');
    expect(answer.agent_response_text).toContain('1Z999AA10123456784');
    const [first, second] = openai.requests.slice(before);
    expect(first!.tools!.map((tool) => tool.function.name).sort()).toEqual([
      'handoff_to_human',
      'mcp_explode',
      'mcp_huge',
      'mcp_lookup_order',
      'mcp_slow',
    ]);
    const lookup = first!.tools!.find((tool) => tool.function.name === 'mcp_lookup_order')!;
    expect(lookup.function.parameters).toMatchObject({ properties: { order: { type: 'string' } } });
    // The answer reached the model as data.
    expect(toolMessages(second!)[0]!.content).toMatch(/^Data returned by an external system/);
    expect(peer.calls.at(-1)).toEqual({
      name: 'lookup_order',
      args: { order: '1042' },
      authorization: `Bearer ${peer.token}`,
    });

    const db = t.container.db;
    const notes = await db
      .selectFrom('notifications')
      .selectAll()
      .where('company_id', '=', setup.tenant.companyId)
      .execute();
    expect(notes.find((note) => note.notification_type === 'api_call')?.metadata).toMatchObject({
      tool_used: 'mcp_lookup_order',
      status: 'ok',
    });
    const [query] = await db
      .selectFrom('support_queries')
      .selectAll()
      .where('company_id', '=', setup.tenant.companyId)
      .execute();
    expect(query!.tools_used).toContain('mcp_lookup_order');
    expect(t.logs.join('\n')).not.toContain(peer.token);
  });

  it('reports a failing tool, a slow server and a huge answer as other tools are', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    const { api, id } = await mcpIntegration(setup);
    expect((await api.test(id)).json()).toMatchObject({ ok: true });

    callOnce('mcp_explode', {});
    let before = openai.requests.length;
    await turn(setup, 'Break it');
    let result = String(toolMessages(openai.requests.slice(before)[1]!)[0]!.content);
    expect(result).toContain('the warehouse database is down');

    callOnce('mcp_slow', {});
    before = openai.requests.length;
    await turn(setup, 'Take your time');
    result = String(toolMessages(openai.requests.slice(before)[1]!)[0]!.content);
    expect(result).toMatch(/failed|no answer|time/i);

    callOnce('mcp_huge', {});
    before = openai.requests.length;
    await turn(setup, 'Tell me everything');
    result = String(toolMessages(openai.requests.slice(before)[1]!)[0]!.content);
    expect(result).toContain('truncated');
    expect(result.length).toBeLessThan(HUGE_CHARS / 2);

    const statuses = await t.container.db
      .selectFrom('notifications')
      .select(['priority', 'metadata'])
      .where('company_id', '=', setup.tenant.companyId)
      .where('notification_type', '=', 'api_call')
      .execute();
    const byTool = new Map(statuses.map((row) => [(row.metadata as { tool_used: string }).tool_used, row]));
    expect(byTool.get('mcp_explode')).toMatchObject({ priority: 'high', metadata: { status: 'failed' } });
    expect(byTool.get('mcp_slow')).toMatchObject({ priority: 'high', metadata: { status: 'failed' } });
    expect(byTool.get('mcp_huge')).toMatchObject({ metadata: { status: 'ok' } });
  });

  it('offers only the allowed tools, and fails the live check with wrong credentials', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    const { api, id } = await mcpIntegration(setup, { allowed_tools: ['lookup_order'] });
    expect((await api.test(id)).json()).toMatchObject({ ok: true });
    callOnce('mcp_lookup_order', { order: '7' });
    const before = openai.requests.length;
    await turn(setup, 'Order 7?');
    expect(openai.requests[before]!.tools!.map((tool) => tool.function.name).sort()).toEqual([
      'handoff_to_human',
      'mcp_lookup_order',
    ]);

    const wrong = await mcpIntegration(setup, { headers: { Authorization: 'Bearer nope' } });
    const refused = (await api.test(wrong.id)).json();
    expect(refused).toMatchObject({ ok: false });
    expect(refused.detail).not.toContain('nope');

    const bad = await api.create({ name: 'Bad', type: 'mcp', config: { url: peer.url, surprise: 1 } });
    expect(bad.statusCode).toBe(400);
  });
});

describe('builtin:kb and an MCP order look-up', () => {
  it("looks an order up by rule through the server's lookup_order tool, filling the server's own input name", async () => {
    const setup = await chatSetup(t.app, t.container);
    const { api, id } = await mcpIntegration(setup);
    expect((await api.test(id)).json()).toMatchObject({ ok: true });
    const calls = peer.calls.length;
    const answer = await turn(setup, 'Where is my order #1042?');
    expect(peer.calls.slice(calls)).toEqual([
      { name: 'lookup_order', args: { order: '1042' }, authorization: `Bearer ${peer.token}` },
    ]);
    expect(answer.agent_response_text).toContain('1Z999AA10123456784');
  });
});
