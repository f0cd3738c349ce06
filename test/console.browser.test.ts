/**
 * The console in a real browser (Debian's Chromium driven by playwright-core) against a real
 * service: accept an invitation with a password, sign out and in, upload a document and watch it
 * complete, create an agent, deploy it, chat with it, see the conversation in insights, answer a
 * customer's hand-off from the inbox (live list, Arabic right to left, reply seen by the customer,
 * close), add a webhook endpoint and send it a test, open the widget's snippet and preview, visit
 * every page (and the inbox at 390 px), sign out. axe-core finds no serious or critical violation on any page, the strict
 * Content-Security-Policy refuses nothing the console does, and a screenshot of each page is kept
 * under test-artifacts/console/ (gitignored). Skipped, saying so, without Chromium or a build.
 */
import axe, { type AxeResults } from 'axe-core';
import { Document as DocxDocument, Packer, Paragraph } from 'docx';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_DIR } from '../src/http/console.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, uniqueEmail, type TestTenant } from './helpers/factories.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../test-artifacts/console');
const missing = !existsSync(CHROMIUM)
  ? `Chromium is not installed at ${CHROMIUM}`
  : !existsSync(path.join(CONSOLE_DIR, 'index.html'))
    ? 'the console is not built (npm run build)'
    : null;
if (missing) console.log(`console browser tests skipped: ${missing}`);

const PASSWORD = 'lantern harbour seventeen';

let t: TestApp;
let base: string;
let browser: Browser;
let tenant: TestTenant;

