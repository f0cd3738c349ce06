/**
 * Chat through a workflow's key: two built-in responders with different collections (billing,
 * technical), a workflow routing billing questions to one and technical ones to the other, and
 * its live deployment. Routing by rules in English and Arabic, stickiness, the hand-off event of
 * the stream, what the messages, support queries and notifications record; a model router (the
 * fake OpenAI peer) picking the step by name, and the rules deciding when it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertDeployment } from '../src/modules/deployments/deployments.repo.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { US_EAST } from './helpers/chat.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { fakeProviders, startFakeOpenAi, type ChatCompletionRequest, type FakeOpenAi } from './helpers/fake-openai.js';
import { readChatStream } from './helpers/sse-client.js';
import { uploadArticle, waitForTask } from './knowledge/helpers.js';

let t: TestApp;
let fake: FakeOpenAi;
let base: string;
let tenant: TestTenant;
let token: Record<string, string>;
let billing: string;
let tech: string;

/** What the router peer answers: the step its test asks for, or a failure. */
let routerReply: (request: ChatCompletionRequest) => { tokens?: string[]; status?: number; hangAfter?: number };
const routerCalls = () => fake.requests.filter((request) => request.messages[0]?.content.startsWith('You route'));

beforeAll(async () => {
  fake = await startFakeOpenAi((request) =>
    request.messages[0]?.content.startsWith('You route') ? routerReply(request) : { tokens: ['unused'] },
  );
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none', LLM_PROVIDERS: fakeProviders(fake) });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  tenant = await createTenant(t.container);
  token = (await tenant.chatToken()).headers;
  const collection = async (name: string, articles: { document_title: string; content: string }[]) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/public/collections',
      headers: tenant.headers,
      payload: { name, company_id: tenant.companyId },
    });
    const id = res.json().id as string;
    for (const article of articles) {
      const upload = await uploadArticle(t.app, tenant.headers, { ...article, collection_id: id });
      expect((await waitForTask(t, tenant.headers, upload.task_id)).status).toBe('completed');
    }
    return id;
  };
  const billingDocs = await collection('Billing', [
    {
      document_title: 'Invoices',
      content:
        'Q: When is the invoice sent?\nA: Invoices are emailed on the first day of every month and can be downloaded from the Billing page.',
    },
    {
      document_title: 'الفواتير',
      content: 'س: متى تصل الفاتورة؟\nج: تُرسل الفاتورة بالبريد الإلكتروني في أول يوم من كل شهر.',
    },
  ]);
  const techDocs = await collection('Technical', [
    {
      document_title: 'Installing the SDK',
      content:
        'Q: How do I install the SDK?\nA: Install the SDK with npm install switchboard-sdk and set the API key in the SWITCHBOARD_KEY variable.',
    },
    {
      document_title: 'تثبيت التطبيق',
      content: 'س: كيف يتم تثبيت التطبيق؟\nج: لتثبيت التطبيق حمّل الحزمة من صفحة التنزيلات ثم شغّل برنامج التثبيت.',
    },
  ]);
  const agent = async (title: string, collectionId: string) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: tenant.headers,
      payload: { title, collection_ids: [collectionId], languages: ['en', 'ar'] },
    });
    return res.json().id as string;
  };
  billing = await agent('Billing desk', billingDocs);
  tech = await agent('Tech desk', techDocs);
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
});

/** A workflow of the two agents with `router`, live on web/us-east: its agent key. */
async function deployedWorkflow(router = 'rules', channel = 'web') {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/public/workflows',
    headers: tenant.headers,
    payload: {
      name: 'Front desk',
      router,
      steps: [
        { name: 'billing', agent_id: billing, when: { query_types: ['billing'], keywords: ['فاتورة', 'الفواتير'] } },
        { name: 'technical', agent_id: tech, when: { query_types: ['technical_support'], keywords: ['تثبيت'] } },
      ],
      default_agent_id: tech,
    },
  });
  expect(res.statusCode).toBe(201);
  const workflowId = res.json().id as string;
  await insertDeployment(t.container.db, {
    company_id: tenant.companyId,
    deployable_type: 'workflow',
    deployable_id: workflowId,
    agent_id: tech,
    channel,
    region_id: US_EAST,
    status: 'active',
  });
  return { workflowId, agentKey: `agent:${workflowId}:${channel}:us-east` };
}

async function ask(agentKey: string, query: string, conversationId?: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/chat/agent/chat',
    headers: token,
    payload: { agent_key: agentKey, query, ...(conversationId ? { conversation_id: conversationId } : {}) },
  });
  expect(res.statusCode).toBe(200);
  return res.json<{ conversation_id: string; agent_response_text: string; was_resolved: boolean }>();
}

/** The agent of each answer of the conversation, oldest first. */
async function answeredBy(conversationId: string) {
  const rows = await t.container.db
    .selectFrom('conversation_messages')
    .select('agent_id')
    .where('conversation_id', '=', conversationId)
    .where('role', '=', 'assistant')
    .orderBy('seq')
    .execute();
  return rows.map((row) => row.agent_id);
}

