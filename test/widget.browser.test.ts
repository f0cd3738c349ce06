/**
 * The web widget in a real browser (Debian's Chromium driven by playwright-core) on host pages
 * served from another origin than the service (`http://localhost:<port>` vs the service's
 * `http://127.0.0.1:<port>`), under hostile CSS: launcher, open, ask, a streamed answer with its
 * citation link, a reload keeping the history, a reload mid-answer resuming it, Arabic right to
 * left, a 360 × 640 screen, axe-core with no serious or critical violation, a page of an origin
 * the widget does not allow gets no widget, a strict Content-Security-Policy page works, and a
 * person's reply sent through the inbox API shows up in the widget. Screenshots are kept under
 * test-artifacts/widget/ (gitignored); `WIDGET_SCREENSHOT=docs/widget.png` also writes the
 * README's. Skipped, saying so, without Chromium.
 */
import axe, { type AxeResults } from 'axe-core';
import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWidget } from '../scripts/build-widget.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { widgetSetup, type WidgetSetup } from './helpers/widget.js';
import { uploadArticle, waitForTask } from './knowledge/helpers.js';

// The page functions below run in the browser; this file compiles without the DOM library.
declare function getComputedStyle(element: unknown): Record<string, string>;
declare const document: { activeElement: { tagName: string } | null; documentElement: { scrollWidth: number } };

const CHROMIUM = '/usr/bin/chromium';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts/widget');
const missing = existsSync(CHROMIUM) ? null : `Chromium is not installed at ${CHROMIUM} (apt-get install chromium)`;
if (missing) console.log(`widget browser tests skipped: ${missing}`);

const SOURCE_URL = 'https://help.example.com/returns';
const QUESTION = 'How long does a refund take?';

/** CSS a careless or hostile site may have: none of it may reach inside the widget. */
const HOSTILE_CSS = `
* { font-family: "Comic Sans MS", cursive !important; letter-spacing: 6px !important; line-height: 4 !important; }
div, button, span, ol, li, textarea, form, header, h2, a, svg { all: unset !important; color: #f0f !important; font-size: 40px !important; }
switchboard-widget { display: none !important; position: absolute !important; transform: scale(0.1) !important; opacity: 0 !important; }
body { font-size: 40px !important; color: #060 !important; background: #ffe !important; }
`;

let t: TestApp;
let service: string;
let openai: FakeOpenAi;
let host: Server;
let hostPort: number;
let browser: Browser;
let w: WidgetSetup;
let arabic: WidgetSetup;
let slow: WidgetSetup;

