/**
 * A service process killed with SIGKILL in the middle of chat turns: one streaming its answer, one
 * waiting on a tool call (a vendor that never answers), one voice turn streaming its answer. The
 * customer's questions were durable before the model started (in the turn journal, their
 * conversations written); the next start records each interrupted turn as failed — the question
 * kept, an empty answer with finish_reason `error`, the support query opened — so no conversation
 * is left empty and no question is lost. The service runs the project's entry point on a database
 * of its own; the recovering instance is started afterwards in this process.
 */
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { REGIONS, createDeployment } from './helpers/deployments.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { integrationsApi } from './helpers/integrations.js';
import { childEnv, listeningUrl, start, waitFor, type Started } from './helpers/processes.js';
import { createScratchDatabase } from './helpers/scratch-db.js';
import { multipart } from './knowledge/helpers.js';
import { startVendorPeer, type VendorPeer } from './helpers/vendor-peer.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const QUESTIONS = {
  stream: 'STREAM: where is my parcel 4711?',
  tool: 'TOOL: please look up order A-100',
  voice: 'VOICE: what are your opening hours?',
};

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let t: TestApp;
let openai: FakeOpenAi;
let vendor: VendorPeer;
let service: Started;
let recovering: TestApp | undefined;
let tenant: TestTenant;
let agentId: string;
let deploymentId: string;

beforeAll(async () => {
  scratch = await createScratchDatabase();
  const handle = createDatabase(scratch.url, 2);
  await migrateToLatest(handle.db);
  await handle.close();
  [openai, vendor] = await Promise.all([
    startFakeOpenAi(),
    // A custom API that never answers its orders route.
    startVendorPeer(() => ({ status: 200, body: { ok: true } })),
  ]);
  openai.reply = (request) => {
    const question = request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
    if (question.startsWith('TOOL'))
      return { tokens: ['Let me check.'], toolCalls: [{ name: 'custom_api_order', arguments: { id: 'A-100' } }] };
    // Two tokens, then the stream stays open: the turn is mid-answer.
    return { tokens: ['Your answer ', 'is coming', ' soon.'], hangAfter: 2 };
  };
  t = await createTestApp({ DATABASE_URL: scratch.url, LLM_PROVIDERS: fakeProviders(openai) });
  tenant = await createTenant(t.container);
  const agent = await t.app.inject({
    method: 'POST',
    url: '/api/public/agents',
    headers: tenant.headers,
    payload: { title: 'Helper', model: 'fake:gpt-test' },
  });
  expect(agent.statusCode, agent.body).toBe(201);
  agentId = agent.json<{ id: string }>().id;
  const integration = await integrationsApi(t.app, tenant).create({
    name: 'Orders',
    type: 'custom_api',
    agent_id: agentId,
    config: {
      base_url: `${vendor.url}/api`,
      operations: [
        {
          name: 'order',
          description: 'Look an order up',
          method: 'GET',
          path: '/orders/{id}',
          parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        },
      ],
    },
  });
  expect(integration.statusCode, integration.body).toBe(201);
  deploymentId = (await createDeployment(t.app, tenant, agentId, { region_id: REGIONS.usEast })).id;
  await sql`update deployments set status = 'active' where id = ${deploymentId}`.execute(t.container.db);
  service = start(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: childEnv({
      NODE_ENV: 'test',
      DATABASE_URL: scratch.url,
      PORT: '0',
      HOST: '127.0.0.1',
      RUN_WORKERS: 'false',
      LOG_LEVEL: 'info',
      LLM_PROVIDERS: fakeProviders(openai),
      ALLOW_PRIVATE_URLS: 'true',
      EMBEDDINGS_PROVIDER: 'none',
      CHAT_TURN_SWEEP_MS: '200',
    }),
  });
  await listeningUrl(service, 100_000);
}, 120_000);

