/**
 * Tool calling through the model client against local servers that speak the OpenAI
 * chat-completions and Anthropic Messages protocols: tools declared in the request, tool calls
 * streamed back (arguments in pieces), the results sent in the next request as each vendor wants.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient } from '../src/adapters/llm/llm-client.js';
import { toToolCall } from '../src/adapters/llm/protocol.js';
import type { LlmMessage, LlmStreamPart, LlmTool, LlmToolCall } from '../src/ports/llm.js';
import { startFakeAnthropic } from './helpers/fake-anthropic.js';
import { startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';

const tools: LlmTool[] = [
  {
    name: 'shopify_lookup_order',
    description: 'Look up an order.',
    inputSchema: {
      type: 'object',
      properties: { order_number: { type: 'string' } },
      required: ['order_number'],
      additionalProperties: false,
    },
  },
  {
    name: 'slack_post_message',
    description: 'Tell the team.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

const question: LlmMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Where is order 1042?' },
];

async function collect(stream: AsyncIterable<LlmStreamPart>) {
  const text: string[] = [];
  const calls: LlmToolCall[] = [];
  for await (const part of stream) {
    if (typeof part === 'string') text.push(part);
    else calls.push(part);
  }
  return { text: text.join(''), calls };
}

/** The messages of the second step: the calls, then one result each (the second failed). */
function followUp(calls: LlmToolCall[]): LlmMessage[] {
  return [
    ...question,
    { role: 'assistant', content: 'Checking.', toolCalls: calls },
    { role: 'tool', toolCallId: calls[0]!.id, toolName: calls[0]!.name, content: '{"status":"FULFILLED"}' },
    { role: 'tool', toolCallId: calls[1]!.id, toolName: calls[1]!.name, content: 'Slack: invalid_auth', isError: true },
  ];
}

let openai: FakeOpenAi;
beforeAll(async () => {
  openai = await startFakeOpenAi();
});
afterAll(async () => openai?.close());