const scriptTag = (setup: WidgetSetup, attributes = '') => {
  const version = /[?&]v=([^"&]+)/.exec(setup.snippet)?.[1] ?? '';
  return `<script src="${service}/widget.js?v=${version}" data-key="${setup.key}" ${attributes} async></script>`;
};

/** The host pages: `?key=` picks the widget, `mode=page|container`, `csp=1` a strict policy. */
function hostPage(url: URL): { html: string; headers: Record<string, string> } {
  const setup = [w, arabic, slow].find((one) => one.key === url.searchParams.get('key')) ?? w;
  const mode = url.searchParams.get('mode');
  const csp = url.searchParams.get('csp') === '1';
  const attributes = mode === 'page' ? 'data-mode="page"' : mode === 'container' ? 'data-container="#help"' : '';
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme shop</title><link rel="stylesheet" href="/hostile.css"></head>
<body><main><h1>Acme shop</h1><p>Welcome to our shop.</p>${mode === 'container' ? '<section id="help" style="height:500px"></section>' : ''}</main>
${scriptTag(setup, attributes)}</body></html>`;
  const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' };
  // Strict: no inline script or style, no eval; only the service's origin for the widget.
  if (csp)
    headers['content-security-policy'] =
      `default-src 'none'; script-src ${service}; connect-src ${service}; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
  return { html: csp ? html.replace(' style="height:500px"', '') : html, headers };
}

beforeAll(async () => {
  if (missing) return;
  await mkdir(ARTIFACTS, { recursive: true });
  await buildWidget();
  openai = await startFakeOpenAi();
  t = await createTestApp({
    EMBEDDINGS_PROVIDER: 'none',
    RATE_LIMIT_ENABLED: 'false',
    LLM_PROVIDERS: fakeProviders(openai),
    CHAT_STREAM_RETRY_MS: '200',
  });
  service = await t.app.listen({ port: 0, host: '127.0.0.1' });
  host = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/hostile.css') {
      response.writeHead(200, { 'content-type': 'text/css' }).end(HOSTILE_CSS);
      return;
    }
    if (url.pathname !== '/') {
      response.writeHead(404).end();
      return;
    }
    const { html, headers } = hostPage(url);
    response.writeHead(200, headers).end(html);
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  hostPort = (host.address() as AddressInfo).port;
  const allowed = { allowed_origins: [`http://localhost:${hostPort}`] };
  w = await widgetSetup(t.app, t.container, { ...allowed, title: 'Acme help', greeting: 'Hi! Ask me **anything**.' });
  arabic = await widgetSetup(t.app, t.container, {
    ...allowed,
    title: 'مساعدة',
    greeting: 'مرحبًا! كيف يمكننا مساعدتك؟',
    placeholder: 'اكتب رسالتك…',
    language: 'ar',
    theme: 'dark',
  });
  slow = await widgetSetup(t.app, t.container, allowed, { agent: { model: 'fake:gpt-test' } });
  const upload = await uploadArticle(t.app, w.tenant.headers, {
    document_title: 'Returns and refunds',
    content:
      'Q: How long do refunds take?\nA: Refunds are paid to the original card within 5 business days after we receive the item.',
  });
  expect((await waitForTask(t, w.tenant.headers, upload.task_id)).status).toBe('completed');
  await t.container.db
    .updateTable('kb_documents')
    .set({ source_url: SOURCE_URL })
    .where('id', '=', upload.document_id.replace(/^doc_/, ''))
    .execute();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (host ? host.close(resolve) : resolve(undefined)));
  await t?.close();
  await openai?.close();
});

const pageUrl = (query: Record<string, string>, origin = `http://localhost:${hostPort}`) =>
  `${origin}/?${new URLSearchParams(query).toString()}`;

async function open(context: BrowserContext, query: Record<string, string>) {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to|EvalError/i.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(pageUrl(query));
  return { page, problems };
}

/** Opens the panel with the launcher and asks; resolves when the answer has ended. */
async function ask(page: Page, text: string) {
  const input = page.getByRole('textbox', { name: /Your message|رسالتك/ });
  await input.fill(text);
  const answers = page.locator('switchboard-widget .msg.assistant:not(.greeting)');
  const before = await answers.count();
  await input.press('Enter');
  await poll(async () => {
    const busy = await page.locator('switchboard-widget .log').getAttribute('aria-busy');
    return busy === 'false' && (await answers.count()) > before;
  }).toBe(true);
}

async function expectAccessible(page: Page, name: string) {
  await page.evaluate(axe.source);
  const results = await page.evaluate<AxeResults>(
    "axe.run(document.querySelector('switchboard-widget'), { resultTypes: ['violations'] })",
  );
  const serious = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  expect(serious, `axe on ${name}`).toEqual([]);
}

/** Waits for a condition, however loaded the machine (no test asserts a duration). */
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 60_000, interval: 100 });

const snap = (page: Page, name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });

