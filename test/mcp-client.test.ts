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
    expect(check.json()).toMatchObject({ ok: true, detail: expect.stringContaining('warehouse: 6 tools') });

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
      'mcp_open_case',
      'mcp_order_status',
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

describe("builtin:kb and the tools an agent's rules name", () => {
  const patch = (setup: ChatSetup, body: unknown) =>
    t.app.inject({
      method: 'PATCH',
      url: `/api/public/agents/${setup.agentId}`,
      headers: setup.tenant.headers,
      payload: body as never,
    });

  it("calls the named tool with the order number in the named input, and the server's other tool for a ticket", async () => {
    const setup = await chatSetup(t.app, t.container);
    const { api, id } = await mcpIntegration(setup);
    expect((await api.test(id)).json()).toMatchObject({ ok: true });
    const set = await patch(setup, {
      tool_rules: {
        order_lookup: { integration_id: id, tool: 'order_status', input_key: 'reference' },
        escalation_ticket: { integration_id: id, tool: 'open_case' },
      },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().tool_rules).toEqual({
      order_lookup: { integration_id: id, tool: 'order_status', input_key: 'reference' },
      escalation_ticket: { integration_id: id, tool: 'open_case' },
    });

    let calls = peer.calls.length;
    const answer = await turn(setup, 'Where is my order #1042?');
    // The named tool, not the server's lookup_order of the usual name.
    expect(peer.calls.slice(calls)).toEqual([
      { name: 'order_status', args: { reference: '1042' }, authorization: `Bearer ${peer.token}` },
    ]);
    expect(answer.agent_response_text).toContain('out for delivery today');

    calls = peer.calls.length;
    const escalated = await turn(setup, 'I want to talk to a person');
    const cases = peer.calls.slice(calls);
    expect(cases.map((call) => call.name)).toEqual(['open_case']);
    expect(cases[0]!.args).toMatchObject({
      title: expect.any(String),
      body: expect.stringContaining('talk to a person'),
    });
    expect(escalated.agent_response_text).toContain('I opened a ticket for you.');

    // A rule set to null is cleared: the tool of the usual name again; the other rule is kept.
    const cleared = await patch(setup, { tool_rules: { order_lookup: null } });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json().tool_rules).toEqual({
      order_lookup: null,
      escalation_ticket: { integration_id: id, tool: 'open_case' },
    });
    calls = peer.calls.length;
    await turn(setup, 'Where is my order #77?');
    expect(peer.calls.slice(calls).map((call) => call.name)).toEqual(['lookup_order']);
  });

  it('does not fall back to another tool when the named one is no longer offered', async () => {
    const setup = await chatSetup(t.app, t.container);
    const { api, id } = await mcpIntegration(setup);
    expect((await api.test(id)).json()).toMatchObject({ ok: true });
    expect(
      (await patch(setup, { tool_rules: { order_lookup: { integration_id: id, tool: 'order_status' } } })).statusCode,
    ).toBe(200);
    // The integration now allows lookup_order only: the rule's tool is gone, nothing is called.
    const narrowed = await api.update(id, { config: { url: peer.url, allowed_tools: ['lookup_order'] } });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    const calls = peer.calls.length;
    const answer = await turn(setup, 'Where is my order #1042?');
    expect(peer.calls.length).toBe(calls);
    expect(answer.agent_response_text).not.toContain('1Z999AA10123456784');
  });

  it('refuses a rule naming a tool the agent is not offered, a wrong input key, unknown fields and wrong types', async () => {
    const setup = await chatSetup(t.app, t.container);
    const { api, id } = await mcpIntegration(setup);
    const refused = async (body: unknown, words: RegExp) => {
      const res = await patch(setup, body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().detail).toMatch(words);
    };
    // Before the live check the server's tools are not known.
    await refused({ tool_rules: { order_lookup: { integration_id: id, tool: 'order_status' } } }, /live check/);
    expect((await api.test(id)).json()).toMatchObject({ ok: true });
    await refused(
      { tool_rules: { order_lookup: { integration_id: id, tool: 'track_parcel' } } },
      /offers no tool 'track_parcel' \(it offers: .*order_status/,
    );
    await refused(
      { tool_rules: { order_lookup: { integration_id: id, tool: 'order_status', input_key: 'ref' } } },
      /has no input 'ref' \(it takes: .*reference/,
    );
    await refused(
      { tool_rules: { escalation_ticket: { integration_id: id, tool: 'open_case', input_key: 'title' } } },
      /order_lookup only/,
    );
    // Another company's integration, and one of this company not linked to the agent.
    const other = await chatSetup(t.app, t.container);
    const theirs = await mcpIntegration(other);
    await api.test(theirs.id);
    await refused(
      { tool_rules: { order_lookup: { integration_id: theirs.id, tool: 'order_status' } } },
      /offers this agent no tools/,
    );
    const unlinked = await api.create({
      name: 'Elsewhere',
      type: 'mcp',
      config: { url: peer.url, headers: { Authorization: `Bearer ${peer.token}` } },
    });
    const unlinkedId = unlinked.json<{ id: string }>().id;
    await api.test(unlinkedId);
    await refused(
      { tool_rules: { order_lookup: { integration_id: unlinkedId, tool: 'order_status' } } },
      /offers this agent no tools/,
    );
    // Named in integration_ids in the same request, it is accepted.
    const named = await patch(setup, {
      integration_ids: [unlinkedId],
      tool_rules: { order_lookup: { integration_id: unlinkedId, tool: 'order_status' } },
    });
    expect(named.statusCode, named.body).toBe(200);
    // Taking that integration away under the rule is refused.
    await refused({ integration_ids: [] }, /tool_rules\.order_lookup.*offers this agent no tools/);

    for (const body of [
      { tool_rules: { order_lookup: { integration_id: id, tool: 'order_status', extra: 1 } } },
      { tool_rules: { refund: { integration_id: id, tool: 'order_status' } } },
      { tool_rules: { order_lookup: { integration_id: 'not-a-uuid', tool: 'order_status' } } },
      { tool_rules: { order_lookup: { integration_id: id, tool: 42 } } },
      { tool_rules: { order_lookup: { integration_id: id, tool: 'order status\u0000' } } },
      { tool_rules: { order_lookup: { integration_id: id, tool: 'x'.repeat(129) } } },
      { tool_rules: { order_lookup: { integration_id: id } } },
      { tool_rules: 'order_status' },
    ]) {
      const res = await patch(setup, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    // A rule set on create is checked too.
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: setup.tenant.headers,
      payload: {
        title: 'Orders',
        integration_ids: [id],
        tool_rules: { order_lookup: { integration_id: id, tool: 'order_status' } },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().tool_rules.order_lookup).toEqual({ integration_id: id, tool: 'order_status' });
  });
});
