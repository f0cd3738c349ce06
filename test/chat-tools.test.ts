/**
 * Agents act (issue 14): a model agent on the OpenAI or the Anthropic protocol calls its
 * integrations' tools (Slack and Shopify peers), gets the results back and answers; the built-in
 * responder acts by rule (order lookup, escalation to Slack and e-mail). Every call is in the
 * stream, the stored answer, the support query, a team notification, and no secret leaves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeProviders, startFakeOpenAi, type ChatCompletionRequest, type FakeOpenAi } from './helpers/fake-openai.js';
import { startFakeAnthropic, type AnthropicReply } from './helpers/fake-anthropic.js';
import { startFakeShopify, type FakeShopify } from './helpers/fake-shopify.js';
import { startFakeSlack, type FakeSlack } from './helpers/fake-slack.js';
import { startSmtpPeer, type SmtpPeer } from './helpers/smtp-peer.js';
import { createLoggedTestApp, integrationsApi, type LoggedTestApp } from './helpers/integrations.js';
import { chat, chatSetup, type ChatSetup } from './helpers/chat.js';

let t: LoggedTestApp;
let openai: FakeOpenAi;
let anthropic: Awaited<ReturnType<typeof startFakeAnthropic>>;
let anthropicReply: (body: { messages: { role: string; content: unknown }[] }) => AnthropicReply = () => ({
  tokens: ['Hi'],
});
let slack: FakeSlack;
let shopify: FakeShopify;
let smtp: SmtpPeer;
const SHOPIFY_BAD_TOKEN = 'shpat_ffffffffffffffffffffffffffff0bad';

beforeAll(async () => {
  [openai, anthropic, slack, shopify, smtp] = await Promise.all([
    startFakeOpenAi(),
    startFakeAnthropic([], 200, (body) => anthropicReply(body)),
    startFakeSlack(),
    startFakeShopify(),
    startSmtpPeer(),
  ]);
  const providers = [
    ...JSON.parse(fakeProviders(openai)),
    { name: 'claude', type: 'anthropic', base_url: anthropic.url, api_key: 'ak-test', models: ['claude-test'] },
  ];
  t = await createLoggedTestApp({
    LLM_PROVIDERS: JSON.stringify(providers),
    ALLOW_PRIVATE_URLS: 'true',
    CHAT_MAX_TOOL_STEPS: '2',
  });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([openai?.close(), anthropic?.close(), slack?.close(), shopify?.close(), smtp?.close()]);
});

/** Slack and Shopify integrations linked to the agent (Slack by agent_id, Shopify by integration_ids). */
async function linkTools(setup: ChatSetup, options: { shopifyToken?: string; smtp?: boolean } = {}) {
  const api = integrationsApi(t.app, setup.tenant);
  const made = async (body: Record<string, unknown>) => {
    const res = await api.create(body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string }>().id;
  };
  await made({
    name: 'Team Slack',
    type: 'slack',
    agent_id: setup.agentId,
    config: { bot_token: slack.token, channel: 'C0SUPPORT', base_url: `${slack.url}/api` },
  });
  const shop = await made({
    name: 'Shop',
    type: 'shopify',
    config: {
      shop_domain: 'acme.myshopify.com',
      access_token: options.shopifyToken ?? shopify.token,
      base_url: shopify.url,
    },
  });
  const res = await t.app.inject({
    method: 'PUT',
    url: `/api/public/agents/${setup.agentId}`,
    headers: setup.tenant.headers,
    payload: { integration_ids: [shop] },
  });
  expect(res.statusCode, res.body).toBe(200);
  if (options.smtp) {
    await made({
      name: 'Mail',
      type: 'smtp',
      agent_id: setup.agentId,
      config: {
        host: smtp.host,
        port: smtp.port,
        require_tls: false,
        username: smtp.username,
        password: smtp.password,
        from: 'support@acme.test',
      },
    });
  }
}

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

