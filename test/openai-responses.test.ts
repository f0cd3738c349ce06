/**
 * `/v1` beyond chat completions, driven by clients nobody on this project wrote, unmodified but
 * for the base URL and the key: the official `openai` package's `responses.create` (whole,
 * streamed, continued with `previous_response_id`), `models.retrieve` and `embeddings.create`
 * (through the knowledge base's embedder, an OpenAI-compatible peer), and `@ai-sdk/openai`'s
 * default model, which calls the Responses API.
 */
import { createOpenAI } from '@ai-sdk/openai';
import OpenAI, { BadRequestError, NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chatSetup, type ChatSetup } from './helpers/chat.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { conceptVector, startEmbeddingsPeer, type EmbeddingsPeer } from './knowledge/embeddings-peer.js';
import { uploadArticle, waitForTask } from './knowledge/helpers.js';

let t: TestApp;
let bare: TestApp;
let base: string;
let bareBase: string;
let fake: FakeOpenAi;
let peer: EmbeddingsPeer;
let kb: ChatSetup;
let llm: ChatSetup;

const client = (apiKey: string, url = base) => new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0 });
const tokenOf = (setup: ChatSetup) => setup.token['x-api-token'];

beforeAll(async () => {
  [fake, peer] = await Promise.all([startFakeOpenAi(), startEmbeddingsPeer()]);
  t = await createTestApp({
    LLM_PROVIDERS: fakeProviders(fake),
    EMBEDDINGS_URL: peer.url,
    EMBEDDINGS_API_KEY: 'sk-test-embeddings',
    EMBEDDINGS_MODEL: 'concepts-64',
    ALLOW_PRIVATE_URLS: 'true',
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  kb = await chatSetup(t.app, t.container);
  const upload = await uploadArticle(t.app, kb.tenant.headers, {
    document_title: 'Returns and refunds',
    content: 'Q: How long do refunds take?\nA: Refunds are paid to the original card within 5 business days.',
  });
  expect((await waitForTask(t, kb.tenant.headers, upload.task_id)).status).toBe('completed');
  llm = await chatSetup(t.app, t.container, { model: 'fake:gpt-test', instructions: 'Be brief.' });
  bare = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
  bareBase = await bare.app.listen({ port: 0, host: '127.0.0.1' });
}, 90_000);
afterAll(async () => {
  await Promise.all([t?.close(), bare?.close()]);
  await Promise.all([fake?.close(), peer?.close()]);
});

async function messagesOf(setup: ChatSetup, conversationId: string) {
  const response = await t.app.inject({
    method: 'GET',
    url: `/api/v1/chat/conversations/${conversationId}/messages`,
    headers: setup.token,
  });
  expect(response.statusCode).toBe(200);
  return response.json().data as { id: string; role: string; content: string }[];
}

describe('POST /v1/responses with the openai package', () => {
  it('answers text input from the knowledge base and records the turn', async () => {
    const response = await client(tokenOf(kb)).responses.create({
      model: kb.agentKey,
      input: 'How long do refunds take?',
      instructions: 'Answer kindly.',
    });
    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.id).toMatch(/^resp_[0-9a-f-]{36}$/);
    expect(response.output_text).toContain('5 business days');
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
    const extension = (response as unknown as { switchboard: { conversation_id: string; citations: unknown[] } })
      .switchboard;
    expect(extension.citations.length).toBeGreaterThan(0);
    const stored = await messagesOf(kb, extension.conversation_id);
    expect(stored.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(`resp_${stored[1]!.id}`).toBe(response.id);
  });

  it('streams the Responses event types in order, then continues the conversation with previous_response_id', async () => {
    const openai = client(tokenOf(llm));
    fake.reply = () => ({ tokens: ['Hel', 'lo', ' there'] });
    const stream = await openai.responses.create({
      model: llm.agentKey,
      input: [
        { role: 'system', content: 'ignored' },
        { role: 'user', content: [{ type: 'input_text', text: 'Say hello' }] },
      ],
      stream: true,
    });
    const types: string[] = [];
    let deltas = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(deltas).toBe('Hello there');
    expect(completed?.output_text ?? completed?.output[0]).toBeTruthy();

    fake.reply = () => ({ tokens: ['Again'] });
    const next = await openai.responses.create({
      model: llm.agentKey,
      input: 'And once more?',
      previous_response_id: completed!.id,
    });
    expect(next.output_text).toBe('Again');
    expect(next.previous_response_id).toBe(completed!.id);
    const sent = fake.requests.at(-1)!;
    const texts = JSON.stringify(sent.messages);
    expect(texts).toContain('Say hello');
    expect(texts).toContain('Hello there');
    expect(texts).not.toContain('ignored');
  });

  it('refuses what it cannot do with the field named, and unknown or foreign response ids with 404', async () => {
    const openai = client(tokenOf(kb));
    const refused = (body: Record<string, unknown>) =>
      openai.responses.create({ model: kb.agentKey, ...body } as never).then(
        () => null,
        (error: unknown) => error,
      );
    const unknownField = await refused({ input: 'Hi', frobnicate: 1 });
    expect(unknownField).toBeInstanceOf(BadRequestError);
    const toolItem = (await refused({
      input: [{ type: 'function_call_output', call_id: 'x', output: '1' }],
    })) as BadRequestError;
    expect(toolItem.param).toBe('input[0].type');
    const image = (await refused({
      input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }],
    })) as BadRequestError;
    expect(image.param).toBe('input[0].content[0].type');
    const noUser = (await refused({ input: [{ role: 'assistant', content: 'Hi' }] })) as BadRequestError;
    expect(noUser.status).toBe(400);
    const malformed = (await refused({ input: 'Hi', previous_response_id: 'resp_nope' })) as BadRequestError;
    expect(malformed.param).toBe('previous_response_id');
    const unknown = await refused({ input: 'Hi', previous_response_id: `resp_${crypto.randomUUID()}` });
    expect(unknown).toBeInstanceOf(NotFoundError);
    // A response of another company is unknown here.
    const theirs = await client(tokenOf(llm)).responses.create({ model: llm.agentKey, input: 'Hello' });
    expect(await refused({ input: 'Hi', previous_response_id: theirs.id })).toBeInstanceOf(NotFoundError);
    expect(await refused({ model: 'agent:nope', input: 'Hi' })).toBeInstanceOf(NotFoundError);
  });
});

