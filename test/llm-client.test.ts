/** The model client against local servers that speak the OpenAI and Anthropic protocols. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient } from '../src/adapters/llm/llm-client.js';
import { LlmError, type LlmMessage, type LlmStreamPart } from '../src/ports/llm.js';
import { startFakeAnthropic } from './helpers/fake-anthropic.js';
import { startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';

let openai: FakeOpenAi;
beforeAll(async () => {
  openai = await startFakeOpenAi();
});
afterAll(async () => openai?.close());

const messages: LlmMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello!' },
  { role: 'user', content: 'Bye?' },
];

async function collect(stream: AsyncIterable<LlmStreamPart>) {
  const deltas: LlmStreamPart[] = [];
  for await (const delta of stream) deltas.push(delta);
  return deltas;
}

describe('model client', () => {
  it.each(['openai', 'openai-compatible'] as const)(
    'streams %s chat-completions tokens in order with the history',
    async (type) => {
      const llm = createLlmClient({
        providers: [{ name: 'p', type, apiKey: 'sk-x', baseUrl: openai.url, models: [] }],
      });
      openai.reply = () => ({ tokens: ['one', ' two', ' three'] });
      const before = openai.requests.length;
      const deltas = await collect(
        llm.stream({ model: 'p:m1', messages, temperature: 0.2, signal: new AbortController().signal }),
      );
      expect(deltas).toEqual(['one', ' two', ' three']);
      const sent = openai.requests[before]!;
      expect(sent).toMatchObject({ model: 'm1', stream: true, temperature: 0.2 });
      expect(sent.messages).toEqual([{ role: 'system', content: 'Be brief.' }, ...messages.slice(1)]);
    },
  );

  it('streams Anthropic Messages tokens with the system prompt apart', async () => {
    const anthropic = await startFakeAnthropic(['Bon', 'jour']);
    try {
      const llm = createLlmClient({
        providers: [
          { name: 'claude', type: 'anthropic', apiKey: 'ak-1', baseUrl: anthropic.url, models: ['claude-test'] },
        ],
      });
      const deltas = await collect(
        llm.stream({ model: 'claude:claude-test', messages, temperature: 1, signal: new AbortController().signal }),
      );
      expect(deltas).toEqual(['Bon', 'jour']);
      const sent = anthropic.requests[0]!;
      expect(sent.apiKey).toBe('ak-1');
      expect(JSON.stringify(sent.body.system)).toContain('Be brief.');
      expect(sent.body.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    } finally {
      await anthropic.close();
    }
  });

  it('reports a provider error as LlmError with its status and whether to retry', async () => {
    const llm = createLlmClient({
      providers: [{ name: 'p', type: 'openai', apiKey: 'sk-x', baseUrl: openai.url, models: [] }],
    });
    openai.reply = () => ({ status: 429 });
    const error = await collect(
      llm.stream({ model: 'p:m1', messages, temperature: 0, signal: new AbortController().signal }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ status: 429, retryable: true });
    const anthropic = await startFakeAnthropic([], 400);
    try {
      const claude = createLlmClient({
        providers: [{ name: 'c', type: 'anthropic', apiKey: 'k', baseUrl: anthropic.url, models: [] }],
      });
      const bad = await collect(
        claude.stream({ model: 'c:x', messages, temperature: 0, signal: new AbortController().signal }),
      ).catch((e: unknown) => e);
      expect(bad).toMatchObject({ status: 400, retryable: false });
    } finally {
      await anthropic.close();
    }
  });

  it.each([
    ['an error event', { errorAfter: 2 }, /server had an error/],
    ['a dropped connection', { resetAfter: 2 }, /HTTP 200.*broke off/],
  ] as const)(
    'fails with LlmError on %s in the middle of a reply, after the tokens already sent',
    async (_name, failure, message) => {
      const llm = createLlmClient({
        providers: [{ name: 'p', type: 'openai', apiKey: 'sk-x', baseUrl: openai.url, models: [] }],
      });
      openai.reply = () => ({ tokens: ['a', 'b', 'c', 'd'], ...failure });
      const deltas: LlmStreamPart[] = [];
      const error = await (async () => {
        for await (const delta of llm.stream({
          model: 'p:m1',
          messages,
          temperature: 0,
          signal: new AbortController().signal,
        }))
          deltas.push(delta);
      })().catch((e: unknown) => e);
      expect(deltas).toEqual(['a', 'b']);
      expect(error).toBeInstanceOf(LlmError);
      expect(error).toMatchObject({ message: expect.stringMatching(message), retryable: true });
    },
  );

  it('cancels the upstream request when the signal aborts', async () => {
    const llm = createLlmClient({
      providers: [{ name: 'p', type: 'openai', apiKey: 'sk-x', baseUrl: openai.url, models: [] }],
    });
    openai.reply = () => ({ tokens: ['first', 'never'], hangAfter: 1 });
    const abortedBefore = openai.aborted;
    const controller = new AbortController();
    const deltas: LlmStreamPart[] = [];
    for await (const delta of llm.stream({ model: 'p:m1', messages, temperature: 0, signal: controller.signal })) {
      deltas.push(delta);
      controller.abort();
    }
    expect(deltas).toEqual(['first']);
    for (let i = 0; i < 100 && openai.aborted === abortedBefore; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(openai.aborted).toBe(abortedBefore + 1);
  });

  it('checks model names against the configured providers', () => {
    const llm = createLlmClient({
      providers: [
        { name: 'p', type: 'openai', apiKey: 'sk-x', baseUrl: undefined, models: ['a'] },
        { name: 'q', type: 'anthropic', apiKey: 'k', baseUrl: undefined, models: [] },
      ],
    });
    expect(llm.providers()).toEqual(['p', 'q']);
    expect(llm.checkModel('p:a')).toBeNull();
    expect(llm.checkModel('q:anything')).toBeNull();
    expect(llm.checkModel('p:b')).toMatch(/not one of p's models: a/);
    expect(llm.checkModel('z:a')).toMatch(/provider "z" is not configured \(configured: p, q/);
    expect(llm.checkModel('p:')).toMatch(/<provider>:<model>/);
  });
});
