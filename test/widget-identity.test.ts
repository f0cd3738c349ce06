/**
 * The widget's identity verification reaches the agent (DESIGN §12): a signed-in customer's
 * turns tell the model who they are, and an e-mail the company's server signed (`email_hash`)
 * fills the `email` of a tool the model calls (a Shopify order lookup of *their* orders). An
 * e-mail without its hash, or a visitor without a valid `user_hash`, reaches neither.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { startFakeShopify, type FakeShopify } from './helpers/fake-shopify.js';
import { createLoggedTestApp, integrationsApi, type LoggedTestApp } from './helpers/integrations.js';
import { ORIGIN, session, userHash, widgetSetup, type WidgetSetup } from './helpers/widget.js';

const SECRET = 'identity-secret-0123456789';
const EMAIL = 'dana@example.com';

let t: LoggedTestApp;
let openai: FakeOpenAi;
let shopify: FakeShopify;
let w: WidgetSetup;

beforeAll(async () => {
  [openai, shopify] = await Promise.all([startFakeOpenAi(), startFakeShopify()]);
  t = await createLoggedTestApp({
    LLM_PROVIDERS: fakeProviders(openai),
    ALLOW_PRIVATE_URLS: 'true',
    EMBEDDINGS_PROVIDER: 'none',
    RATE_LIMIT_ENABLED: 'false',
  });
  w = await widgetSetup(t.app, t.container, { identity_secret: SECRET }, { agent: { model: 'fake:gpt-test' } });
  const made = await integrationsApi(t.app, w.tenant).create({
    name: 'Shop',
    type: 'shopify',
    config: { shop_domain: 'acme.myshopify.com', access_token: shopify.token, base_url: shopify.url },
  });
  expect(made.statusCode, made.body).toBe(201);
  const linked = await t.app.inject({
    method: 'PUT',
    url: `/api/public/agents/${w.agentId}`,
    headers: w.tenant.headers,
    payload: { integration_ids: [made.json<{ id: string }>().id] },
  });
  expect(linked.statusCode, linked.body).toBe(200);
  // The model looks up "my orders" without naming an e-mail, then answers.
  openai.reply = (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? { tokens: ['Here is what I found.'] }
      : { toolCalls: [{ name: 'shopify_lookup_order', arguments: {} }] };
});
afterAll(async () => {
  await t?.close();
  await Promise.all([openai?.close(), shopify?.close()]);
});

async function turn(identity: Record<string, unknown>) {
  const visitor = await session(t.app, w.key, identity);
  const requests = openai.requests.length;
  const calls = shopify.requests.length;
  const res = await t.app.inject({
    method: 'POST',
    url: `/widget/v1/${w.key}/messages`,
    headers: { ...visitor.auth, origin: ORIGIN },
    payload: { text: 'Where are my orders?' },
  });
  expect(res.statusCode, res.body).toBe(200);
  const system = openai.requests[requests]!.messages[0]!.content as string;
  const searches = shopify.requests
    .slice(calls)
    .map((request) => (request.json as { variables?: { query?: string } }).variables?.query ?? '')
    .filter(Boolean);
  const toolResult = openai.requests
    .slice(requests)
    .flatMap((request) => request.messages)
    .find((message) => message.role === 'tool');
  return { visitor, system, searches, toolResult: String(toolResult?.content ?? '') };
}

describe('an identified customer of the widget', () => {
  it("with a signed e-mail: the model is told who the customer is and the order lookup uses the customer's e-mail", async () => {
    const { visitor, system, searches, toolResult } = await turn({
      user_id: 'cust-42',
      name: 'Dana',
      email: EMAIL,
      user_hash: userHash(SECRET, 'cust-42'),
      email_hash: userHash(SECRET, EMAIL),
    });
    expect(visitor.identified).toBe(true);
    expect(system).toContain('signed in and verified');
    expect(system).toContain(`"${EMAIL}"`);
    expect(system).toContain('"cust-42"');
    expect(searches).toEqual([expect.stringContaining(`email:"${EMAIL}"`)]);
    expect(toolResult).toMatch(/^Data returned by an external system/);
    expect(toolResult).toContain('#1042');
  });

  it('with an e-mail but no (or a wrong) email_hash: identified, but the e-mail reaches neither the model nor the tools', async () => {
    for (const email_hash of [undefined, userHash(SECRET, 'someone-else@example.com')]) {
      const { visitor, system, searches, toolResult } = await turn({
        user_id: 'cust-43',
        email: EMAIL,
        user_hash: userHash(SECRET, 'cust-43'),
        ...(email_hash ? { email_hash } : {}),
      });
      expect(visitor.identified).toBe(true);
      expect(system).toContain('"cust-43"');
      expect(system).not.toContain(EMAIL);
      expect(searches).toEqual([]);
      expect(toolResult).toMatch(/failed/i);
    }
  });

  it('an anonymous visitor (a wrong user_hash) is told as nobody', async () => {
    const { visitor, system, searches } = await turn({
      user_id: 'cust-44',
      email: EMAIL,
      user_hash: userHash('another-secret-0123456789', 'cust-44'),
      email_hash: userHash(SECRET, EMAIL),
    });
    expect(visitor.identified).toBe(false);
    expect(system).not.toContain('signed in');
    expect(system).not.toContain(EMAIL);
    expect(searches).toEqual([]);
  });
});
