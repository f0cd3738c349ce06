/**
 * The MCP server (`/mcp`) driven by the official SDK's client over Streamable HTTP, unmodified:
 * initialize, tools (search, a recorded agent turn with progress notifications, support queries),
 * resources with cursors, sessions (ids, another credential's, DELETE), bearer checks with the
 * RFC 9728 challenge, another company's credential, and a bound chat token's scope.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chatSetup, type ChatSetup } from './helpers/chat.js';
import { uploadArticle, waitForTask } from './knowledge/helpers.js';

let t: TestApp;
let base: string;
let a: ChatSetup;
let b: ChatSetup;
let documentId: string;
const open: Client[] = [];

async function connect(bearer: string | null): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: bearer ? { Authorization: `Bearer ${bearer}` } : {} },
  });
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
  await client.connect(transport);
  open.push(client);
  return { client, transport };
}

const tokenOf = (setup: ChatSetup) => setup.token['x-api-token'];
const textOf = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;
const jsonOf = <T = Record<string, unknown>>(result: unknown) => JSON.parse(textOf(result)) as T;

/** A raw POST of one JSON-RPC message to /mcp. */
function post(body: unknown, headers: Record<string, string>) {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  [a, b] = await Promise.all([chatSetup(t.app, t.container), chatSetup(t.app, t.container)]);
  const upload = await uploadArticle(t.app, a.tenant.headers, {
    document_title: 'Returns and refunds',
    content: 'Q: How long do refunds take?\nA: Refunds are paid to the original card within 5 business days.',
  });
  expect((await waitForTask(t, a.tenant.headers, upload.task_id)).status).toBe('completed');
  documentId = String(upload.document_id).replace(/^doc_/, '');
}, 60_000);
afterAll(async () => {
  await Promise.all(open.map((client) => client.close().catch(() => undefined)));
  await t?.close();
});

describe('initialize and tools', () => {
  it('initializes a session with an API key and lists the four tools', async () => {
    const { client, transport } = await connect(a.tenant.apiKey);
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(client.getServerVersion()).toMatchObject({ name: 'switchboard' });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'ask_agent',
      'get_support_query',
      'list_support_queries',
      'search_knowledge',
    ]);
    const ask = tools.find((tool) => tool.name === 'ask_agent')!;
    expect(ask.description).toContain(a.agentKey);
    expect(ask.inputSchema.required).toEqual(['query']);
  });

  it('searches the knowledge base with citations', async () => {
    const { client } = await connect(tokenOf(a));
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query: 'refunds', top_k: 2 } });
    expect(result.isError).toBeFalsy();
    const found = jsonOf<{ results: { text: string; citation: Record<string, string> }[] }>(result);
    expect(found.results[0]!.text).toContain('5 business days');
    expect(found.results[0]!.citation).toMatchObject({
      title: 'Returns and refunds',
      uri: `switchboard://documents/${documentId}`,
    });
  });

  it('refuses invalid tool input as a tool error naming the field (unknown fields too)', async () => {
    const { client } = await connect(a.tenant.apiKey);
    const empty = await client.callTool({ name: 'search_knowledge', arguments: {} });
    expect(empty.isError).toBe(true);
    expect(textOf(empty)).toMatch(/query/);
    const extra = await client.callTool({ name: 'search_knowledge', arguments: { query: 'x', sql: 'drop' } });
    expect(extra.isError).toBe(true);
    expect(textOf(extra)).toMatch(/sql/);
    const badId = await client.callTool({ name: 'get_support_query', arguments: { id: 'nope' } });
    expect(badId.isError).toBe(true);
    expect(textOf(badId)).not.toMatch(/at .*\.ts:\d+/);
  });

  it('asks an agent with progress notifications, records the turn, and continues the conversation', async () => {
    const { client } = await connect(a.tenant.apiKey);
    const progress: string[] = [];
    const first = await client.callTool(
      { name: 'ask_agent', arguments: { agent_key: a.agentKey, query: 'How long do refunds take?' } },
      undefined,
      { onprogress: (event) => progress.push(String(event.message)) },
    );
    expect(first.isError).toBeFalsy();
    const answer = jsonOf<{ answer: string; conversation_id: string }>(first);
    expect(answer.answer).toContain('5 business days');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.join('')).toBe(answer.answer);

    const second = await client.callTool({
      name: 'ask_agent',
      arguments: { query: 'And to which card?', conversation_id: answer.conversation_id },
    });
    expect(jsonOf(second).conversation_id).toBe(answer.conversation_id);

    // Recorded as any channel's turn: the conversation and its support query.
    const conversation = await t.app.inject({
      method: 'GET',
      url: `/api/v1/chat/conversations/${answer.conversation_id}`,
      headers: a.token,
    });
    expect(conversation.statusCode).toBe(200);
    const queryId = conversation.json().support_query_id as string;
    expect(queryId).toBeTruthy();

    const listed = jsonOf<{ data: { id: string }[] }>(
      await client.callTool({ name: 'list_support_queries', arguments: { limit: 100 } }),
    );
    expect(listed.data.map((query) => query.id)).toContain(queryId);
    const got = await client.callTool({ name: 'get_support_query', arguments: { id: queryId } });
    expect(jsonOf(got)).toMatchObject({ id: queryId, agent_id: a.agentId });

    // Another company's key sees none of it.
    const other = (await connect(b.tenant.apiKey)).client;
    const foreign = await other.callTool({ name: 'get_support_query', arguments: { id: queryId } });
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign)).toMatch(/not found/i);
    const theirs = jsonOf<{ data: unknown[] }>(await other.callTool({ name: 'list_support_queries', arguments: {} }));
    expect(theirs.data).toEqual([]);
    const search = jsonOf<{ results: unknown[] }>(
      await other.callTool({ name: 'search_knowledge', arguments: { query: 'refunds' } }),
    );
    expect(search.results).toEqual([]);
    const asked = await other.callTool({ name: 'ask_agent', arguments: { agent_key: a.agentKey, query: 'Hi' } });
    expect(asked.isError).toBe(true);
  });
});

