import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant } from '../helpers/factories.js';
import { waitForTask } from './helpers.js';

const ARTICLE = `<!doctype html><html><head><title>Returns | Shop</title></head><body>
<nav><a href="/">Home</a> <a href="/cart">Cart</a></nav>
<article><h1>How returns work</h1>
<p>You can return any unused item within thirty days of delivery. Print the prepaid label from your account page and drop the parcel at any post office.</p>
<p>Refunds reach your original payment method within five business days after the warehouse inspects the parcel. Gift cards are refunded as store credit.</p>
<p>Items marked final sale cannot be returned. Opened cosmetics and underwear are excluded for hygiene reasons.</p>
</article><footer>© Shop</footer><script>window.tracking = true;</script></body></html>`;

let site: Server;
let base: string;
let t: TestApp;
let strict: TestApp;

beforeAll(async () => {
  site = createServer((request, response) => {
    switch (request.url) {
      case '/returns':
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE);
        return;
      case '/moved':
        response.writeHead(302, { location: '/returns' }).end();
        return;
      case '/loop':
        response.writeHead(302, { location: '/loop' }).end();
        return;
      case '/image':
        response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(100));
        return;
      case '/huge':
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end(`<p>${'a'.repeat(2 * 1024 * 1024)}</p>`);
        return;
      case '/slow':
        setTimeout(() => response.writeHead(200, { 'content-type': 'text/html' }).end('<p>late</p>'), 3000);
        return;
      default:
        response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    }
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  t = await createTestApp({
    EMBEDDINGS_PROVIDER: 'none',
    ALLOW_PRIVATE_URLS: 'true',
    WEBSITE_FETCH_TIMEOUT_MS: '1000',
    WEBSITE_MAX_MB: '1',
  });
  strict = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
});
afterAll(async () => {
  await t?.close();
  await strict?.close();
  site?.closeAllConnections();
  await new Promise((resolve) => site?.close(resolve));
});

async function uploadWebsite(app: TestApp, url: string) {
  const tenant = await createTenant(app.container, 'developer');
  const response = await app.app.inject({
    method: 'POST',
    url: '/api/public/documents/upload/website',
    headers: tenant.headers,
    payload: { url, document_title: 'Returns page', categories: ['policies'] },
  });
  return { tenant, response };
}

describe('website uploads', () => {
  it('fetches the page, keeps the readable article and drops navigation and scripts', async () => {
    const { tenant, response } = await uploadWebsite(t, `${base}/moved`);
    expect(response.statusCode).toBe(202);
    const task = await waitForTask(t, tenant.headers, response.json().task_id);
    expect(task).toMatchObject({ status: 'completed', error: null });
    const doc = (
      await t.app.inject({ method: 'GET', url: `/api/public/documents/${task.document_id}`, headers: tenant.headers })
    ).json();
    expect(doc).toMatchObject({
      source_type: 'website',
      source_url: `${base}/moved`,
      title: 'Returns page',
      language: 'en',
    });
    expect(doc.content).toContain('Refunds reach your original payment method');
    expect(doc.content).not.toContain('window.tracking');
    const search = (
      await t.app.inject({
        method: 'POST',
        url: '/api/public/documents/search',
        headers: tenant.headers,
        payload: { query: 'when do refunds arrive', search_method: {}, categories: [] },
      })
    ).json();
    expect(search.results[0].document_id).toBe(task.document_id);
  });

  it.each([
    ['/missing', /HTTP 404/],
    ['/image', /not HTML or text.*image\/png/],
    ['/huge', /larger than/],
    ['/loop', /Too many redirects/],
    ['/slow', /timed out/],
  ])('fails the task for %s with a reason', async (path, error) => {
    const { tenant, response } = await uploadWebsite(t, `${base}${path}`);
    const task = await waitForTask(t, tenant.headers, response.json().task_id);
    expect(task.status).toBe('failed');
    expect(task.error).toMatch(error);
  });

  it('refuses loopback, private and metadata addresses unless ALLOW_PRIVATE_URLS', async () => {
    for (const url of [
      `${base}/returns`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://localhost/',
    ]) {
      const { tenant, response } = await uploadWebsite(strict, url);
      expect(response.statusCode).toBe(202);
      const task = await waitForTask(strict, tenant.headers, response.json().task_id);
      expect(task.status).toBe('failed');
      expect(task.error).toMatch(/private or reserved/);
    }
  });

  it.each([
    ['ftp://example.com/a', /http or https/],
    ['not a url', /absolute http\(s\) URL/],
  ])('rejects %s with 400', async (url, detail) => {
    const { response } = await uploadWebsite(t, url);
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toMatch(detail);
  });
});
