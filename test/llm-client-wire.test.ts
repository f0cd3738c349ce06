/**
 * The model client on the wire, against local peers that answer byte for byte as OpenAI's
 * chat-completions and Anthropic's Messages APIs do: tool-call pieces over many events, usage,
 * error bodies, error events, a stream that breaks off, and the connection closed on abort.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createLlmClient } from '../src/adapters/llm/llm-client.js';
import type { LlmProviderConfig } from '../src/config.js';
import { LlmError, type LlmRequest, type LlmStreamPart, type LlmUsage } from '../src/ports/llm.js';

interface Peer {
  url: string;
  requests: { url: string; headers: IncomingMessage['headers']; body: Record<string, unknown>; socket: Socket }[];
  /** Connections the peer has seen closed. */
  closed: Set<Socket>;
  close(): Promise<void>;
}

type Answer = (response: ServerResponse, body: Record<string, unknown>) => void | Promise<void>;

const peers: Peer[] = [];
afterEach(async () => {
  await Promise.all(peers.splice(0).map((peer) => peer.close()));
});

async function startPeer(answer: Answer): Promise<Peer> {
  const peer: Peer = { url: '', requests: [], closed: new Set(), close: async () => undefined };
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    peer.requests.push({ url: request.url ?? '', headers: request.headers, body, socket: request.socket });
    await answer(response, body);
  });
  server.on('connection', (socket: Socket) => socket.on('close', () => peer.closed.add(socket)));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  peer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  peer.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  peers.push(peer);
  return peer;
}

const sse = (response: ServerResponse) =>
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const anthropicEvent = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

function client(peer: Peer, type: LlmProviderConfig['type'], apiKey = 'sk-test-key-123', dispatcher?: Dispatcher) {
  return createLlmClient({ providers: [{ name: 'p', type, apiKey, baseUrl: peer.url, models: [] }], dispatcher });
}

function ask(extra: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model: 'p:m',
    messages: [{ role: 'user', content: 'Where is order 1042?' }],
    temperature: 0,
    signal: new AbortController().signal,
    ...extra,
  };
}

async function run(stream: AsyncIterable<LlmStreamPart>) {
  const parts: LlmStreamPart[] = [];
  try {
    for await (const part of stream) parts.push(part);
    return { parts, error: undefined };
  } catch (error) {
    return { parts, error };
  }
}

async function until(check: () => boolean, what: string) {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!check()) throw new Error(`never: ${what}`);
}