async function queriesOf(conversationId: string) {
  return t.container.db
    .selectFrom('support_queries')
    .select(['agent_id', 'status'])
    .where('conversation_id', '=', conversationId)
    .orderBy('created_at')
    .execute();
}

async function handoffNotifications(workflowId: string) {
  const rows = await t.container.db
    .selectFrom('notifications')
    .select(['notification_type', 'title', 'metadata'])
    .where('company_id', '=', tenant.companyId)
    .where('notification_type', '=', 'agent_action')
    .execute();
  return rows.filter((row) => row.metadata.workflow_id === workflowId);
}

describe('routing by rules', () => {
  it('answers an English billing question with the billing agent and a technical one with the tech agent, handing off', async () => {
    const { workflowId, agentKey } = await deployedWorkflow();
    const first = await ask(agentKey, 'When is the invoice sent?');
    expect(first.agent_response_text).toContain('Invoices are emailed on the first day of every month');
    const second = await ask(agentKey, 'How do I install the SDK?', first.conversation_id);
    expect(second.conversation_id).toBe(first.conversation_id);
    expect(second.agent_response_text).toContain('npm install switchboard-sdk');
    expect(await answeredBy(first.conversation_id)).toEqual([billing, tech]);
    const messages = await t.app.inject({
      method: 'GET',
      url: `/api/v1/chat/conversations/${first.conversation_id}/messages`,
      headers: token,
    });
    expect(messages.json().data.map((m: { role: string; agent_id: string | null }) => [m.role, m.agent_id])).toEqual([
      ['user', null],
      ['assistant', billing],
      ['user', null],
      ['assistant', tech],
    ]);
    // The conversation's support query is the agent's that answered last (its outcome is theirs).
    expect((await queriesOf(first.conversation_id)).map((query) => query.agent_id)).toEqual([tech]);
    const conversation = await t.container.db
      .selectFrom('conversations')
      .select(['agent_id', 'workflow_id'])
      .where('id', '=', first.conversation_id)
      .executeTakeFirstOrThrow();
    expect(conversation).toEqual({ agent_id: tech, workflow_id: workflowId });
    const read = await t.app.inject({
      method: 'GET',
      url: `/api/v1/chat/conversations/${first.conversation_id}`,
      headers: token,
    });
    expect(read.json()).toMatchObject({ agent_id: tech, workflow_id: workflowId });
    const notes = await handoffNotifications(workflowId);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({
      notification_type: 'agent_action',
      title: 'Billing desk handed a conversation to Tech desk',
      metadata: { agent_id: tech, previous_agent_id: billing, action_type: 'handoff', step: 'technical' },
    });
  });

  it('routes Arabic questions by their keywords', async () => {
    const { agentKey } = await deployedWorkflow();
    const first = await ask(agentKey, 'متى تصل الفاتورة؟');
    expect(first.agent_response_text).toContain('تُرسل الفاتورة بالبريد الإلكتروني');
    const second = await ask(agentKey, 'كيف يتم تثبيت التطبيق؟', first.conversation_id);
    expect(second.agent_response_text).toContain('لتثبيت التطبيق');
    expect(await answeredBy(first.conversation_id)).toEqual([billing, tech]);
  });

  it('keeps the conversation with its agent when no other step clearly applies; the default agent starts one no step fits', async () => {
    const { workflowId, agentKey } = await deployedWorkflow();
    const first = await ask(agentKey, 'Where can I download my invoice?');
    await ask(agentKey, 'Thanks. And on which day does it arrive?', first.conversation_id);
    expect(await answeredBy(first.conversation_id)).toEqual([billing, billing]);
    expect(await handoffNotifications(workflowId)).toHaveLength(0);
    const other = await ask(agentKey, 'Hello there');
    expect(await answeredBy(other.conversation_id)).toEqual([tech]);
  });

  it('streams a hand-off chunk before the new agent answers', async () => {
    const { agentKey } = await deployedWorkflow();
    const first = await readChatStream(`${base}/api/v1/chat/agent/stream`, token, {
      agent_key: agentKey,
      query: 'I need a copy of my invoice',
    });
    const conversationId = first.find((event) => event.type === 'start')!.data.conversation_id as string;
    expect(first.some((event) => event.type === 'chunk' && String(event.data.content).includes('handoff'))).toBe(false);
    const events = await readChatStream(`${base}/api/v1/chat/agent/stream`, token, {
      agent_key: agentKey,
      query: 'How do I install the SDK?',
      conversation_id: conversationId,
    });
    const types = events.map((event) => event.type);
    const at = events.findIndex((event) => event.type === 'chunk' && String(event.data.content).includes('handoff'));
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(types.indexOf('agent_text_chunk'));
    expect(JSON.parse(events[at]!.data.content as string)).toEqual({
      handoff: {
        from: billing,
        to: tech,
        reason: expect.stringContaining('query type technical_support'),
        step: 'technical',
      },
    });
    const text = events
      .filter((event) => event.type === 'agent_text_chunk')
      .map((event) => event.data.content)
      .join('');
    expect(text).toContain('npm install switchboard-sdk');
  });

  it('serves a change to the workflow at once (the cached workflow is dropped)', async () => {
    const { workflowId, agentKey } = await deployedWorkflow('rules', 'changes');
    expect(await answeredBy((await ask(agentKey, 'When is the invoice sent?')).conversation_id)).toEqual([billing]);
    const changed = await t.app.inject({
      method: 'PATCH',
      url: `/api/public/workflows/${workflowId}`,
      headers: tenant.headers,
      payload: { steps: [{ name: 'everything', agent_id: tech, when: { query_types: ['billing'] } }] },
    });
    expect(changed.statusCode).toBe(200);
    expect(await answeredBy((await ask(agentKey, 'When is the invoice sent?')).conversation_id)).toEqual([tech]);
    const removed = await t.app.inject({
      method: 'DELETE',
      url: `/api/public/workflows/${workflowId}`,
      headers: tenant.headers,
    });
    expect(removed.statusCode).toBe(409);
  });

  it('refuses a workflow key to a token bound to an agent (403)', async () => {
    const { agentKey } = await deployedWorkflow('rules', 'bound');
    const bound = (await tenant.chatToken(billing)).headers;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers: bound,
      payload: { agent_key: agentKey, query: 'When is the invoice sent?' },
    });
    expect(res.statusCode).toBe(403);
  });

  it('refuses a conversation of another workflow or agent, and a key with no live deployment', async () => {
    const one = await deployedWorkflow();
    const two = await deployedWorkflow('rules', 'slack');
    const first = await ask(one.agentKey, 'Where is my invoice?');
    const crossed = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers: token,
      payload: { agent_key: two.agentKey, query: 'And the SDK?', conversation_id: first.conversation_id },
    });
    expect(crossed.statusCode).toBe(409);
    const undeployed = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers: token,
      payload: { agent_key: `agent:${one.workflowId}:teams:us-east`, query: 'Where is my invoice?' },
    });
    expect(undeployed.statusCode).toBe(404);
  });
});