async function stream(setup: ChatSetup, query: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/chat/agent/stream',
    headers: { ...setup.token, accept: 'text/event-stream' },
    payload: { agent_key: setup.agentKey, query },
  });
  expect(res.statusCode).toBe(200);
  const frames: Frame[] = [];
  for (const block of res.body.split('\n\n')) {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (event && data) frames.push({ event, data: JSON.parse(data) as Record<string, unknown> });
  }
  const text = frames
    .filter((frame) => frame.event === 'agent_text_chunk')
    .map((frame) => frame.data.content)
    .join('');
  const tools = frames.filter((frame) => frame.event === 'chunk' && frame.data.kind === 'tool').map((f) => f.data);
  return { body: res.body, frames, text, tools };
}

async function records(setup: ChatSetup) {
  const db = t.container.db;
  const companyId = setup.tenant.companyId;
  const [messages, notifications, queries, logs] = await Promise.all([
    db.selectFrom('conversation_messages').selectAll().where('company_id', '=', companyId).orderBy('seq').execute(),
    db.selectFrom('notifications').selectAll().where('company_id', '=', companyId).orderBy('created_at').execute(),
    db.selectFrom('support_queries').selectAll().where('company_id', '=', companyId).execute(),
    db.selectFrom('deployment_logs').selectAll().where('deployment_id', '=', setup.deploymentId).execute(),
  ]);
  return { messages, notifications, queries, logs };
}

const toolMessages = (request: ChatCompletionRequest) => request.messages.filter((message) => message.role === 'tool');