afterAll(async () => {
  if (service && service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  await service?.exited;
  await recovering?.close();
  await t?.close();
  vendor?.fail({ kind: 'status', status: 200, body: {} });
  await Promise.all([openai?.close(), vendor?.close()]);
  await scratch?.drop();
});

/** Posts and reads the response until `enough` says the turn is where it should be; the request stays open. */
async function begin(url: string, init: RequestInit, enough: (text: string) => boolean) {
  const controller = new AbortController();
  const res = await fetch(url, { ...init, signal: controller.signal });
  expect(res.status, `${url}: ${res.status === 200 ? '' : await res.text()}`).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!enough(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return { text, abort: () => controller.abort() };
}

describe('a service killed mid-turn', () => {
  it('keeps every question and records each interrupted turn as failed at the next start', async () => {
    const base = (await listeningUrl(service)).replace(/\/$/, '');
    const chat = await tenant.chatToken();
    const agentKey = `agent:${agentId}:web:us-east`;
    const post = (query: string) => ({
      method: 'POST',
      headers: { ...chat.headers, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ agent_key: agentKey, query }),
    });
    vendor.fail({ kind: 'hang' });
    const streamed = await begin(`${base}/api/v1/chat/agent/stream`, post(QUESTIONS.stream), (text) =>
      text.includes('is coming'),
    );
    const tooled = await begin(`${base}/api/v1/chat/agent/stream`, post(QUESTIONS.tool), (text) =>
      text.includes('Let me check.'),
    );
    await waitFor(() => vendor.requests.some((request) => request.path === '/api/orders/A-100'), 'the tool call');
    const voiceAgent = await t.app.inject({
      method: 'POST',
      url: '/api/public/voice-agents',
      headers: tenant.headers,
      payload: { name: 'Front desk', voice_id: RACHEL, main_agent_id: agentId, active: true },
    });
    expect(voiceAgent.statusCode, voiceAgent.body).toBe(201);
    const form = multipart({ text: QUESTIONS.voice });
    const voiced = await begin(
      `${base}/api/public/voice-agents/${voiceAgent.json<{ id: string }>().id}/respond`,
      {
        method: 'POST',
        headers: { ...tenant.headers, ...form.headers, accept: 'text/event-stream' },
        body: form.payload,
      },
      (text) => text.includes('is coming'),
    );

    // Mid-answer, mid tool call, mid voice turn: the questions are already durable.
    const db = t.container.db;
    const pending = await db.selectFrom('chat_pending_turns').select(['query', 'conversation_id']).execute();
    expect(pending.map((row) => row.query).sort()).toEqual(Object.values(QUESTIONS).sort());

    service.child.kill('SIGKILL');
    await service.exited;
    for (const request of [streamed, tooled, voiced]) request.abort();
    const conversationIds = pending.map((row) => row.conversation_id);
    const before = await db.selectFrom('conversations').select(['id', 'message_count']).execute();
    expect(before.filter((row) => conversationIds.includes(row.id)).map((row) => row.message_count)).toEqual([0, 0, 0]);

    // The next start (workers on) records them.
    recovering = await createTestApp({
      DATABASE_URL: scratch.url,
      RUN_WORKERS: 'true',
      CHAT_TURN_SWEEP_MS: '200',
      EMBEDDINGS_PROVIDER: 'none',
    });
    await waitFor(
      async () => (await db.selectFrom('chat_pending_turns').select('id').execute()).length === 0,
      'the interrupted turns to be recorded',
    );

    for (const [kind, question] of Object.entries(QUESTIONS)) {
      const { conversation_id: conversationId } = pending.find((row) => row.query === question)!;
      const conversation = await db
        .selectFrom('conversations')
        .selectAll()
        .where('id', '=', conversationId)
        .executeTakeFirstOrThrow();
      const messages = await db
        .selectFrom('conversation_messages')
        .select(['role', 'content', 'finish_reason'])
        .where('conversation_id', '=', conversationId)
        .orderBy('seq')
        .execute();
      expect(messages, kind).toEqual([
        { role: 'user', content: question, finish_reason: null },
        { role: 'assistant', content: '', finish_reason: 'error' },
      ]);
      expect(conversation.message_count, kind).toBe(2);
      expect(conversation.support_query_id, kind).not.toBeNull();
      const query = await db
        .selectFrom('support_queries')
        .selectAll()
        .where('id', '=', conversation.support_query_id!)
        .executeTakeFirstOrThrow();
      expect(query.company_id).toBe(tenant.companyId);
    }
    // Told where the team reads the deployment's events; the conversation lists show them whole.
    const logs = await db
      .selectFrom('deployment_logs')
      .select('message')
      .where('deployment_id', '=', deploymentId)
      .execute();
    expect(logs.map((log) => log.message)).toContain(
      'Chat turn interrupted (the service stopped while answering): recorded as failed, the question kept',
    );
    // A second sweep finds nothing more to do.
    expect(await recovering.container.chat.journal.sweep()).toBe(0);
  });
});
