/**
 * A local HTTP server that answers like OpenAI's chat-completions API (POST /v1/chat/completions),
 * streaming included: one `data:` SSE event per token, a final chunk with finish_reason, then
 * `data: [DONE]`. The test scripts each reply; the server records requests and aborted ones.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  tokens?: string[];
  /** Milliseconds between tokens. */
  delayMs?: number;
  /** Answer with this HTTP status and an OpenAI error body instead of a stream. */
  status?: number;
  /** Stop sending after this many tokens and keep the connection open. */
  hangAfter?: number;
  /** After this many tokens, send an error event (as OpenAI does mid-stream) and end. */
  errorAfter?: number;
  /** After this many tokens, drop the connection. */
  resetAfter?: number;
}

export interface ChatCompletionRequest {
  model: string;
  messages: { role: string; content: string }[];
  temperature?: number;
  stream?: boolean;
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startFakeOpenAi(
  reply: FakeOpenAi['reply'] = () => ({ tokens: ['Hello', ' there', '!'] }),
): Promise<FakeOpenAi> {
  const fake: FakeOpenAi = { url: '', requests: [], aborted: 0, reply, close: async () => undefined };
  const server: Server = createServer(async (request, response) => {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'Not found', type: 'invalid_request_error' } }));
      return;
    }
    const body = await readJson(request);
    fake.requests.push(body);
    const script = fake.reply(body);
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
      connection: 'keep-alive',
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
        response.destroy();
        return;
      }
      if (script.delayMs) await sleep(script.delayMs);
      if (response.destroyed) return;
      response.write(frame({ content: token }, null));
    }
    response.write(frame({}, 'stop'));
    response.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage: { prompt_tokens: 10, completion_tokens: tokens.length, total_tokens: 10 + tokens.length } })}\n\n`,
    );
    response.end('data: [DONE]\n\n');
    finished = true;
  });
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
