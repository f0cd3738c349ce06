/**
 * A local HTTP server that answers like OpenAI's chat-completions API (POST /v1/chat/completions),
 * streaming included: one `data:` SSE event per token, a final chunk with finish_reason, then
 * `data: [DONE]`. The test scripts each reply; the server records requests and aborted ones.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { constants as http2Constants } from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  tokens?: string[];
  /** Milliseconds between tokens. */
  delayMs?: number;
  /** Answer with this HTTP status and an OpenAI error body instead of a stream. */
  status?: number;
  /** Before sending the token at `index`, wait for `until` (a test's gate: "only once the client has seen …"). */
  holdBefore?: { index: number; until: Promise<unknown> };
  /** Stop sending after this many tokens and keep the connection open. */
  hangAfter?: number;
  /** After this many tokens, send an error event (as OpenAI does mid-stream) and end. */
  errorAfter?: number;
  /** After this many tokens, drop the connection. */
  resetAfter?: number;
  /**
   * Tool calls after the tokens, streamed as OpenAI does: a first `tool_calls` delta with the
   * call's id, type and name, then its `arguments` JSON in pieces; finish_reason `tool_calls`.
   */
  toolCalls?: { id?: string; name: string; arguments: Record<string, unknown> | string }[];
}

export interface ChatCompletionMessage {
  role: string;
  /** null on an assistant message that only calls tools. */
  content: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ChatCompletionRequest {
  model: string;
  messages: ChatCompletionMessage[];
  temperature?: number;
  stream?: boolean;
  tools?: { type: 'function'; function: { name: string; description?: string; parameters: unknown } }[];
  tool_choice?: unknown;
}

export interface FakeOpenAi {
  url: string;
  requests: ChatCompletionRequest[];
  /** Requests whose client went away before the reply ended. */
  aborted: number;
  reply: (request: ChatCompletionRequest) => FakeReply;
  close(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<ChatCompletionRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatCompletionRequest;
}

/**
 * What OpenAI refuses with a 400 in a conversation with tools: an assistant message with
 * `tool_calls` not followed by one `tool` message per call id, a tool message answering no call,
 * a tool name that breaks ^[a-zA-Z0-9_-]{1,64}$.
 */
function toolProblem(body: ChatCompletionRequest): string | null {
  for (const tool of body.tools ?? []) {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.function?.name ?? ''))
      return `Invalid 'tools[].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`;
  }
  for (let index = 0; index < body.messages.length; index++) {
    const message = body.messages[index]!;
    if (message.role === 'tool') {
      const previous = body.messages
        .slice(0, index)
        .reverse()
        .find((candidate) => candidate.role !== 'tool');
      if (!previous?.tool_calls?.some((call) => call.id === message.tool_call_id))
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
    }
    if (message.role !== 'assistant' || !message.tool_calls?.length) continue;
    const answered = new Set<string>();
    for (let next = index + 1; next < body.messages.length && body.messages[next]!.role === 'tool'; next++)
      answered.add(body.messages[next]!.tool_call_id ?? '');
    const missing = message.tool_calls.filter((call) => !answered.has(call.id)).map((call) => call.id);
    if (missing.length)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`;
  }
  return null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the client of a reply has gone (HTTP/1.1: its response was destroyed; HTTP/2: its stream). */
function gone(response: ServerResponse): boolean {
  const stream = (response as unknown as { stream?: { destroyed: boolean } }).stream;
  return stream ? stream.destroyed : response.destroyed;
}

/** Breaks a reply off: HTTP/1.1 drops the connection, HTTP/2 resets the stream (INTERNAL_ERROR). */
function breakOff(response: ServerResponse): void {
  const stream = (response as unknown as { stream?: { close(code: number): void } }).stream;
  if (stream) stream.close(http2Constants.NGHTTP2_INTERNAL_ERROR);
  else response.destroy();
}

/**
 * The request handler of the fake: node:http's, and node:http2's compatibility API (whose
 * request and response have the same shape) for the HTTP/2 peer of test/helpers/fake-openai-tls.ts.
 */
export function openAiHandler(fake: FakeOpenAi): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  return async (request, response) => {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'Not found', type: 'invalid_request_error' } }));
      return;
    }
    const body = await readJson(request);
    fake.requests.push(body);
    const script = fake.reply(body);
    const problem = toolProblem(body);
    if (problem) {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ error: { message: problem, type: 'invalid_request_error', param: 'messages', code: null } }),
      );
      return;
    }
    if (script.status) {
      response.writeHead(script.status, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: { message: `fake provider failure ${script.status}`, type: 'server_error', code: null },
        }),
      );
      return;
    }
    let finished = false;
    response.on('close', () => {
      if (!finished) fake.aborted += 1;
    });
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      // HTTP/2 has no connection-specific headers.
      ...(request.httpVersionMajor === 1 ? { connection: 'keep-alive' } : {}),
    });
    const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
    const created = Math.floor(Date.now() / 1000);
    const frame = (delta: Record<string, unknown>, finishReason: string | null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
    response.write(frame({ role: 'assistant', content: '' }, null));
    const tokens = script.tokens ?? [];
    for (const [index, token] of tokens.entries()) {
      if (script.hangAfter !== undefined && index >= script.hangAfter) return;
      if (script.errorAfter !== undefined && index >= script.errorAfter) {
        finished = true;
        response.end(
          `data: ${JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', code: null } })}\n\n`,
        );
        return;
      }
      if (script.resetAfter !== undefined && index >= script.resetAfter) {
        await sleep(20); // what was written reaches the client first
        breakOff(response);
        return;
      }
      if (script.delayMs) await sleep(script.delayMs);
      if (script.holdBefore?.index === index) await script.holdBefore.until;
      if (gone(response)) return;
      response.write(frame({ content: token }, null));
    }
    const calls = script.toolCalls ?? [];
    for (const [index, call] of calls.entries()) {
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      const callId = call.id ?? `call_${Math.random().toString(36).slice(2, 12)}`;
      response.write(
        frame(
          {
            tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }],
          },
          null,
        ),
      );
      // The arguments arrive in pieces, as the API streams them.
      for (let at = 0; at < args.length; at += 7)
        response.write(frame({ tool_calls: [{ index, function: { arguments: args.slice(at, at + 7) } }] }, null));
    }
    response.write(frame({}, calls.length ? 'tool_calls' : 'stop'));
    response.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage: { prompt_tokens: 10, completion_tokens: tokens.length, total_tokens: 10 + tokens.length } })}\n\n`,
    );
    response.end('data: [DONE]\n\n');
    finished = true;
  };
}

export async function startFakeOpenAi(
  reply: FakeOpenAi['reply'] = () => ({ tokens: ['Hello', ' there', '!'] }),
): Promise<FakeOpenAi> {
  const fake: FakeOpenAi = { url: '', requests: [], aborted: 0, reply, close: async () => undefined };
  const server: Server = createServer(openAiHandler(fake));
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return fake;
}

/** LLM_PROVIDERS naming the fake as an OpenAI provider (the real OpenAI adapter over HTTP). */
export function fakeProviders(fake: FakeOpenAi, type: 'openai' | 'openai-compatible' = 'openai'): string {
  return JSON.stringify([{ name: 'fake', type, base_url: fake.url, api_key: 'sk-test', models: ['gpt-test'] }]);
}