describe.skipIf(missing !== null)('the widget in Chromium', () => {
  it('on a page of another origin with hostile CSS: launcher, open, ask, a streamed answer with its citation, a reload keeps the history', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const { page, problems } = await open(context, { key: w.key });
    const launcher = page.getByRole('button', { name: 'Open chat' });
    await launcher.waitFor();
    const box = (await launcher.boundingBox())!;
    expect([Math.round(box.width), Math.round(box.height)]).toEqual([56, 56]);
    expect(box.x + box.width).toBeGreaterThan(1200);
    await expectAccessible(page, 'launcher');

    await launcher.click();
    const dialog = page.getByRole('dialog', { name: 'Acme help' });
    await dialog.waitFor();
    // The page's CSS did not reach inside: the widget's own font size and spacing.
    const style = await dialog.evaluate((element) => {
      const computed = getComputedStyle(element);
      return { fontSize: computed.fontSize, letterSpacing: computed.letterSpacing, display: computed.display };
    });
    expect(style).toEqual({ fontSize: '15px', letterSpacing: 'normal', display: 'flex' });
    await poll(() => dialog.getByText('Ask me anything').count()).toBe(1);
    expect(await dialog.locator('strong', { hasText: 'anything' }).count()).toBe(1);
    // Focus moved into the panel; Tab stays inside it.
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('SWITCHBOARD-WIDGET');
    for (let i = 0; i < 4; i++) await page.keyboard.press('Tab');
    const inside = await dialog.evaluate((element) =>
      element.contains((element.getRootNode() as unknown as { activeElement: typeof element }).activeElement),
    );
    expect(inside).toBe(true);

    await ask(page, QUESTION);
    const answer = dialog.locator('.msg.assistant').last();
    await poll(() => answer.textContent()).toMatch(/5 business days/);
    const citation = answer.getByRole('link', { name: 'Returns and refunds' });
    expect(await citation.getAttribute('href')).toBe(SOURCE_URL);
    expect(await citation.getAttribute('rel')).toBe('noopener noreferrer');
    await expectAccessible(page, 'answer');
    await snap(page, 'answer');
    if (process.env.WIDGET_SCREENSHOT) {
      await copyFile(path.join(ARTIFACTS, 'answer.png'), path.resolve(ROOT, process.env.WIDGET_SCREENSHOT));
    }
    // No cookies: the visitor is kept in localStorage.
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate<string>(`localStorage.getItem('switchboard:${w.key}')`)).toContain('token');

    await page.reload();
    await page.getByRole('button', { name: 'Open chat' }).click();
    await poll(() => page.locator('switchboard-widget .msg.user').allTextContents()).toEqual([
      expect.stringContaining(QUESTION),
    ]);
    await poll(() => page.locator('switchboard-widget .msg.assistant').last().textContent()).toMatch(/5 business days/);
    // Escape closes and gives the focus back to the launcher.
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Open chat' }).waitFor();
    expect(await page.getByRole('dialog').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a reload mid-answer resumes the same answer (Last-Event-ID), once', async () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i} `);
    openai.reply = () => ({ tokens: words, delayMs: 150 });
    const context = await browser.newContext();
    const { page } = await open(context, { key: slow.key });
    await page.getByRole('button', { name: 'Open chat' }).click();
    const input = page.getByRole('textbox', { name: 'Your message' });
    await input.fill('Tell me a long story');
    await input.press('Enter');
    await poll(() => page.locator('switchboard-widget .msg.assistant').last().textContent()).toMatch(/word1 /);
    const calls = openai.requests.length;
    await page.reload();
    await page.getByRole('button', { name: 'Open chat' }).click();
    await poll(() => page.locator('switchboard-widget .msg.assistant').last().textContent()).toMatch(/word39/);
    await page.locator('switchboard-widget .log[aria-busy="false"]').waitFor();
    const shown = (await page.locator('switchboard-widget .msg.assistant').last().textContent()) ?? '';
    expect(shown.match(/word0 /g)).toHaveLength(1);
    expect(shown).toContain(words.join('').trim());
    expect(await page.locator('switchboard-widget .msg.user').count()).toBe(1);
    // The reload started no new turn.
    expect(openai.requests.length).toBe(calls);
    await context.close();
  });

  it('Arabic: right to left, in Arabic, dark, accessible', async () => {
    const context = await browser.newContext();
    const { page } = await open(context, { key: arabic.key });
    await page.getByRole('button', { name: 'افتح المحادثة' }).click();
    const dialog = page.getByRole('dialog', { name: 'مساعدة' });
    await dialog.waitFor();
    const direction = await page
      .getByRole('textbox', { name: 'رسالتك' })
      .evaluate((element) => getComputedStyle(element).direction);
    expect(direction).toBe('rtl');
    expect(await dialog.evaluate((element) => element.closest('[dir]')?.getAttribute('lang'))).toBe('ar');
    await expectAccessible(page, 'arabic');
    await snap(page, 'arabic');
    await context.close();
  });

  it('a 360 × 640 screen: the panel fills it, nothing overflows, it still answers', async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 640 }, isMobile: true, hasTouch: true });
    const { page } = await open(context, { key: w.key });
    await page.getByRole('button', { name: 'Open chat' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    const box = (await dialog.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(360);
    expect(box.y + box.height).toBeLessThanOrEqual(640);
    await ask(page, QUESTION);
    const send = (await page.getByRole('button', { name: 'Send' }).boundingBox())!;
    expect(send.x + send.width).toBeLessThanOrEqual(360);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
    await expectAccessible(page, 'small screen');
    await snap(page, 'small-screen');
    await context.close();
  });

  it('full-page mode and a container element', async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
    const { page } = await open(context, { key: w.key, mode: 'page' });
    const region = page.getByRole('region', { name: 'Acme help' });
    await region.waitFor();
    expect(await page.getByRole('button', { name: 'Open chat' }).count()).toBe(0);
    const box = (await region.boundingBox())!;
    expect([Math.round(box.width), Math.round(box.height)]).toEqual([900, 700]);
    await page.goto(pageUrl({ key: w.key, mode: 'container' }));
    await page.getByRole('region', { name: 'Acme help' }).waitFor();
    expect(await page.locator('#help switchboard-widget').count()).toBe(1);
    await context.close();
  });

  it('a page of an origin the widget does not allow gets no widget', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const warned = new Promise<string>((resolve) =>
      page.on('console', (message) => {
        if (message.text().includes('Switchboard widget')) resolve(message.text());
      }),
    );
    await page.goto(pageUrl({ key: w.key }, `http://127.0.0.1:${hostPort}`));
    expect(await warned).toMatch(/not shown/);
    expect(await page.locator('switchboard-widget').count()).toBe(0);
    await context.close();
  });

  it('a page with a strict Content-Security-Policy: the widget works and nothing is refused', async () => {
    const context = await browser.newContext();
    const { page, problems } = await open(context, { key: w.key, csp: '1' });
    await page.getByRole('button', { name: 'Open chat' }).click();
    await ask(page, QUESTION);
    await poll(() => page.locator('switchboard-widget .msg.assistant').last().textContent()).toMatch(/5 business days/);
    // The widget's own stylesheet applies (a constructed sheet, not an inline style).
    const background = await page
      .locator('switchboard-widget header')
      .evaluate((element) => getComputedStyle(element).backgroundColor);
    expect(background).toBe('rgb(37, 99, 235)');
    expect(problems).toEqual([]);
    await context.close();
  });

  it("a person's reply from the inbox shows up in the widget, with the hand-off state", async () => {
    const context = await browser.newContext();
    const { page } = await open(context, { key: w.key });
    await page.getByRole('button', { name: 'Open chat' }).click();
    await ask(page, QUESTION);
    const stored = await page.evaluate<{ conversationId: string }>(
      `JSON.parse(localStorage.getItem('switchboard:${w.key}'))`,
    );
    const conversationId = stored.conversationId as string;
    const inbox = (action: string, payload?: object) =>
      t.app.inject({
        method: 'POST',
        url: `/api/public/conversations/${conversationId}/${action}`,
        headers: w.tenant.headers,
        ...(payload ? { payload } : {}),
      });
    expect((await inbox('takeover')).statusCode).toBe(200);
    await poll(() => page.getByRole('status').textContent()).toMatch(/A person is answering you/);
    const reply = await inbox('messages', { content: 'Hello, I am Sara from support. Your refund is on its way.' });
    expect(reply.statusCode, reply.body).toBe(201);
    const human = page.locator('switchboard-widget .msg.human');
    await poll(() => human.textContent()).toMatch(/Sara from support/);
    expect(await human.locator('.who').textContent()).toBe('Support');
    await snap(page, 'handoff');
    await context.close();
  });
});