describe('model client: tool calls', () => {
  it.each(['openai', 'openai-compatible'] as const)(
    '%s: declares tools, streams calls, sends results back',
    async (type) => {
      const llm = createLlmClient({
        providers: [{ name: 'p', type, apiKey: 'sk-x', baseUrl: openai.url, models: [] }],
      });
      openai.reply = () => ({
        tokens: ['Checking.'],
        toolCalls: [
          { id: 'call_a', name: 'shopify_lookup_order', arguments: { order_number: '1042' } },
          { id: 'call_b', name: 'slack_post_message', arguments: { text: 'Customer asks about #1042' } },
        ],
      });
      const before = openai.requests.length;
      const signal = new AbortController().signal;
      const first = await collect(llm.stream({ model: 'p:m', messages: question, temperature: 0, signal, tools }));
      expect(first.text).toBe('Checking.');
      expect(first.calls).toEqual([
        { type: 'tool-call', id: 'call_a', name: 'shopify_lookup_order', input: { order_number: '1042' } },
        { type: 'tool-call', id: 'call_b', name: 'slack_post_message', input: { text: 'Customer asks about #1042' } },
      ]);
      const sent = openai.requests[before]!;
      expect(sent.tools).toEqual([
        {
          type: 'function',
          function: {
            name: 'shopify_lookup_order',
            description: 'Look up an order.',
            parameters: tools[0]!.inputSchema,
          },
        },
        {
          type: 'function',
          function: { name: 'slack_post_message', description: 'Tell the team.', parameters: tools[1]!.inputSchema },
        },
      ]);
      expect(sent.tool_choice).toBe('auto');

      openai.reply = () => ({ tokens: ['Order 1042 is fulfilled.'] });
      const second = await collect(
        llm.stream({
          model: 'p:m',
          messages: followUp(first.calls),
          temperature: 0,
          signal,
          tools,
          toolChoice: 'none',
        }),
      );
      expect(second).toEqual({ text: 'Order 1042 is fulfilled.', calls: [] });
      const next = openai.requests[before + 1]!;
      expect(next.tool_choice).toBe('none');
      expect(next.messages.slice(2)).toEqual([
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'shopify_lookup_order', arguments: '{"order_number":"1042"}' },
            },
            {
              id: 'call_b',
              type: 'function',
              function: { name: 'slack_post_message', arguments: '{"text":"Customer asks about #1042"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '{"status":"FULFILLED"}' },
        { role: 'tool', tool_call_id: 'call_b', content: 'Slack: invalid_auth' },
      ]);
    },
  );

  it('Anthropic: tool_use blocks with input_json_delta, then tool_result blocks in one user message', async () => {
    let step = 0;
    const anthropic = await startFakeAnthropic([], 200, () =>
      step++ === 0
        ? {
            tokens: ['Checking.'],
            toolUses: [
              { id: 'toolu_a', name: 'shopify_lookup_order', input: { order_number: '1042' } },
              { id: 'toolu_b', name: 'slack_post_message', input: { text: 'Customer asks about #1042' } },
            ],
          }
        : { tokens: ['Fulfilled.'] },
    );
    try {
      const llm = createLlmClient({
        providers: [{ name: 'c', type: 'anthropic', apiKey: 'ak-1', baseUrl: anthropic.url, models: [] }],
      });
      const signal = new AbortController().signal;
      const first = await collect(
        llm.stream({ model: 'c:claude-test', messages: question, temperature: 0, signal, tools }),
      );
      expect(first.text).toBe('Checking.');
      expect(first.calls.map((call) => [call.id, call.name, call.input])).toEqual([
        ['toolu_a', 'shopify_lookup_order', { order_number: '1042' }],
        ['toolu_b', 'slack_post_message', { text: 'Customer asks about #1042' }],
      ]);
      expect(anthropic.requests[0]!.body.tools).toMatchObject([
        { name: 'shopify_lookup_order', description: 'Look up an order.', input_schema: tools[0]!.inputSchema },
        { name: 'slack_post_message', description: 'Tell the team.', input_schema: tools[1]!.inputSchema },
      ]);
      expect(anthropic.requests[0]!.body.tool_choice).toEqual({ type: 'auto' });

      const second = await collect(
        llm.stream({
          model: 'c:claude-test',
          messages: followUp(first.calls),
          temperature: 0,
          signal,
          tools,
          toolChoice: 'none',
        }),
      );
      expect(second).toEqual({ text: 'Fulfilled.', calls: [] });
      const body = anthropic.requests[1]!.body;
      expect(body.tool_choice).toEqual({ type: 'none' });
      expect(body.messages.slice(1)).toMatchObject([
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_a', name: 'shopify_lookup_order', input: { order_number: '1042' } },
            {
              type: 'tool_use',
              id: 'toolu_b',
              name: 'slack_post_message',
              input: { text: 'Customer asks about #1042' },
            },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: '{"status":"FULFILLED"}' },
            { type: 'tool_result', tool_use_id: 'toolu_b', content: 'Slack: invalid_auth', is_error: true },
          ],
        },
      ]);
    } finally {
      await anthropic.close();
    }
  });

  it('a request without tools declares none', async () => {
    const llm = createLlmClient({
      providers: [{ name: 'p', type: 'openai', apiKey: 'sk-x', baseUrl: openai.url, models: [] }],
    });
    openai.reply = () => ({ tokens: ['Hi'] });
    const before = openai.requests.length;
    await collect(
      llm.stream({ model: 'p:m', messages: question, temperature: 0, signal: new AbortController().signal }),
    );
    expect(openai.requests[before]!.tools).toBeUndefined();
    expect(openai.requests[before]!.tool_choice).toBeUndefined();
  });

  it('maps tool-call inputs: a JSON object, else null', () => {
    expect(toToolCall({ toolCallId: 'a', toolName: 't', input: '{"x":1}' }).input).toEqual({ x: 1 });
    expect(toToolCall({ toolCallId: 'a', toolName: 't', input: '' }).input).toEqual({});
    expect(toToolCall({ toolCallId: 'a', toolName: 't', input: '[1]' }).input).toBeNull();
    expect(toToolCall({ toolCallId: 'a', toolName: 't', input: '{"x":' }).input).toBeNull();
  });
});