describe('resources', () => {
  it('lists collections and documents a page at a time and reads them', async () => {
    const created: string[] = [];
    for (let i = 0; i < 52; i += 1) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/public/collections',
        headers: a.tenant.headers,
        payload: { name: `Shelf ${i}`, company_id: a.tenant.companyId },
      });
      expect(res.statusCode, res.body).toBe(201);
      created.push(res.json().id as string);
    }
    const { client } = await connect(a.tenant.apiKey);
    const first = await client.listResources();
    expect(first.resources).toHaveLength(50);
    expect(first.nextCursor).toBeTruthy();
    const second = await client.listResources({ cursor: first.nextCursor });
    expect(second.nextCursor).toBeUndefined();
    const uris = [...first.resources, ...second.resources].map((resource) => resource.uri);
    expect(new Set(uris).size).toBe(uris.length);
    for (const id of created) expect(uris).toContain(`switchboard://collections/${id}`);
    expect(uris).toContain(`switchboard://documents/${documentId}`);

    const document = await client.readResource({ uri: `switchboard://documents/${documentId}` });
    expect(document.contents[0]).toMatchObject({ mimeType: 'text/plain' });
    expect((document.contents[0] as { text: string }).text).toContain('original card');
    const collection = await client.readResource({ uri: `switchboard://collections/${created[0]}` });
    expect(JSON.parse((collection.contents[0] as { text: string }).text)).toMatchObject({ name: 'Shelf 0' });

    await expect(client.listResources({ cursor: 'not-a-cursor' })).rejects.toThrow(/cursor/i);
    const other = (await connect(b.tenant.apiKey)).client;
    await expect(other.readResource({ uri: `switchboard://documents/${documentId}` })).rejects.toThrow(/not found/i);
    expect((await other.listResources()).resources).toEqual([]);
  });
});