describe('model client: OpenAI chat completions on the wire', () => {
  it('assembles tool calls from pieces over many events, interleaved by index, split mid-line, and reports usage', async () => {
    const first = JSON.stringify({ order_number: '1042', note: 'déjà vu' });
    const second = JSON.stringify({ text: 'Customer asks about #1042' });
    const peer = await startPeer(async (response) => {
      sse(response);
      let out = chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Checking' }) + chunk({ content: '…' });
      out += chunk({
        tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '' } }],
      });
      out += chunk({ tool_calls: [{ index: 1, type: 'function', function: { name: 'notify', arguments: '' } }] });
      for (let at = 0; at < Math.max(first.length, second.length); at += 3) {
        if (at < first.length)
          out += chunk({ tool_calls: [{ index: 0, function: { arguments: first.slice(at, at + 3) } }] });
        if (at < second.length)
          out += chunk({ tool_calls: [{ index: 1, function: { arguments: second.slice(at, at + 3) } }] });
      }
      out += chunk({}, 'tool_calls');
      out += `data: ${JSON.stringify({ id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 31, completion_tokens: 7, total_tokens: 38 } })}\r\n\r\n`;
      out += 'data: [DONE]\n\n';
      // Written in pieces of 5 bytes: events, lines and characters split between reads.
      const bytes = Buffer.from(out);
      for (let at = 0; at < bytes.length; at += 5) {
        response.write(bytes.subarray(at, at + 5));
        if (at % 400 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      response.end();
    });
    const usage: LlmUsage[] = [];
    const { parts, error } = await run(
      client(peer, 'openai').stream(
        ask({
          tools: [
            { name: 'lookup', description: 'Look up.', inputSchema: { type: 'object' } },
            { name: 'notify', description: 'Tell.', inputSchema: { type: 'object' } },
          ],
          onUsage: (counted) => usage.push(counted),
        }),
      ),
    );
    expect(error).toBeUndefined();
    expect(parts.slice(0, 2)).toEqual(['Checking', '…']);
    expect(parts[2]).toEqual({ type: 'tool-call', id: 'call_a', name: 'lookup', input: JSON.parse(first) });
    expect(parts[3]).toMatchObject({ type: 'tool-call', name: 'notify', input: JSON.parse(second) });
    expect((parts[3] as { id: string }).id).toMatch(/^call_[0-9a-f-]{36}$/);
    expect(parts).toHaveLength(4);
    expect(usage).toEqual([{ inputTokens: 31, outputTokens: 7 }]);
    const sent = peer.requests[0]!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test-key-123');
    expect(sent.body).toMatchObject({ model: 'm', stream: true, stream_options: { include_usage: true } });
  });

  it('speaks to a reasoning model as OpenAI wants: developer prompt, no temperature, max_completion_tokens', async () => {
    const peer = await startPeer((response) => {
      sse(response);
      response.end(chunk({ content: 'ok' }) + 'data: [DONE]\n\n');
    });
    const llm = client(peer, 'openai');
    const messages: LlmRequest['messages'] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ];
    await run(llm.stream(ask({ model: 'p:gpt-5-mini', messages, temperature: 0.3, maxTokens: 99 })));
    await run(llm.stream(ask({ model: 'p:gpt-4o-mini', messages, temperature: 0.3, maxTokens: 99 })));
    const [reasoning, chat] = peer.requests.map((request) => request.body);
    expect(reasoning).toMatchObject({
      max_completion_tokens: 99,
      messages: [{ role: 'developer', content: 'Be brief.' }, {}],
    });
    expect(reasoning).not.toHaveProperty('temperature');
    expect(reasoning).not.toHaveProperty('max_tokens');
    expect(chat).toMatchObject({
      max_tokens: 99,
      temperature: 0.3,
      messages: [{ role: 'system', content: 'Be brief.' }, {}],
    });
  });

  it('asks an OpenAI-compatible server for no usage option, and reports none when it sends none', async () => {
    const peer = await startPeer((response) => {
      sse(response);
      response.end(chunk({ content: 'ok' }) + chunk({}, 'stop') + 'data: [DONE]\n\n');
    });
    const usage: LlmUsage[] = [];
    const { parts } = await run(
      client(peer, 'openai-compatible', '').stream(ask({ onUsage: (counted) => usage.push(counted) })),
    );
    expect(parts).toEqual(['ok']);
    expect(usage).toEqual([{ inputTokens: undefined, outputTokens: undefined }]);
    expect(peer.requests[0]!.body).not.toHaveProperty('stream_options');
    expect(peer.requests[0]!.headers.authorization).toBeUndefined();
  });

  it.each([
    [
      401,
      false,
      'Incorrect API key provided: sk-test-key-123. You can find your API key at https://platform.openai.com.',
    ],
    [429, true, 'Rate limit reached for gpt-4o-mini in organization org-x on tokens per min (TPM).'],
    [500, true, 'The server had an error while processing your request.'],
    [400, false, "Invalid 'messages[1].content': string too long."],
  ])(
    'maps an HTTP %i error body to LlmError (retryable: %s), naming its message but never the key',
    async (status, retryable, message) => {
      const peer = await startPeer((response) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
      });
      const { parts, error } = await run(client(peer, 'openai').stream(ask()));
      expect(parts).toEqual([]);
      expect(error).toBeInstanceOf(LlmError);
      expect(error).toMatchObject({ status, retryable });
      const text = (error as LlmError).message;
      expect(text).toMatch(new RegExp(`^The language model provider failed \\(HTTP ${status}\\): `));
      expect(text).toContain(message.split(':')[0]!);
      expect(text).not.toContain('sk-test-key-123');
    },
  );

  it('names the status when the error body is not the protocol (a proxy page)', async () => {
    const peer = await startPeer((response) => {
      response.writeHead(502, { 'content-type': 'text/html' });
      response.end('<html><body>upstream down</body></html>');
    });
    const { error } = await run(client(peer, 'openai').stream(ask()));
    expect(error).toMatchObject({
      status: 502,
      retryable: true,
      message: expect.stringMatching(/HTTP 502\): Bad Gateway$/),
    });
  });

  it('an error event before any output stands for the request: the status its type names', async () => {
    const peer = await startPeer((response) => {
      sse(response);
      response.end(
        chunk({ role: 'assistant', content: '' }) +
          `data: ${JSON.stringify({ error: { message: 'Rate limit exceeded', type: 'rate_limit_exceeded', code: 'rate_limit_exceeded' } })}\n\n`,
      );
    });
    const { parts, error } = await run(client(peer, 'openai').stream(ask()));
    expect(parts).toEqual([]);
    expect(error).toMatchObject({
      status: 429,
      retryable: true,
      message: expect.stringContaining('Rate limit exceeded'),
    });
  });

  it('fails with no status and retryable when nothing answers', async () => {
    const peer = await startPeer(() => undefined);
    const url = peer.url;
    await peer.close();
    const llm = createLlmClient({ providers: [{ name: 'p', type: 'openai', apiKey: 'k', baseUrl: url, models: [] }] });
    const { error } = await run(llm.stream(ask()));
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({
      status: undefined,
      retryable: true,
      message: expect.stringMatching(/\(no response\)/),
    });
  });
});