describe('GET /v1/models/{id} and POST /v1/embeddings with the openai package', () => {
  it('retrieves an agent model and the embedding model, and 404s any other', async () => {
    const openai = client(tokenOf(kb));
    expect(await openai.models.retrieve(kb.agentKey)).toMatchObject({ id: kb.agentKey, object: 'model' });
    const listed = (await openai.models.list()).data.map((model) => model.id);
    expect(listed).toContain('openai:concepts-64');
    expect(await openai.models.retrieve('openai:concepts-64')).toMatchObject({ owned_by: 'openai' });
    await expect(openai.models.retrieve(llm.agentKey)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('embeds through the configured embedder (base64 by default in the SDK, floats on request)', async () => {
    const openai = client(tokenOf(kb));
    const texts = ['car repair price', 'automobile servicing fee'];
    const embedded = await openai.embeddings.create({ model: 'openai:concepts-64', input: texts });
    expect(embedded.data).toHaveLength(2);
    expect(embedded.model).toBe('openai:concepts-64');
    const norm = (vector: number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
    const expected = conceptVector(texts[0]!).map((value, _, all) => value / norm(all));
    embedded.data[0]!.embedding.forEach((value, index) => expect(value).toBeCloseTo(expected[index]!, 5));
    const floats = await openai.embeddings.create({ model: 'concepts-64', input: 'car', encoding_format: 'float' });
    expect(floats.data[0]!.embedding).toHaveLength(64);
    expect(peer.requests.at(-1)).toMatchObject({ model: 'concepts-64', authorization: 'Bearer sk-test-embeddings' });
    await expect(openai.embeddings.create({ model: 'text-embedding-3-small', input: 'x' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(openai.embeddings.create({ model: 'concepts-64', input: 'x', dimensions: 12 })).rejects.toBeInstanceOf(
      BadRequestError,
    );
  });

  it("answers 503 in OpenAI's shape, naming what to configure, where no embedder is configured", async () => {
    const setup = await chatSetup(bare.app, bare.container);
    const response = await fetch(`${bareBase}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenOf(setup)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'anything', input: 'hello' }),
    });
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: 'server_error', code: 'embeddings_unavailable' });
    expect(body.error.message).toContain('EMBEDDINGS_PROVIDER');
  });
});

describe("@ai-sdk/openai's default model (the Responses API)", () => {
  it('generates and streams through /v1/responses', async () => {
    const provider = createOpenAI({ baseURL: `${base}/v1`, apiKey: tokenOf(kb) });
    const model = provider(kb.agentKey);
    const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'How long do refunds take?' }] }];
    const generated = await model.doGenerate({ prompt });
    const text = generated.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
    expect(text).toContain('5 business days');
    const streamed = await model.doStream({ prompt });
    let deltas = '';
    let finished = false;
    for await (const part of streamed.stream as unknown as AsyncIterable<{ type: string; delta?: string }>) {
      if (part.type === 'text-delta') deltas += part.delta;
      if (part.type === 'finish') finished = true;
      expect(part.type).not.toBe('error');
    }
    expect(deltas).toContain('5 business days');
    expect(finished).toBe(true);
  });
});