describe('sessions', () => {
  it('answers a session to its own credential only, and ends it on DELETE', async () => {
    const { client, transport } = await connect(a.tenant.apiKey);
    const sessionId = transport.sessionId!;
    const list = { jsonrpc: '2.0', id: 7, method: 'tools/list' };
    const version = { 'mcp-protocol-version': '2025-06-18' };
    const stranger = await post(list, {
      authorization: `Bearer ${b.tenant.apiKey}`,
      'mcp-session-id': sessionId,
      ...version,
    });
    expect(stranger.status).toBe(404);
    expect(await stranger.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 }, id: null });

    // The client holds the session's GET stream of server messages: a second one is refused.
    const again = await fetch(`${base}/mcp`, {
      headers: {
        authorization: `Bearer ${a.tenant.apiKey}`,
        accept: 'text/event-stream',
        'mcp-session-id': sessionId,
        ...version,
      },
    });
    expect(again.status).toBe(409);
    await again.body?.cancel();
    // A session initialized by hand: its answer is plain JSON (no progress token), then its GET stream opens at once.
    const init = await post(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      },
      { authorization: `Bearer ${a.tenant.apiKey}` },
    );
    expect(init.status).toBe(200);
    expect(init.headers.get('content-type')).toContain('application/json');
    const rawSession = init.headers.get('mcp-session-id')!;
    expect(await init.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'switchboard' } } });
    const raw = { authorization: `Bearer ${a.tenant.apiKey}`, 'mcp-session-id': rawSession, ...version };
    // A batch of two requests: an array of the two responses.
    const batch = await post(
      [
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'resources/templates/list' },
      ],
      raw,
    );
    expect(batch.headers.get('content-type')).toContain('application/json');
    const answers = (await batch.json()) as { id: number; result: object }[];
    expect(answers.map((answer) => answer.id).sort()).toEqual([2, 3]);
    // A request with a progress token: an event stream, its response an event.
    const search = { name: 'search_knowledge', arguments: { query: 'refunds' } };
    const streamed = await post(
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { ...search, _meta: { progressToken: 'p1' } } },
      raw,
    );
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    const events = await streamed.text();
    expect(events).toMatch(/^event: message\ndata: \{.*"id":4/m);
    expect(events).toContain('"content"');
    const plain = await post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: search }, raw);
    expect(plain.headers.get('content-type')).toContain('application/json');
    expect(await plain.json()).toMatchObject({ id: 5, result: { content: [{ type: 'text' }] } });
    const controller = new AbortController();
    const stream = await fetch(`${base}/mcp`, {
      headers: {
        authorization: `Bearer ${a.tenant.apiKey}`,
        accept: 'text/event-stream',
        'mcp-session-id': rawSession,
        ...version,
      },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(stream.headers.get('x-request-id')).toBeTruthy();
    controller.abort();

    await transport.terminateSession();
    const after = await post(list, {
      authorization: `Bearer ${a.tenant.apiKey}`,
      'mcp-session-id': sessionId,
      ...version,
    });
    expect(after.status).toBe(404);
    await client.close();
  });

  it('refuses a request without a session that is not initialize', async () => {
    const res = await post(
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { authorization: `Bearer ${a.tenant.apiKey}` },
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
  });

  it('answers a session opened on another instance with 404, and the client initializes again there', async () => {
    const other = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
    try {
      const otherBase = await other.app.listen({ port: 0, host: '127.0.0.1' });
      const { transport } = await connect(a.tenant.apiKey);
      const sessionId = transport.sessionId!;
      const headers = { Authorization: `Bearer ${a.tenant.apiKey}` };
      // The same session id, the same credential, the other instance (one database).
      const res = await fetch(`${otherBase}/mcp`, {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(404);
      const body = (await res.json()) as { error: { code: number; message: string } };
      expect(body).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 }, id: null });
      expect(body.error.message).toMatch(/another instance.*initialize a new one/);

      // The SDK's client resuming that session there gets the 404 ...
      const resumed = new Client({ name: 'resumed', version: '1.0.0' });
      open.push(resumed);
      await resumed.connect(
        new StreamableHTTPClientTransport(new URL(`${otherBase}/mcp`), { sessionId, requestInit: { headers } }),
      );
      await expect(resumed.listTools()).rejects.toMatchObject({
        code: 404,
        message: expect.stringContaining('-32001'),
      });
      // ... and a new session there answers.
      const fresh = new Client({ name: 'fresh', version: '1.0.0' });
      open.push(fresh);
      await fresh.connect(new StreamableHTTPClientTransport(new URL(`${otherBase}/mcp`), { requestInit: { headers } }));
      const search = await fresh.callTool({ name: 'search_knowledge', arguments: { query: 'refunds' } });
      expect(textOf(search)).toContain('original card');
      await Promise.all([resumed.close(), fresh.close()]);
    } finally {
      await other.close();
    }
  });
});