describe('a model agent calls its integrations’ tools', () => {
  it('OpenAI protocol: two calls in one step run in parallel, results go back, the answer streams', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    await linkTools(setup);
    const before = openai.requests.length;
    openai.reply = (request) =>
      toolMessages(request).length
        ? { tokens: ['Order #1042 is on its way', ' with UPS.'] }
        : {
            tokens: ['Let me check.'],
            toolCalls: [
              { name: 'shopify_lookup_order', arguments: { order_number: '1042' } },
              { name: 'slack_post_message', arguments: { text: 'A customer asks about order #1042' } },
            ],
          };
    const turn = await stream(setup, 'Where is my order #1042?');
    expect(turn.text).toBe('Let me check.\n\nOrder #1042 is on its way with UPS.');
    expect(turn.tools).toHaveLength(2);
    expect(turn.tools).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          tool: 'shopify_lookup_order',
          status: 'ok',
          summary: expect.stringContaining('#1042'),
        }),
        expect.objectContaining({ tool: 'slack_post_message', status: 'ok' }),
      ]),
    );
    // The first request declared the tools (and the platform's hand-off to a person); the second
    // carried the calls and their results.
    const [first, second] = openai.requests.slice(before);
    expect(first!.tools!.map((tool) => tool.function.name).sort()).toEqual([
      'handoff_to_human',
      'shopify_lookup_order',
      'shopify_search_products',
      'slack_post_message',
    ]);
    expect(second!.messages.find((message) => message.role === 'assistant' && message.tool_calls)).toBeTruthy();
    const results = toolMessages(second!);
    expect(results).toHaveLength(2);
    expect(results.map((message) => message.content).join('\n')).toContain('1Z999AA10123456784');
    expect(results[0]!.content).toMatch(/^Data returned by an external system/);
    expect(slack.posted.at(-1)).toEqual({ channel: 'C0SUPPORT', text: 'A customer asks about order #1042' });

    const { messages, notifications, queries } = await records(setup);
    const answer = messages.find((message) => message.role === 'assistant')!;
    expect(answer.tool_calls.map((call) => call.tool).sort()).toEqual(['shopify_lookup_order', 'slack_post_message']);
    expect(queries[0]!.tools_used).toEqual(expect.arrayContaining(['shopify_lookup_order', 'slack_post_message']));
    expect(queries[0]!.agent_actions_count).toBe(3);
    const byType = new Map(notifications.map((notification) => [notification.notification_type, notification]));
    expect(byType.get('tool_usage')?.metadata).toMatchObject({
      tool_used: 'shopify_lookup_order',
      execution_time: expect.stringMatching(/^\d+ms$/),
      status: 'ok',
    });
    expect(byType.get('slack_message')?.metadata).toMatchObject({ tool_used: 'slack_post_message' });
    expect(byType.get('slack_message')?.priority).toBe('low');
  });

  it('Anthropic protocol: a Shopify call, then a Slack call, then the answer', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'claude:claude-test' });
    await linkTools(setup);
    const before = anthropic.requests.length;
    anthropicReply = (body) => {
      const results = body.messages.filter(
        (message) =>
          Array.isArray(message.content) &&
          (message.content as { type: string }[]).some((block) => block.type === 'tool_result'),
      ).length;
      if (results === 0) return { toolUses: [{ name: 'shopify_lookup_order', input: { order_number: '#1042' } }] };
      if (results === 1)
        return {
          tokens: ['Telling the team.'],
          toolUses: [{ name: 'slack_post_message', input: { text: 'Order #1042 checked' } }],
        };
      return { tokens: ['Your order #1042 is in transit.'] };
    };
    const res = await chat(t.app, setup, { query: 'What about order 1042?' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().agent_response_text).toBe('Telling the team.\n\nYour order #1042 is in transit.');
    const sent = anthropic.requests.slice(before).map((request) => request.body);
    expect(sent).toHaveLength(3);
    const last = sent[2]!.messages;
    const resultsOf = (message: { content: unknown }) =>
      (message.content as { type: string; content?: unknown }[]).filter((block) => block.type === 'tool_result');
    expect(resultsOf(last[2]!)[0]!.content).toContain('FULFILLED');
    expect(resultsOf(last[4]!)).toHaveLength(1);
    expect(slack.posted.at(-1)?.text).toBe('Order #1042 checked');
    const { messages } = await records(setup);
    expect(messages[1]!.tool_calls.map((call) => call.tool)).toEqual(['shopify_lookup_order', 'slack_post_message']);
  });

  it('stops calling tools after CHAT_MAX_TOOL_STEPS steps: the last step may not call them', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    await linkTools(setup);
    const before = openai.requests.length;
    openai.reply = (request) =>
      request.tool_choice === 'none'
        ? { tokens: ['I looked twice.'] }
        : { toolCalls: [{ name: 'shopify_lookup_order', arguments: { order_number: '1043' } }] };
    const res = await chat(t.app, setup, { query: 'Order 1043 please' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().agent_response_text).toBe('I looked twice.');
    const sent = openai.requests.slice(before);
    expect(sent.map((request) => request.tool_choice)).toEqual(['auto', 'auto', 'none']);
    const { messages } = await records(setup);
    expect(messages[1]!.tool_calls).toHaveLength(2);
  });

  it('a failing tool (401 from the vendor) does not break the turn: the failure is recorded and told', async () => {
    const setup = await chatSetup(t.app, t.container, { model: 'fake:gpt-test' });
    await linkTools(setup, { shopifyToken: SHOPIFY_BAD_TOKEN });
    const before = openai.requests.length;
    openai.reply = (request) =>
      toolMessages(request).length
        ? { tokens: ['Sorry, I cannot see orders right now.'] }
        : { toolCalls: [{ name: 'shopify_lookup_order', arguments: { order_number: '1042' } }] };
    const turn = await stream(setup, 'Where is order 1042?');
    expect(turn.frames.at(-1)!.event).toBe('end');
    expect(turn.text).toBe('Sorry, I cannot see orders right now.');
    expect(turn.tools).toEqual([expect.objectContaining({ tool: 'shopify_lookup_order', status: 'failed' })]);
    const result = toolMessages(openai.requests.slice(before)[1]!)[0]!;
    expect(result.content).toMatch(/^The call failed: Shopify/);
    const { notifications, logs, messages } = await records(setup);
    const failed = notifications.find((notification) => notification.notification_type === 'tool_usage')!;
    expect(failed.priority).toBe('high');
    expect(failed.metadata).toMatchObject({ status: 'failed', tool_used: 'shopify_lookup_order' });
    expect(messages[1]!.tool_calls[0]).toMatchObject({ status: 'failed' });
    expect(logs.map((log) => log.message)).toEqual([expect.stringContaining('Tool shopify_lookup_order failed')]);
    const counted = (await t.container.metrics.toolCalls.get()).values;
    expect(counted).toContainEqual(
      expect.objectContaining({ labels: { tool: 'shopify.lookup_order', outcome: 'error' } }),
    );
    expect(JSON.stringify({ notifications, logs, messages, body: turn.body })).not.toContain(SHOPIFY_BAD_TOKEN);
  });
});

