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
    tools?: { name: string; description?: string; input_schema: unknown }[];
    tool_choice?: { type: string };
  };
  apiKey: string | undefined;
}

/** One scripted reply: text, then `tool_use` blocks (stop_reason `tool_use`). */
export interface AnthropicReply {
  tokens?: string[];
  toolUses?: { id?: string; name: string; input: Record<string, unknown> }[];
}

type Block = { type: string; id?: string; tool_use_id?: string; name?: string };

/**
 * What the Messages API refuses with a 400 in a conversation with tools: `tool_use` blocks
 * without a `tool_result` for each in the next (user) message, results answering no call, tool
 * blocks in a request that declares no tools, tool names outside ^[a-zA-Z0-9_-]{1,64}$.
 */
function toolProblem(body: AnthropicRequest['body']): string | null {
  for (const tool of body.tools ?? [])
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name))
      return `tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`;
  const blocks = (content: unknown): Block[] => (Array.isArray(content) ? (content as Block[]) : []);
  const usesTools = body.messages.some((message) =>
    blocks(message.content).some((block) => block.type === 'tool_use' || block.type === 'tool_result'),
  );
  if (usesTools && !body.tools?.length)
    return 'Requests which include `tool_use` or `tool_result` blocks must define tools.';
  for (const [index, message] of body.messages.entries()) {
    const uses = blocks(message.content).filter((block) => block.type === 'tool_use');
    const results = blocks(message.content).filter((block) => block.type === 'tool_result');
    if (results.length) {
      const previous = blocks(body.messages[index - 1]?.content);
      const orphan = results.find(
        (result) => !previous.some((block) => block.type === 'tool_use' && block.id === result.tool_use_id),
      );
      if (orphan)
        return `messages.${index}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${orphan.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
    if (!uses.length) continue;
    const next = body.messages[index + 1];
    const answered = new Set(
      blocks(next?.content)
        .filter((block) => block.type === 'tool_result')
        .map((block) => block.tool_use_id),
    );
    const missing = uses.filter((use) => !answered.has(use.id));
    if (next?.role !== 'user' || missing.length)
      return `messages.${index + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.map((use) => use.id).join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
  }
  return null;
}

export async function startFakeAnthropic(
  tokens: string[],
  status = 200,
  reply: (body: AnthropicRequest['body']) => AnthropicReply = () => ({ tokens }),
) {
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
    const body = requests[requests.length - 1]!.body;
    const problem = toolProblem(body);
    if (problem) {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: problem } }));
      return;
    }
    const script = reply(body);
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
    const texts = script.tokens ?? [];
    const uses = script.toolUses ?? [];
    let block = 0;
    if (texts.length || !uses.length) {
      send('content_block_start', { index: block, content_block: { type: 'text', text: '' } });
      for (const token of texts)
        send('content_block_delta', { index: block, delta: { type: 'text_delta', text: token } });
      send('content_block_stop', { index: block });
      block += 1;
    }
    for (const use of uses) {
      const id = use.id ?? `toolu_${Math.random().toString(36).slice(2, 14)}`;
      send('content_block_start', { index: block, content_block: { type: 'tool_use', id, name: use.name, input: {} } });
      const json = JSON.stringify(use.input);
      for (let at = 0; at < json.length; at += 9)
        send('content_block_delta', {
          index: block,
          delta: { type: 'input_json_delta', partial_json: json.slice(at, at + 9) },
        });
      send('content_block_stop', { index: block });
      block += 1;
    }
    send('message_delta', {
      delta: { stop_reason: uses.length ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: texts.length + uses.length },
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