describe('authentication', () => {
  it('answers 401 with the resource metadata challenge without a bearer or with a wrong one', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer ct_wrong' },
      { authorization: 'Bearer sk_wrong' },
    ]) {
      const res = await post(init, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain(
        'resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp"'.replace(
          'http://localhost:3000',
          t.container.config.publicBaseUrl,
        ),
      );
      expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    }
    await expect(connect('ct_wrong')).rejects.toThrow();
    await expect(connect(null)).rejects.toThrow();
  });

  it('serves the protected resource metadata (RFC 9728) at both addresses', async () => {
    for (const url of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        resource: `${t.container.config.publicBaseUrl}/mcp`,
        bearer_methods_supported: ['header'],
      });
    }
  });
});

describe('a chat token bound to an agent', () => {
  it("sees that agent only: its support queries, not another agent's, nor asking another agent", async () => {
    const second = await chatSetup(t.app, t.container);
    // A second agent of company A with a turn of its own.
    const agent = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: a.tenant.headers,
      payload: { title: 'Other' },
    });
    expect(agent.statusCode).toBe(201);
    const bound = (await a.tenant.chatToken(a.agentId)).token;
    const { client } = await connect(bound);
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'ask_agent')!.description).toContain(a.agentKey);
    // Without agent_key: the bound agent's one deployment.
    const asked = await client.callTool({ name: 'ask_agent', arguments: { query: 'How long do refunds take?' } });
    expect(asked.isError).toBeFalsy();
    const listed = jsonOf<{ data: { agent_id: string }[] }>(
      await client.callTool({ name: 'list_support_queries', arguments: { limit: 100 } }),
    );
    expect(listed.data.length).toBeGreaterThan(0);
    expect(new Set(listed.data.map((query) => query.agent_id))).toEqual(new Set([a.agentId]));
    // A chat token is a customer-facing credential: the team's internal notes and their authors stay hidden.
    const queryId = (listed.data[0] as unknown as { id: string }).id;
    await t.container.db
      .insertInto('support_notes')
      .values([
        {
          company_id: a.tenant.companyId,
          query_id: queryId,
          user_id: a.tenant.userId,
          content: 'Internal: VIP',
          is_internal: true,
        },
        {
          company_id: a.tenant.companyId,
          query_id: queryId,
          user_id: a.tenant.userId,
          content: 'Refund sent',
          is_internal: false,
        },
      ])
      .execute();
    type Noted = { notes: { content: string; user: unknown }[] };
    const seen = jsonOf<Noted>(await client.callTool({ name: 'get_support_query', arguments: { id: queryId } }));
    expect(seen.notes.map((note) => [note.content, note.user])).toEqual([['Refund sent', null]]);
    const inList = jsonOf<{ data: (Noted & { id: string })[] }>(
      await client.callTool({ name: 'list_support_queries', arguments: { limit: 100 } }),
    ).data.find((query) => query.id === queryId)!;
    expect(inList.notes.map((note) => note.content)).toEqual(['Refund sent']);
    const team = (await connect(a.tenant.apiKey)).client;
    const full = jsonOf<Noted>(await team.callTool({ name: 'get_support_query', arguments: { id: queryId } }));
    expect(full.notes.map((note) => note.content).sort()).toEqual(['Internal: VIP', 'Refund sent']);
    expect(full.notes.every((note) => note.user !== null)).toBe(true);
    const elsewhere = await client.callTool({
      name: 'ask_agent',
      arguments: { agent_key: `agent:${agent.json().id}:web:us-east`, query: 'Hi' },
    });
    expect(elsewhere.isError).toBe(true);
    const foreign = await client.callTool({
      name: 'ask_agent',
      arguments: { agent_key: second.agentKey, query: 'Hi' },
    });
    expect(foreign.isError).toBe(true);
  });
});