describe('the built-in responder acts by rule', () => {
  it('"where is my order 1042?" → the order status from Shopify, recorded', async () => {
    const setup = await chatSetup(t.app, t.container);
    await linkTools(setup);
    const turn = await stream(setup, 'Hi, where is my order 1042?');
    expect(turn.text).toContain('Order #1042: FULFILLED, tracking UPS 1Z999AA10123456784');
    expect(turn.tools).toEqual([expect.objectContaining({ tool: 'shopify_lookup_order', status: 'ok' })]);
    const { notifications, queries } = await records(setup);
    expect(notifications.map((notification) => notification.notification_type)).toEqual(['tool_usage']);
    expect(notifications[0]!.metadata).toMatchObject({ tool_used: 'shopify_lookup_order' });
    expect(queries[0]!.tools_used).toContain('shopify_lookup_order');
  });

  it('"I want to talk to a person" → a Slack message and an e-mail with the transcript', async () => {
    const setup = await chatSetup(t.app, t.container, {
      escalation: { contact_email: 'team@acme.test', message: 'A colleague will take over.' },
    });
    await linkTools(setup, { smtp: true });
    const mailsBefore = smtp.received.length;
    const res = await chat(t.app, setup, { query: 'I want to talk to a person' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().agent_response_text).toBe("A colleague will take over. I've let the team know.");
    expect(slack.posted.at(-1)?.text).toContain('Customer: I want to talk to a person');
    expect(smtp.received.length).toBe(mailsBefore + 1);
    expect(smtp.received.at(-1)!.to).toEqual(['team@acme.test']);
    expect(smtp.received.at(-1)!.raw).toContain('Customer: I want to talk to a person');
    const { notifications } = await records(setup);
    const types = notifications.map((notification) => notification.notification_type);
    expect(types).toEqual(expect.arrayContaining(['slack_message', 'email_sent', 'agent_action']));
    expect(notifications.find((n) => n.notification_type === 'email_sent')!.metadata).toMatchObject({
      recipient_email: 'team@acme.test',
      email_subject: expect.stringContaining('asked for a person'),
      tool_used: 'smtp_send_email',
    });
    // The platform's escalation e-mail job is not enqueued again: the agent's own e-mail went out.
    const jobs = await t.container.queue.boss
      .getDb()
      .executeSql(
        `select 1 from ${t.container.config.jobsSchema}.job where name = 'chat.escalation-email' and data->>'companyId' = $1`,
        [setup.tenant.companyId],
      );
    expect(jobs.rows).toHaveLength(0);
  });

  it('no secret reaches the models, the stream, the records or the logs', async () => {
    const everything = JSON.stringify({
      openai: openai.requests,
      anthropic: anthropic.requests.map((request) => request.body),
      notifications: await t.container.db.selectFrom('notifications').selectAll().execute(),
      messages: await t.container.db.selectFrom('conversation_messages').selectAll().execute(),
      logs: t.logs,
    });
    for (const secret of [slack.token, shopify.token, smtp.password, SHOPIFY_BAD_TOKEN])
      expect(everything).not.toContain(secret);
  });
});