beforeAll(async () => {
  if (missing) return;
  await mkdir(ARTIFACTS, { recursive: true });
  console.log(`console screenshots: ${ARTIFACTS}`);
  t = await createTestApp({
    EMBEDDINGS_PROVIDER: 'none',
    RUN_WORKERS: 'true',
    RATE_LIMIT_ENABLED: 'false',
    // The webhooks page adds an endpoint on this machine (nothing is sent: no webhook worker runs here).
    ALLOW_PRIVATE_URLS: 'true',
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  tenant = await createTenant(t.container, 'owner', 'Acme Support');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** No serious or critical axe-core violation on the page as it is now. */
async function expectAccessible(page: Page, name: string) {
  await page.evaluate(axe.source);
  const results = await page.evaluate<AxeResults>("axe.run(document, { resultTypes: ['violations'] })");
  const serious = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  expect(serious, `axe on ${name}`).toEqual([]);
}

async function snap(page: Page, name: string) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Visits a page of the console, waits for its heading, checks it and keeps a screenshot. */
async function visit(page: Page, hash: string, heading: string, name: string) {
  await page.goto(`${base}/console/#/${hash}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.locator('.loading').first().waitFor({ state: 'detached' });
  await expectAccessible(page, name);
  await snap(page, name);
}

async function docxFile(): Promise<string> {
  const doc = new DocxDocument({
    sections: [
      {
        children: [
          new Paragraph('Returns and refunds'),
          new Paragraph('Q: How long do refunds take?'),
          new Paragraph('A: Refunds are paid to the original card within 5 business days after we receive the item.'),
          new Paragraph('Q: Can I return a sale item?'),
          new Paragraph('A: Sale items can be returned within 14 days in their original packaging.'),
        ],
      },
    ],
  });
  const file = path.join(tmpdir(), `returns-${process.pid}-${Date.now()}.docx`);
  await writeFile(file, await Packer.toBuffer(doc));
  return file;
}

describe.skipIf(missing !== null)('the console in Chromium', () => {
  it('takes a new person from the invitation to a deployed agent, a chat, its insights and a hand-off', async () => {
    const email = uniqueEmail('dev');
    const invited = await t.app.inject({
      method: 'POST',
      url: '/api/public/companies/invitations',
      headers: tenant.headers,
      payload: { email, role: 'admin' },
    });
    const token = invited.json<{ token: string }>().token;
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
    });

    // Accept the invitation by choosing a password: signed in, on Getting started.
    await page.goto(`${base}/console/#/accept?token=${encodeURIComponent(token)}`);
    await page.getByRole('heading', { name: 'Join your team on Switchboard' }).waitFor();
    await expectAccessible(page, 'accept invitation');
    await snap(page, 'accept-invitation');
    await page.getByLabel('First name').fill('Noor');
    await page.getByLabel('Choose a password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept the invitation' }).click();
    await page.getByRole('heading', { level: 1, name: 'Getting started' }).waitFor();
    await page.getByRole('link', { name: 'Upload a document', exact: true }).waitFor();
    await expectAccessible(page, 'getting started');
    await snap(page, 'getting-started');

    // Sign out, and in again with e-mail and password (a wrong one first: the API's message shows).
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Switchboard' }).waitFor();
    await expectAccessible(page, 'sign in');
    await snap(page, 'sign-in');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password', { exact: true }).fill('not my password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'E-mail or password is wrong' }).waitFor();
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Getting started' }).waitFor();

    // Upload a document and watch its ingestion complete.
    await page.getByRole('link', { name: 'Knowledge', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Knowledge' }).waitFor();
    await page.getByText('No knowledge yet').waitFor();
    await page.getByLabel('Title').fill('Returns and refunds');
    await page.getByLabel('File', { exact: true }).setInputFiles(await docxFile());
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.locator('.task[data-status="completed"]').waitFor({ timeout: 60_000 });
    await page.getByRole('cell', { name: 'Returns and refunds' }).waitFor();
    await page.getByLabel('Question').fill('How long do refunds take?');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.locator('.hits li').first().waitFor();
    await expectAccessible(page, 'knowledge');
    await snap(page, 'knowledge');

    // Create an agent; it is not live yet, so its page leads to deploying it.
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByText('No agents yet').waitFor();
    await page.getByRole('button', { name: 'Create your first agent' }).click();
    await page.getByLabel('Name').fill('Returns helper');
    await page.getByLabel('Instructions').fill('Answer questions about returns from the knowledge base.');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { level: 2, name: 'Returns helper' }).waitFor();
    await page.getByText('This agent is not live yet').waitFor();
    await expectAccessible(page, 'agents');
    await page.getByRole('link', { name: 'Deploy Returns helper', exact: true }).click();

    // Deploy it and wait for the roll-out.
    await page.getByRole('heading', { level: 1, name: 'Deployments' }).waitFor();
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    await page.locator('.badge.active').waitFor({ timeout: 60_000 });
    await expectAccessible(page, 'deployments');
    await page.getByRole('button', { name: 'Logs' }).click();
    await page.locator('.logs li').first().waitFor();
    await snap(page, 'deployments');

    // Chat with it from its page.
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByRole('link', { name: 'Returns helper', exact: true }).click();
    await page.getByLabel('Message').fill('How long do refunds take?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.bubble.assistant', { hasText: '5 business days' }).waitFor({ timeout: 60_000 });
    await expectAccessible(page, 'agent chat');
    await snap(page, 'agents');

    // The conversation shows in insights.
    await page.getByRole('link', { name: 'Insights', exact: true }).click();
    await page.getByRole('heading', { level: 2, name: 'Recent queries' }).waitFor();
    expect(await page.locator('.figure-value').first().textContent()).toBe('1');
    await page.locator('section[aria-labelledby="recent-title"] li', { hasText: 'refunds' }).waitFor();
    await page.locator('.chart canvas').first().waitFor();
    await expectAccessible(page, 'insights');
    await snap(page, 'insights');

    // A customer asks for a person through the chat API (in Arabic): the inbox lists it live.
    await page.getByRole('link', { name: 'Inbox', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    await page.getByText('Nobody is waiting for a person').waitFor();
    await expectAccessible(page, 'inbox (empty)');
    const deployed = await t.app.inject({ method: 'GET', url: '/api/public/deployments', headers: tenant.headers });
    const agentKey = deployed.json<{ data: { agent_key: string }[] }>().data[0]!.agent_key;
    const customer = (await tenant.chatToken()).headers;
    const asked = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers: customer,
      payload: { agent_key: agentKey, query: 'أريد التحدث مع موظف من فضلك', user: 'customer-7' },
    });
    expect(asked.statusCode, asked.body).toBe(200);
    const conversationId = asked.json<{ conversation_id: string }>().conversation_id;
    await page.getByRole('link', { name: 'customer-7', exact: true }).click();
    const question = page.locator('.bubble.customer .bubble-text', { hasText: 'أريد التحدث مع موظف' });
    await question.waitFor();
    expect(
      await page.evaluate<string>(
        "getComputedStyle(document.querySelector('.bubble.customer .bubble-text')).direction",
      ),
    ).toBe('rtl');
    await page.getByText('The customer asked for a person').waitFor();

    // Answer it from the console: the customer's conversation has the reply; then close it.
    await page.getByLabel('Reply', { exact: true }).fill('Hello, this is Noor from the returns team. How can I help?');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.locator('.bubble.human', { hasText: 'Noor from the returns team' }).waitFor();
    await page.locator('.detail-header .badge.assigned').waitFor();
    await expectAccessible(page, 'inbox');
    await snap(page, 'inbox');
    const history = await t.app.inject({
      method: 'GET',
      url: `/api/v1/chat/conversations/${conversationId}/messages`,
      headers: customer,
    });
    expect(history.statusCode, history.body).toBe(200);
    expect(history.json<{ data: { role: string; content: string }[] }>().data.at(-1)).toMatchObject({
      role: 'human',
      content: 'Hello, this is Noor from the returns team. How can I help?',
    });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('.bubble.human').first().waitFor();
    await expectAccessible(page, 'inbox at 390 px');
    await snap(page, 'inbox-390');
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.getByLabel('Resolution (optional)').fill('Explained when the refund arrives');
    await page.getByRole('button', { name: 'Close conversation' }).click();
    await page.getByText('This conversation is closed').waitFor();
    const resolved = await t.container.db
      .selectFrom('support_queries')
      .select(['status', 'escalated_to_human'])
      .where('conversation_id', '=', conversationId)
      .executeTakeFirstOrThrow();
    expect(resolved).toEqual({ status: 'resolved', escalated_to_human: true });

    // Webhooks: add an endpoint (its secret shown once), send it a test, see the delivery, rotate.
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByText('No webhook endpoints').waitFor();
    await page.getByLabel('URL').fill('http://127.0.0.1:9/switchboard-events');
    await page.getByLabel('Description').fill('Our CRM');
    await page.getByRole('checkbox', { name: 'conversation.handoff' }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const first = await page.locator('.secret code').textContent();
    expect(first).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Send a test to http://127.0.0.1:9/switchboard-events' }).click();
    await page.getByRole('cell', { name: 'webhook.test' }).waitFor();
    await page.getByRole('button', { name: 'Rotate secret of http://127.0.0.1:9/switchboard-events' }).click();
    await page.getByText('The new signing secret').waitFor();
    const second = await page.locator('.secret code').textContent();
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    await expectAccessible(page, 'webhooks');
    await snap(page, 'webhooks');

    // The widget of the web deployment: its snippet, and the preview (or why there is none yet).
    await page.getByRole('link', { name: 'Deployments', exact: true }).click();
    await page.getByRole('button', { name: 'Widget of Returns helper' }).click();
    await page.getByRole('heading', { level: 2, name: 'Website widget' }).waitFor();
    expect(await page.locator('.snippet code').textContent()).toMatch(
      /<script src="[^"]*\/widget\.js\?v=[^"]*" data-key="[^"]+"/,
    );
    const script = await fetch(`${base}/widget.js`, { method: 'HEAD' });
    if (script.status === 404) {
      await page.getByText('does not serve the widget script yet (/widget.js answered 404)').waitFor();
    } else {
      expect(script.status).toBe(200);
      await page.getByRole('button', { name: /^Allow http:\/\/127\.0\.0\.1:\d+ for the preview$/ }).click();
      const frame = page.frameLocator('iframe[title="Widget preview"]');
      await frame.locator('body[data-widget="loaded"]').waitFor();
      // The widget itself (its Shadow DOM is open): the launcher opens its panel.
      await page.locator('iframe[title="Widget preview"]').scrollIntoViewIfNeeded();
      await frame.getByRole('button', { name: 'Open chat' }).click();
      await frame.getByRole('dialog').waitFor();
    }
    await expectAccessible(page, 'deployments with the widget');
    await snap(page, 'deployments-widget');

    // Every other page: named, accessible, kept.
    await visit(page, 'notifications', 'Notifications', 'notifications');
    await visit(page, 'integrations', 'Integrations', 'integrations');
    await visit(page, 'voice', 'Voice agents', 'voice-agents');
    await visit(page, 'members', 'Members', 'members');
    await visit(page, 'keys', 'API keys & chat tokens', 'keys');

    // Arabic content reads right to left.
    await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: tenant.headers,
      payload: { title: 'مساعد الإرجاع', languages: ['ar'] },
    });
    await page.goto(`${base}/console/#/agents`);
    const arabic = page.getByRole('link', { name: 'مساعد الإرجاع', exact: true });
    await arabic.waitFor();
    const direction = await page.evaluate<string>(
      "getComputedStyle([...document.querySelectorAll('a')].find((a) => a.textContent === 'مساعد الإرجاع')).direction",
    );
    expect(direction).toBe('rtl');

    // 390 px wide: the navigation folds behind the menu button.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/console/#/insights`);
    await page.getByRole('heading', { level: 2, name: 'Recent queries' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Console' }).isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await expectAccessible(page, 'agents at 390 px');
    await snap(page, 'agents-390');

    // Keyboard: the skip link is the first stop and leads to the page.
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent.trim()')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('main');

    // Sign out: the session ends on the service too.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Switchboard' }).waitFor();
    const after = await page.evaluate<number>("fetch('/api/public/users/me').then((response) => response.status)");
    expect(after).toBe(401);
    expect(refused).toEqual([]);
    await context.close();
  }, 240_000);
});
