/**
 * The OpenAI-compatible endpoint (`/v1`) driven by the official `openai` package, unmodified, with
 * only `baseURL` and `apiKey` set: models, whole and streamed replies from a `builtin:kb` agent and
 * from an agent on the fake OpenAI provider, the turn recorded by the chat family and the support
 * queries, and the errors the SDK raises by status.
 */
import OpenAI, { AuthenticationError, NotFoundError, RateLimitError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chatSetup, type ChatSetup } from './helpers/chat.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { startFakeSlack, type FakeSlack } from './helpers/fake-slack.js';
import { integrationsApi } from './helpers/integrations.js';
import { uploadArticle, waitForTask } from './knowledge/helpers.js';

let t: TestApp;
let base: string;
let fake: FakeOpenAi;
let slack: FakeSlack;
let kb: ChatSetup;
let llm: ChatSetup;

const client = (apiKey: string, options: { maxRetries?: number } = {}) =>
  new OpenAI({ baseURL: `${base}/v1`, apiKey, ...options });
const tokenOf = (setup: ChatSetup) => setup.token['x-api-token'];

beforeAll(async () => {
  [fake, slack] = await Promise.all([startFakeOpenAi(), startFakeSlack()]);
  t = await createTestApp({
    LLM_PROVIDERS: fakeProviders(fake),
    EMBEDDINGS_PROVIDER: 'none',
    ALLOW_PRIVATE_URLS: 'true',
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  kb = await chatSetup(t.app, t.container);
  const upload = await uploadArticle(t.app, kb.tenant.headers, {
    document_title: 'Returns and refunds',
    content: 'Q: How long do refunds take?\nA: Refunds are paid to the original card within 5 business days.',
  });
  expect((await waitForTask(t, kb.tenant.headers, upload.task_id)).status).toBe('completed');
  llm = await chatSetup(t.app, t.container, { model: 'fake:gpt-test', instructions: 'Be brief.', temperature: 0.3 });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await Promise.all([fake?.close(), slack?.close()]);
});

async function storedTurn(setup: ChatSetup, conversationId: string) {
  const conversation = await t.app.inject({
    method: 'GET',
    url: `/api/v1/chat/conversations/${conversationId}`,
    headers: setup.token,
  });
  expect(conversation.statusCode).toBe(200);
  const messages = await t.app.inject({
    method: 'GET',
    url: `/api/v1/chat/conversations/${conversationId}/messages`,
    headers: setup.token,
  });
  const query = await t.app.inject({
    method: 'GET',
    url: `/customer-support/${conversation.json().support_query_id}`,
    headers: setup.tenant.headers,
  });
  expect(query.statusCode).toBe(200);
  return { conversation: conversation.json(), messages: messages.json().data, query: query.json() };
}

describe('GET /v1/models', () => {
  it("lists the token's deployed agents as OpenAI models, and a bound token's agent id", async () => {
    const page = await client(tokenOf(kb)).models.list();
    expect(page.data.map((model) => model.id)).toEqual([kb.agentKey]);
    expect(page.data[0]).toMatchObject({ object: 'model', owned_by: kb.tenant.companyId });
    const bound = (await kb.tenant.chatToken(kb.agentId)).token;
    const ids = (await client(bound).models.list()).data.map((model) => model.id);
    expect(ids).toEqual([kb.agentId, kb.agentKey]);
  });
});

describe('POST /v1/chat/completions', () => {
  it('answers a whole reply from a builtin:kb agent, recorded as a conversation and a support query', async () => {
    const completion = await client(tokenOf(kb)).chat.completions.create({
      model: kb.agentKey,
      messages: [{ role: 'user', content: 'How long does a refund take?' }],
      user: 'customer-7',
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.model).toBe(kb.agentKey);
    expect(completion.choices[0]!.message.role).toBe('assistant');
    expect(completion.choices[0]!.message.content).toContain('within 5 business days');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    const usage = completion.usage!;
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    const extension = (completion as unknown as { switchboard: Record<string, unknown> }).switchboard;
    expect(extension.citations).toEqual([expect.objectContaining({ title: 'Returns and refunds' })]);
    const stored = await storedTurn(kb, extension.conversation_id as string);
    expect(stored.conversation.user).toBe('customer-7');
    expect(stored.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant']);
    expect(completion.id).toBe(`chatcmpl-${stored.messages[1].id}`);
    expect(stored.query).toMatchObject({ agent_id: kb.agentId, conversation_id: extension.conversation_id });
  });

  it('streams a builtin:kb reply as chat.completion.chunk events with usage', async () => {
    const stream = await client(tokenOf(kb)).chat.completions.create({
      model: kb.agentKey,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'How long does a refund take?' }] }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toContain('within 5 business days');
    const finish = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finish.map((chunk) => chunk.choices[0]!.finish_reason)).toEqual(['stop']);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.total_tokens).toBeGreaterThan(0);
    const citations = chunks.find(
      (chunk) => (chunk as unknown as { switchboard?: { citations?: unknown } }).switchboard?.citations,
    );
    expect(citations).toBeDefined();
  });

  it('answers and streams from a model agent, passing history, temperature and max_tokens on', async () => {
    fake.reply = () => ({ tokens: ['Hello', ' Sam', '.'] });
    const openai = client(tokenOf(llm));
    const messages = [
      { role: 'system' as const, content: 'You are a pirate.' },
      { role: 'user' as const, content: 'Hi, I am Sam.' },
      { role: 'assistant' as const, content: 'Hello.' },
      { role: 'user' as const, content: 'What is my name?' },
    ];
    const before = fake.requests.length;
    const whole = await openai.chat.completions.create({
      model: llm.agentKey,
      messages,
      temperature: 0.9,
      max_tokens: 50,
    });
    expect(whole.choices[0]!.message.content).toBe('Hello Sam.');
    // The provider's count (the fake reports 10 prompt tokens).
    expect(whole.usage).toEqual({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
    const sent = fake.requests[before]! as unknown as Record<string, unknown> & (typeof fake.requests)[number];
    expect(sent.temperature).toBe(0.9);
    expect(sent.max_tokens).toBe(50);
    expect(sent.messages[0]!.content).toContain('Be brief.');
    expect(sent.messages[0]!.content).not.toContain('pirate');
    expect(sent.messages.slice(1)).toEqual(messages.slice(1));

    const stream = await openai.chat.completions.create({ model: llm.agentKey, messages, stream: true });
    let text = '';
    let conversationId = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      conversationId ||=
        (chunk as unknown as { switchboard?: { conversation_id?: string } }).switchboard?.conversation_id ?? '';
    }
    expect(text).toBe('Hello Sam.');
    expect(fake.requests.at(-1)!.temperature).toBe(0.3);
    const stored = await storedTurn(llm, conversationId);
    expect(stored.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Hello Sam.', model: 'fake:gpt-test' });
  });

  it('continues a stored conversation named in metadata.conversation_id', async () => {
    fake.reply = (request) => ({ tokens: [`turn ${request.messages.length}`] });
    const openai = client(tokenOf(llm));
    const first = await openai.chat.completions.create({
      model: llm.agentKey,
      messages: [{ role: 'user', content: 'First question' }],
    });
    const conversationId = (first as unknown as { switchboard: { conversation_id: string } }).switchboard
      .conversation_id;
    const second = await openai.chat.completions.create({
      model: llm.agentKey,
      messages: [{ role: 'user', content: 'Second question' }],
      metadata: { conversation_id: conversationId },
    });
    expect((second as unknown as { switchboard: { conversation_id: string } }).switchboard.conversation_id).toBe(
      conversationId,
    );
    // system + the stored two messages + the new question
    expect(second.choices[0]!.message.content).toBe('turn 4');
    const stored = await storedTurn(llm, conversationId);
    expect(stored.messages).toHaveLength(4);
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { authorization: `Bearer ${tokenOf(llm)}` },
      payload: {
        model: llm.agentKey,
        messages: [{ role: 'user', content: 'x' }],
        metadata: { conversation_id: 'not-a-uuid' },
      },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.param).toBe('metadata.conversation_id');
  });

  it("carries the agent's tool activity in the switchboard field, whole and streamed", async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    const made = await integrationsApi(t.app, setup.tenant).create({
      name: 'Team Slack',
      type: 'slack',
      agent_id: setup.agentId,
      config: { bot_token: slack.token, channel: 'C0SUPPORT', base_url: `${slack.url}/api` },
    });
    expect(made.statusCode, made.body).toBe(201);
    fake.reply = (request) =>
      request.messages.some((message) => message.role === 'tool')
        ? { tokens: ['I told the team.'] }
        : { tokens: [], toolCalls: [{ name: 'slack_post_message', arguments: { text: 'A customer needs help' } }] };
    const openai = client(tokenOf(setup));
    const request = { model: setup.agentKey, messages: [{ role: 'user' as const, content: 'Tell the team' }] };
    const whole = await openai.chat.completions.create(request);
    expect(whole.choices[0]!.message.content).toBe('I told the team.');
    const extension = (whole as unknown as { switchboard: { tools: { tool: string; status: string }[] } }).switchboard;
    expect(extension.tools).toEqual([expect.objectContaining({ tool: 'slack_post_message', status: 'ok' })]);
    const chunks = [];
    for await (const chunk of await openai.chat.completions.create({ ...request, stream: true })) chunks.push(chunk);
    const tool = chunks.find((chunk) => (chunk as unknown as { switchboard?: { tool?: unknown } }).switchboard?.tool);
    expect(tool?.choices[0]!.delta).toEqual({});
    expect((tool as unknown as { switchboard: { tool: { tool: string } } }).switchboard.tool.tool).toBe(
      'slack_post_message',
    );
    expect(slack.posted.at(-1)).toEqual({ channel: 'C0SUPPORT', text: 'A customer needs help' });
  });

  it('ends a stream whose provider fails midway with an error event the SDK raises', async () => {
    fake.reply = () => ({ tokens: ['Partial', ' answer'], errorAfter: 1 });
    const stream = await client(tokenOf(llm)).chat.completions.create({
      model: llm.agentKey,
      messages: [{ role: 'user', content: 'Tell me everything' }],
      stream: true,
    });
    let text = '';
    const failure = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(text).toBe('Partial');
  });

  it('lets a bound token name its agent by id', async () => {
    fake.reply = () => ({ tokens: ['ok'] });
    const bound = (await llm.tenant.chatToken(llm.agentId)).token;
    const completion = await client(bound).chat.completions.create({
      model: llm.agentId,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(completion.choices[0]!.message.content).toBe('ok');
    expect(completion.model).toBe(llm.agentId);
  });
});

describe('errors in OpenAI’s shape', () => {
  it('raises AuthenticationError for a bad key and NotFoundError for an unknown or foreign model', async () => {
    const call = (key: string, model: string) =>
      client(key).chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });
    const bad = await call('ct_not-a-token', kb.agentKey).catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(AuthenticationError);
    expect((bad as AuthenticationError).code).toBe('invalid_api_key');
    expect((bad as AuthenticationError).type).toBe('invalid_request_error');
    for (const model of ['gpt-4o', llm.agentKey, `agent:${kb.agentId}:web:eu-west`, kb.agentId]) {
      const missing = await call(tokenOf(kb), model).catch((error: unknown) => error);
      expect(missing, model).toBeInstanceOf(NotFoundError);
      expect((missing as NotFoundError).code).toBe('model_not_found');
    }
    // A bound token may not use another agent of its company.
    const bound = (await kb.tenant.chatToken(kb.agentId)).token;
    const other = await chatSetup(t.app, t.container);
    const foreign = await call(bound, other.agentKey).catch((error: unknown) => error);
    expect(foreign).toBeInstanceOf(NotFoundError);
    const models = await client('ct_not-a-token')
      .models.list()
      .catch((error: unknown) => error);
    expect(models).toBeInstanceOf(AuthenticationError);
  });

  it.each([
    ['no user message', { messages: [{ role: 'system', content: 'x' }] }, 'messages'],
    ['a wrong type', { messages: [{ role: 'user', content: 42 }] }, 'messages.0.content'],
    ['an unknown role', { messages: [{ role: 'tool', content: 'x' }] }, 'messages.0.role'],
    [
      'an image part',
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] },
      'messages[0].content[0].type',
    ],
    ['an unknown field', { messages: [{ role: 'user', content: 'x' }], foo: 1 }, 'foo'],
    ['a wrong temperature', { messages: [{ role: 'user', content: 'x' }], temperature: 3 }, 'temperature'],
    ['client tools', { messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function' }] }, 'tools'],
  ])('refuses %s with 400 naming the param', async (_name, body, param) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { authorization: `Bearer ${tokenOf(kb)}` },
      payload: { model: kb.agentKey, ...body },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: { message: expect.any(String), type: 'invalid_request_error', param, code: null },
    });
  });

  it('accepts the OpenAI request fields it does not use (n, top_p, presence_penalty …)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { 'x-api-token': tokenOf(kb) },
      payload: {
        model: kb.agentKey,
        messages: [{ role: 'user', content: 'How long does a refund take?' }],
        n: 1,
        top_p: 1,
        presence_penalty: 0,
        frequency_penalty: 0,
        stop: null,
        seed: 1,
        logprobs: false,
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().object).toBe('chat.completion');
  });

  it('answers unknown routes under /v1 in the OpenAI shape', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/embeddings', headers: { 'x-api-token': tokenOf(kb) } });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ type: 'invalid_request_error', code: null });
  });
});

describe('rate limits', () => {
  let limited: TestApp;
  let limitedBase: string;
  beforeAll(async () => {
    limited = await createTestApp({ RATE_LIMIT_CHAT_PER_MINUTE: '2', EMBEDDINGS_PROVIDER: 'none' });
    limitedBase = await limited.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => limited?.close());

  it('raises RateLimitError with retry-after once the per-token limit is spent', async () => {
    const setup = await chatSetup(limited.app, limited.container);
    const openai = new OpenAI({ baseURL: `${limitedBase}/v1`, apiKey: tokenOf(setup), maxRetries: 0 });
    const ask = () =>
      openai.chat.completions.create({ model: setup.agentKey, messages: [{ role: 'user', content: 'Hi' }] });
    await ask();
    await ask();
    const error = await ask().catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).code).toBe('rate_limit_exceeded');
    expect(Number((error as RateLimitError).headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
