import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chatSetup, type ChatSetup } from './helpers/chat.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { postStream, readFrames, type Frame } from './helpers/sse-client.js';

let t: TestApp;
let fake: FakeOpenAi;
let base: string;
beforeAll(async () => {
  fake = await startFakeOpenAi();
  // A short `retry:` so that EventSource reconnects soon; turns are kept for the default window.
  t = await createTestApp({ LLM_PROVIDERS: fakeProviders(fake), CHAT_STREAM_RETRY_MS: '200' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

const llmAgent = { model: 'fake:gpt-test' };
const streamUrl = () => `${base}/api/v1/chat/agent/stream`;
const TOKENS = ['Once', ' upon', ' a', ' time', ' a', ' stream', ' came', ' back.'];
const form = (setup: ChatSetup, query = 'Tell me a story') => ({ agent_key: setup.agentKey, query });
const seqOf = (frame: Frame) => Number(frame.id!.split(':')[1]);
const text = (frames: Frame[]) =>
  frames
    .filter((f) => f.type === 'agent_text_chunk')
    .map((f) => f.data.content)
    .join('');

async function collect(response: Response): Promise<Frame[]> {
  expect(response.status).toBe(200);
  const frames: Frame[] = [];
  for await (const frame of readFrames(response)) frames.push(frame);
  return frames;
}

/** Starts a turn and drops the connection once `chunks` text chunks have arrived. */
async function startAndDrop(setup: ChatSetup, chunks: number): Promise<Frame[]> {
  const controller = new AbortController();
  const response = await postStream(streamUrl(), setup.token, form(setup), { signal: controller.signal });
  const frames: Frame[] = [];
  for await (const frame of readFrames(response)) {
    frames.push(frame);
    if (frames.filter((f) => f.type === 'agent_text_chunk').length === chunks) break;
  }
  controller.abort();
  return frames;
}

function resume(setup: Pick<ChatSetup, 'token' | 'agentKey'>, lastEventId: string) {
  return postStream(streamUrl(), setup.token, { agent_key: setup.agentKey, query: 'Tell me a story' }, { lastEventId });
}

async function messages(setup: ChatSetup, conversationId: string) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/chat/conversations/${conversationId}/messages`,
    headers: setup.token,
  });
  return res.json<{ data: { role: string; content: string; finish_reason: string | null }[] }>().data;
}

describe('POST /agent/stream with Last-Event-ID', () => {
  it('gives every event an id of its turn with a sequence rising by one, and a retry delay first', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    fake.reply = () => ({ tokens: ['Ids', ' on', ' every', ' event.'] });
    const frames = await collect(await postStream(streamUrl(), setup.token, form(setup)));
    expect(frames.map((f) => f.type)).toEqual(['start', ...Array(4).fill('agent_text_chunk'), 'end']);
    expect(frames[0]!.retry).toBe(200);
    const turnId = frames[0]!.id!.split(':')[0];
    expect(frames.every((f) => f.id!.startsWith(`${turnId}:`))).toBe(true);
    expect(frames.map(seqOf)).toEqual([0, 1, 2, 3, 4, 5]);
    // The turn's id is its stored answer's id.
    expect(frames.at(-1)!.data.message_id).toBe(turnId);
  });

  it('gives a client that reconnects mid-turn the rest of the same turn and end, with one provider call', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    fake.reply = () => ({ tokens: TOKENS, delayMs: 100 });
    const requests = fake.requests.length;
    const first = await startAndDrop(setup, 2);
    const rest = await collect(await resume(setup, first.at(-1)!.id!));
    expect(rest.at(-1)!.type).toBe('end');
    expect(rest.slice(0, -1).every((f) => f.type === 'agent_text_chunk')).toBe(true);
    expect(rest.map(seqOf)).toEqual(rest.map((_f, index) => seqOf(first.at(-1)!) + 1 + index));
    expect(text(first) + text(rest)).toBe(TOKENS.join(''));
    expect(fake.requests.length).toBe(requests + 1);
    const stored = await messages(setup, first[0]!.data.conversation_id);
    expect(stored.map((m) => [m.role, m.content, m.finish_reason])).toEqual([
      ['user', 'Tell me a story', null],
      ['assistant', TOKENS.join(''), 'stop'],
    ]);
  });

  it('answers a reconnect after the end with the missing events and end, then 204 for the id of end', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    fake.reply = () => ({ tokens: TOKENS, delayMs: 20 });
    const first = await startAndDrop(setup, 1);
    const conversationId = first[0]!.data.conversation_id;
    await expect.poll(async () => (await messages(setup, conversationId)).length, { timeout: 20_000 }).toBe(2);
    const rest = await collect(await resume(setup, first.at(-1)!.id!));
    expect(rest.map((f) => f.type)).toEqual([...Array(TOKENS.length - 1).fill('agent_text_chunk'), 'end']);
    expect(text(first) + text(rest)).toBe(TOKENS.join(''));
    const done = await resume(setup, rest.at(-1)!.id!);
    expect(done.status).toBe(204);
    expect(await messages(setup, conversationId)).toHaveLength(2);
  });

  it('replays a committed turn from its stored answer when the instance no longer keeps its events', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    fake.reply = () => ({ tokens: TOKENS, delayMs: 20 });
    const requests = fake.requests.length;
    const first = await startAndDrop(setup, 3);
    const conversationId = first[0]!.data.conversation_id;
    await expect.poll(async () => (await messages(setup, conversationId)).length, { timeout: 20_000 }).toBe(2);
    t.container.chat.streams.close(); // what another instance, or this one after a restart, knows
    const rest = await collect(await resume(setup, first.at(-1)!.id!));
    expect(rest.map((f) => f.type)).toEqual(['agent_text_chunk', 'end']);
    expect(text(first) + text(rest)).toBe(TOKENS.join(''));
    expect(rest.map(seqOf)).toEqual([seqOf(first.at(-1)!) + 1, seqOf(first.at(-1)!) + 2]);
    expect(rest[1]!.data).toMatchObject({ conversation_id: conversationId, was_resolved: true });
    expect((await resume(setup, rest.at(-1)!.id!)).status).toBe(204);
    expect(fake.requests.length).toBe(requests + 1);
    expect(await messages(setup, conversationId)).toHaveLength(2);
  });

  it("refuses another company's event id with 404, live or stored, and starts no turn", async () => {
    const owner = await chatSetup(t.app, t.container, llmAgent);
    const other = await chatSetup(t.app, t.container, llmAgent);
    fake.reply = () => ({ tokens: TOKENS, delayMs: 50 });
    const requests = fake.requests.length;
    const controller = new AbortController();
    const response = await postStream(streamUrl(), owner.token, form(owner), { signal: controller.signal });
    const frames = readFrames(response);
    const start = (await frames.next()).value as Frame;
    const live = await resume(other, start.id!);
    expect(live.status).toBe(404);
    expect(await live.json()).toMatchObject({ error: 'NotFound', statusCode: 404 });
    const rest: Frame[] = [];
    for await (const frame of frames) rest.push(frame);
    expect(rest.at(-1)!.type).toBe('end');
    t.container.chat.streams.close();
    expect((await resume(other, start.id!)).status).toBe(404);
    expect(fake.requests.length).toBe(requests + 1);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations', headers: other.token });
    expect(list.json().total).toBe(0);
  });

  it('refuses a Last-Event-ID that is not one of its event ids with 400, before any provider call', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    const requests = fake.requests.length;
    const res = await resume(setup, 'not-an-event-id');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'ValidationError', statusCode: 400 });
    expect(fake.requests.length).toBe(requests);
  });

  it('lets a standard EventSource reconnect after end without starting a second turn', async () => {
    const setup = await chatSetup(t.app, t.container, llmAgent);
    fake.reply = () => ({ tokens: ['Only', ' once.'] });
    const requests = fake.requests.length;
    const seen: { type: string; id: string }[] = [];
    // Never closed on `end`: it reconnects with Last-Event-ID, as browsers do, until told to stop.
    const source = new EventSource(streamUrl(), {
      fetch: (input, init) => {
        const body = new FormData();
        body.set('agent_key', setup.agentKey);
        body.set('query', 'Say it once');
        const headers = { ...(init?.headers as Record<string, string>), ...setup.token };
        return fetch(input, { ...init, method: 'POST', body, headers });
      },
    });
    const stopped = new Promise<number | undefined>((resolve) => {
      source.onerror = (error) => {
        if (source.readyState === source.CLOSED) resolve(error.code);
      };
    });
    for (const type of ['start', 'agent_text_chunk', 'chunk', 'end', 'error']) {
      // EventSource dispatches its own connection errors as `error` too: only messages count.
      source.addEventListener(type, (message) => {
        if (message instanceof MessageEvent) seen.push({ type, id: message.lastEventId });
      });
    }
    expect(await stopped).toBe(204);
    expect(seen.map((e) => e.type)).toEqual(['start', 'agent_text_chunk', 'agent_text_chunk', 'end']);
    expect(new Set(seen.map((e) => e.id)).size).toBe(4);
    expect(fake.requests.length).toBe(requests + 1);
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/chat/conversations', headers: setup.token });
    expect(list.json().total).toBe(1);
    expect(list.json().data[0].message_count).toBe(2);
  });
});
