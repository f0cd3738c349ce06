import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chatSetup } from './helpers/chat.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { readChatStream } from './helpers/sse-client.js';

let t: TestApp;
let fake: FakeOpenAi;
let base: string;
beforeAll(async () => {
  fake = await startFakeOpenAi();
  // Turns whose client leaves are cancelled at once here (resuming is tested in chat-stream-resume).
  t = await createTestApp({ LLM_PROVIDERS: fakeProviders(fake), CHAT_HEARTBEAT_MS: '100', CHAT_STREAM_RESUME_MS: '0' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const llmAgent = { model: 'fake:gpt-test' };
const streamUrl = () => `${base}/api/v1/chat/agent/stream`;

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('POST /agent/stream', () => {
  it('streams start, one agent_text_chunk per model token as it is produced, then end', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    const tokens = ['The', ' answer', ' is', ' 42.'];
    // The provider holds its last token until the client has the first: only a stream that sends
    // each token as it is produced can finish (a buffered one would wait forever; the test's time
    // limit says so).
    let firstSeen!: () => void;
    const clientHasFirst = new Promise<void>((resolve) => (firstSeen = resolve));
    fake.reply = () => ({ tokens, delayMs: 20, holdBefore: { index: tokens.length - 1, until: clientHasFirst } });
    const events = await readChatStream(
      streamUrl(),
      setup.token,
      { agent_key: setup.agentKey, query: 'What is the answer?' },
      (event) => {
        if (event.type === 'agent_text_chunk') firstSeen();
      },
    );
    expect(events.map((event) => event.type)).toEqual([
      'start',
      'agent_text_chunk',
      'agent_text_chunk',
      'agent_text_chunk',
      'agent_text_chunk',
      'end',
    ]);
    expect(events.filter((e) => e.type === 'agent_text_chunk').map((e) => e.data.content)).toEqual(tokens);
    const conversationId = events[0]!.data.conversation_id;
    expect(
      events.every((event) => event.data.conversation_id === conversationId && event.data.type === event.type),
    ).toBe(true);
    expect(events[5]!.data).toMatchObject({ was_resolved: true, content: '' });
    const messages = await t.app.inject({
      method: 'GET',
      url: `/api/v1/chat/conversations/${conversationId}/messages`,
      headers: setup.token,
    });
    expect(messages.json().data.map((m: { content: string }) => m.content)).toEqual([
      'What is the answer?',
      'The answer is 42.',
    ]);
  });

  it('sends heartbeat comments while the model is slow, with SSE headers and rate-limit headers', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    fake.reply = () => ({ tokens: ['slow', ' reply'], delayMs: 350 });
    const body = new FormData();
    body.set('agent_key', setup.agentKey);
    body.set('query', 'take your time');
    const res = await fetch(streamUrl(), {
      method: 'POST',
      headers: { ...setup.token, accept: 'text/event-stream' },
      body,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('ratelimit-limit')).toBe('30');
    const text = await res.text();
    expect(text).toContain(': heartbeat\n\n');
    expect(text).toMatch(/^retry: \d+\nid: [0-9a-f-]{36}:0:0\nevent: start\n/);
    const types = [...text.matchAll(/^event: (\w+)$/gm)].map((match) => match[1]);
    expect(types).toEqual(['start', 'agent_text_chunk', 'agent_text_chunk', 'end']);
  });

  it('turns a provider failure into an error event followed by end', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    fake.reply = () => ({ status: 503 });
    const events = await readChatStream(streamUrl(), setup.token, { agent_key: setup.agentKey, query: 'hello?' });
    expect(events.map((event) => event.type)).toEqual(['start', 'error', 'end']);
    expect(events[1]!.data).toMatchObject({ statusCode: 502, error: 'BadGateway' });
    expect(events[1]!.data.content).toMatch(/HTTP 503/);
  });

  it('aborts the upstream request when the client disconnects, and records the reply as aborted', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    fake.reply = () => ({ tokens: ['partial', ' never', ' sent'], hangAfter: 1 });
    const abortedBefore = fake.aborted;
    const controller = new AbortController();
    const body = new FormData();
    body.set('agent_key', setup.agentKey);
    body.set('query', 'tell me a long story');
    const res = await fetch(streamUrl(), { method: 'POST', headers: setup.token, body, signal: controller.signal });
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('event: agent_text_chunk')) seen += new TextDecoder().decode((await reader.read()).value);
    const conversationId = /"conversation_id":"([^"]+)"/.exec(seen)![1]!;
    controller.abort();
    await waitFor(() => fake.aborted > abortedBefore);
    await waitFor(async () => {
      const page = await t.app.inject({
        method: 'GET',
        url: `/api/v1/chat/conversations/${conversationId}/messages`,
        headers: setup.token,
      });
      return page.json().data.length === 2;
    });
    const page = await t.app.inject({
      method: 'GET',
      url: `/api/v1/chat/conversations/${conversationId}/messages`,
      headers: setup.token,
    });
    expect(page.json().data[1]).toMatchObject({
      role: 'assistant',
      content: 'partial',
      finish_reason: 'aborted',
      was_resolved: false,
    });
  });

  it('stops the model call when the client of a non-streaming chat goes away', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    fake.reply = () => ({ tokens: ['thinking', ' more'], hangAfter: 1 });
    const abortedBefore = fake.aborted;
    const requestsBefore = fake.requests.length;
    const controller = new AbortController();
    const pending = fetch(`${base}/api/v1/chat/agent/chat`, {
      method: 'POST',
      headers: { ...setup.token, 'content-type': 'application/json' },
      signal: controller.signal,
      body: JSON.stringify({ agent_key: setup.agentKey, query: 'long question' }),
    }).catch((error: Error) => error);
    await waitFor(() => fake.requests.length > requestsBefore);
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    await waitFor(() => fake.aborted > abortedBefore);
  });

  it('refuses before streaming: bad agent_key is a 400 JSON error, not a stream', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    const body = new FormData();
    body.set('agent_key', 'agent:nope');
    body.set('query', 'hi');
    const res = await fetch(streamUrl(), { method: 'POST', headers: setup.token, body });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'BadRequest', statusCode: 400 });
  });

  it('accepts only the audio field as a file', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    const body = new FormData();
    body.set('agent_key', setup.agentKey);
    body.set('query', 'hi');
    body.set('attachment', new Blob(['x']), 'x.txt');
    const res = await fetch(streamUrl(), { method: 'POST', headers: setup.token, body });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/only 'audio' may be a file/);
  });

  it('refuses a broken multipart body with 400 in the chat shape', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    const broken = await fetch(streamUrl(), {
      method: 'POST',
      headers: { ...setup.token, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="query"\r\n\r\nno closing boundary',
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({
      error: 'ValidationError',
      statusCode: 400,
      message: expect.stringMatching(/multipart form could not be read/),
    });
  });
});