describe('the OpenAI-compatible endpoint', () => {
  it("lists a workflow's key as a model and routes its completions", async () => {
    const { workflowId, agentKey } = await deployedWorkflow('rules', 'api');
    const models = await t.app.inject({ method: 'GET', url: '/v1/models', headers: token });
    expect(models.json().data.map((model: { id: string }) => model.id)).toContain(agentKey);
    const complete = (content: string, conversationId?: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: token,
        payload: {
          model: agentKey,
          messages: [{ role: 'user', content }],
          ...(conversationId ? { metadata: { conversation_id: conversationId } } : {}),
        },
      });
    const first = await complete('When is the invoice sent?');
    expect(first.statusCode).toBe(200);
    expect(first.json().choices[0].message.content).toContain('Invoices are emailed');
    const conversationId = first.json().switchboard.conversation_id as string;
    const second = await complete('How do I install the SDK?', conversationId);
    expect(second.json().choices[0].message.content).toContain('npm install switchboard-sdk');
    expect(await answeredBy(conversationId)).toEqual([billing, tech]);
    expect((await handoffNotifications(workflowId)).length).toBe(1);
  });
});

describe('routing by a model', () => {
  it('asks the model for a step by name in one short call and follows it', async () => {
    const { agentKey } = await deployedWorkflow('fake:gpt-test');
    routerReply = (request) => ({
      tokens: [request.messages.at(-1)!.content.includes('card') ? 'billing' : 'technical'],
    });
    const before = routerCalls().length;
    const first = await ask(agentKey, 'My card was declined, what now?');
    const second = await ask(agentKey, 'The app shows a blank screen', first.conversation_id);
    expect(await answeredBy(first.conversation_id)).toEqual([billing, tech]);
    const calls = routerCalls().slice(before);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ model: 'gpt-test', temperature: 0 });
    expect(calls[0]!.messages[0]!.content).toContain('- billing (query types: billing; keywords: فاتورة, الفواتير)');
    expect(calls[1]!.messages[0]!.content).toContain('The conversation is with "billing"');
    expect(second.conversation_id).toBe(first.conversation_id);
  });

  it('falls back to the rules when the model fails or names no step', async () => {
    const { agentKey } = await deployedWorkflow('fake:gpt-test');
    routerReply = () => ({ status: 500 });
    const failed = await ask(agentKey, 'When is the invoice sent?');
    expect(failed.agent_response_text).toContain('Invoices are emailed');
    routerReply = () => ({ tokens: ['the', ' sales', ' team'] });
    const unknown = await ask(agentKey, 'How do I install the SDK?', failed.conversation_id);
    expect(unknown.agent_response_text).toContain('npm install switchboard-sdk');
    expect(await answeredBy(failed.conversation_id)).toEqual([billing, tech]);
  });

  it('falls back to the rules when the model does not answer in time', async () => {
    const { agentKey } = await deployedWorkflow('fake:gpt-test');
    routerReply = () => ({ tokens: ['bil'], hangAfter: 1 });
    const answer = await ask(agentKey, 'When is the invoice sent?');
    expect(answer.agent_response_text).toContain('Invoices are emailed');
    expect(await answeredBy(answer.conversation_id)).toEqual([billing]);
  });
});