describe('model client: Anthropic Messages on the wire', () => {
  const messageStart = anthropicEvent('message_start', {
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-test',
      stop_reason: null,
      usage: { input_tokens: 12, cache_read_input_tokens: 3, output_tokens: 1 },
    },
  });

  it('sends the protocol headers and max_tokens, and reports usage with cached input', async () => {
    const peer = await startPeer((response) => {
      sse(response);
      response.write(messageStart);
      response.write(anthropicEvent('ping', {}));
      response.write(anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
      response.write(anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } }));
      response.write(anthropicEvent('content_block_stop', { index: 0 }));
      response.write(
        anthropicEvent('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }),
      );
      response.end(anthropicEvent('message_stop', {}));
    });
    const usage: LlmUsage[] = [];
    const llm = client(peer, 'anthropic', 'ak-secret-1');
    const { parts } = await run(
      llm.stream(ask({ model: 'p:claude-sonnet-4-20250514', temperature: 1.5, onUsage: (u) => usage.push(u) })),
    );
    await run(llm.stream(ask({ model: 'p:claude-3-5-haiku-latest', maxTokens: 300 })));
    // The newest models refuse sampling parameters; an unknown name gets 4,096 tokens.
    await run(llm.stream(ask({ model: 'p:claude-opus-4-7', temperature: 0.5 })));
    await run(llm.stream(ask({ model: 'p:my-proxy-model', temperature: 0.5 })));
    expect(parts).toEqual(['Hi']);
    expect(usage).toEqual([{ inputTokens: 15, outputTokens: 9 }]);
    const [first, second, third, fourth] = peer.requests;
    expect(first!.url).toBe('/v1/messages');
    expect(first!.headers['x-api-key']).toBe('ak-secret-1');
    expect(first!.headers['anthropic-version']).toBe('2023-06-01');
    expect(first!.headers.authorization).toBeUndefined();
    expect(first!.body).toMatchObject({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 64_000,
      temperature: 1,
      stream: true,
    });
    expect(second!.body).toMatchObject({ max_tokens: 300, temperature: 0 });
    expect(third!.body).toMatchObject({ max_tokens: 128_000 });
    expect(third!.body).not.toHaveProperty('temperature');
    expect(fourth!.body).toMatchObject({ max_tokens: 4096, temperature: 0.5 });
  });

  it('an overloaded error as the first event is a 529 to retry; an error event later keeps what was sent', async () => {
    let step = 0;
    const peer = await startPeer((response) => {
      sse(response);
      if (step++ === 0) {
        response.end(anthropicEvent('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }));
        return;
      }
      response.write(messageStart);
      response.write(anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
      response.write(anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Part' } }));
      response.end(anthropicEvent('error', { error: { type: 'api_error', message: 'Internal server error' } }));
    });
    const llm = client(peer, 'anthropic');
    const overloaded = await run(llm.stream(ask()));
    expect(overloaded.error).toMatchObject({
      status: 529,
      retryable: true,
      message: expect.stringContaining('Overloaded'),
    });
    const midway = await run(llm.stream(ask()));
    expect(midway.parts).toEqual(['Part']);
    expect(midway.error).toBeInstanceOf(LlmError);
    expect(midway.error).toMatchObject({
      status: undefined,
      retryable: true,
      message: expect.stringContaining('Internal server error'),
    });
  });

  it('an error body names the provider message (401 not retryable, 429 retryable)', async () => {
    let status = 401;
    const peer = await startPeer((response) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      const type = status === 401 ? 'authentication_error' : 'rate_limit_error';
      response.end(
        JSON.stringify({
          type: 'error',
          error: {
            type,
            message: status === 401 ? 'invalid x-api-key' : 'Number of requests has exceeded your rate limit',
          },
        }),
      );
    });
    const llm = client(peer, 'anthropic');
    const denied = await run(llm.stream(ask()));
    expect(denied.error).toMatchObject({
      status: 401,
      retryable: false,
      message: expect.stringContaining('invalid x-api-key'),
    });
    status = 429;
    const limited = await run(llm.stream(ask()));
    expect(limited.error).toMatchObject({
      status: 429,
      retryable: true,
      message: expect.stringContaining('rate limit'),
    });
  });

  it('a stream that breaks off mid-way is a retryable LlmError after the text already sent', async () => {
    const peer = await startPeer(async (response) => {
      sse(response);
      response.write(messageStart);
      response.write(anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
      response.write(anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hal' } }));
      await new Promise((resolve) => setTimeout(resolve, 20));
      response.socket?.destroy();
    });
    const { parts, error } = await run(client(peer, 'anthropic').stream(ask()));
    expect(parts).toEqual(['Hal']);
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({
      status: 200,
      retryable: true,
      message: expect.stringMatching(/HTTP 200\): the stream broke off/),
    });
  });
});

describe('model client: connections', () => {
  const held = (response: ServerResponse) => {
    sse(response);
    response.write(chunk({ role: 'assistant', content: '' }) + chunk({ content: 'first' }));
    // …and nothing more: the peer holds the stream open.
  };

  it('a reply faster than its consumer: the connection pauses past the parts waiting and resumes, every part in order', async () => {
    const words = Array.from({ length: 3000 }, (_, i) => `w${i} `);
    const peer = await startPeer((response) => {
      sse(response);
      // One write: the client reads hundreds of events in each chunk, far past what may wait.
      response.end(
        chunk({ role: 'assistant', content: '' }) +
          words.map((word) => chunk({ content: word })).join('') +
          'data: [DONE]\n\n',
      );
    });
    const parts: LlmStreamPart[] = [];
    for await (const part of client(peer, 'openai').stream(ask())) {
      parts.push(part);
      // A consumer that yields to other work now and then, as a turn writing to its client does.
      if (parts.length % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(parts).toEqual(words);
  });

  it('abort mid-stream closes the provider connection, and the stream ends without an error', async () => {
    const peer = await startPeer(held);
    const controller = new AbortController();
    const parts: LlmStreamPart[] = [];
    for await (const part of client(peer, 'openai').stream(ask({ signal: controller.signal }))) {
      parts.push(part);
      controller.abort();
    }
    expect(parts).toEqual(['first']);
    const served = peer.requests[0]!.socket;
    await until(() => peer.closed.has(served), 'the peer sees its connection closed');
  });

  it('a consumer that stops reading closes the connection too; a finished stream leaves its own open', async () => {
    const peer = await startPeer((response, body) => {
      if ((body.messages as { content: string }[])[0]!.content === 'hold') return held(response);
      sse(response);
      response.end(chunk({ content: 'done' }) + 'data: [DONE]\n\n');
    });
    const agent = new Agent();
    let dispatched = 0;
    const counting = agent.compose((dispatch) => (options, handler) => {
      dispatched += 1;
      return dispatch(options, handler);
    });
    try {
      const llm = client(peer, 'openai', 'k', counting);
      expect((await run(llm.stream(ask()))).parts).toEqual(['done']);
      expect((await run(llm.stream(ask()))).parts).toEqual(['done']);
      for await (const part of llm.stream(ask({ messages: [{ role: 'user', content: 'hold' }] }))) {
        expect(part).toBe('first');
        break;
      }
      const [done1, done2, hold] = peer.requests.map((request) => request.socket);
      await until(() => peer.closed.has(hold!), 'the peer sees the held connection closed');
      // Closing one is immediate: had a finished stream closed its connection, it would show by now.
      for (const socket of [done1, done2]) if (socket !== hold) expect(peer.closed.has(socket!)).toBe(false);
      expect(dispatched).toBe(3);
    } finally {
      await agent.close();
    }
  });
});
