/**
 * A local HTTP server that answers like Anthropic's Messages API (POST /v1/messages, streaming):
 * message_start, content_block_start, one content_block_delta per token, content_block_stop,
 * message_delta, message_stop. Records requests and their headers.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AnthropicRequest {
  body: {
    model: string;
    system?: unknown;
    messages: { role: string; content: unknown }[];
    stream?: boolean;
    temperature?: number;
  };
  apiKey: string | undefined;
}

export async function startFakeAnthropic(tokens: string[], status = 200) {
  const requests: AnthropicRequest[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    requests.push({
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      apiKey: request.headers['x-api-key'] as string | undefined,
    });
    if (request.method !== 'POST' || !request.url?.endsWith('/messages')) {
      response.writeHead(404).end();
      return;
    }
    if (status !== 200) {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (event: string, data: object) =>
      response.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    send('message_start', {
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'claude-test',
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    });
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    for (const token of tokens) send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: token } });
    send('content_block_stop', { index: 0 });
    send('message_delta', {
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: tokens.length },
    });
    send('message_stop', {});
    response.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
