import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBlockedAddress } from '../../src/adapters/web/safe-fetcher.js';
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

async function documentCount(app: TestApp, headers: Record<string, string>) {
  const response = await app.app.inject({ method: 'POST', url: '/api/public/documents/list', headers, payload: {} });
  return response.json().total as number;
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

  it.each([
    ['loopback', () => `${base}/returns`, /127\.0\.0\.1.*private or reserved address \(loopback\)/],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/', /\(linkLocal\)/],
    ['a private address', () => 'http://10.0.0.1/', /\(private\)/],
    ['a shared (CGNAT) address', () => 'http://100.64.0.1/', /\(carrierGradeNat\)/],
    ['localhost', () => 'http://localhost/', /localhost: a private or reserved address/],
    ['a decimal loopback literal', () => 'http://2130706433/', /\(loopback\)/],
    ['IPv6 loopback', () => 'http://[::1]/', /\(loopback\)/],
    ['an IPv4-mapped address', () => 'http://[::ffff:127.0.0.1]/', /\(ipv4Mapped\)/],
    ['an IPv4-compatible address', () => 'http://[::7f00:1]/', /\(ipv4Compatible\)/],
    ['an IPv4-translated address', () => 'http://[::ffff:0:7f00:1]/', /\(rfc6145\)/],
    ['a 6to4 address', () => 'http://[2002:7f00:1::]/', /\(6to4\)/],
    ['a Teredo address', () => 'http://[2001::1]/', /\(teredo\)/],
    ['a NAT64 address', () => 'http://[64:ff9b::7f00:1]/', /\(rfc6052\)/],
    ['a unique local address', () => 'http://[fd00::1]/', /\(uniqueLocal\)/],
    ['a name that does not resolve', () => 'http://switchboard-upload-test.invalid/', /could not be resolved/],
  ])('refuses %s at upload with 400 naming url (unless ALLOW_PRIVATE_URLS)', async (_label, url, detail) => {
    const { tenant, response } = await uploadWebsite(strict, url());
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toMatch(/^url is refused: /);
    expect(response.json().detail).toMatch(detail);
    expect(await documentCount(strict, tenant.headers)).toBe(0);
  });

  it('refuses a name that resolves to a private address at upload', async () => {
    const { hostname } = await import('node:os');
    const { lookup } = await import('node:dns/promises');
    const name = hostname();
    const resolved = await lookup(name, { all: true }).catch(() => []);
    if (!resolved.some((entry) => isBlockedAddress(entry.address))) return; // this machine's name is public
    const { response } = await uploadWebsite(strict, `http://${name}/returns`);
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toMatch(/resolves to a private or reserved address/);
  });

  it.each([
    ['user and password', 'http://reader:s3cret@'],
    ['a user alone', 'http://reader@'],
  ])('refuses a URL with %s (400) and stores nothing', async (_label, prefix) => {
    const { tenant, response } = await uploadWebsite(t, `${prefix}${base.slice('http://'.length)}/returns`);
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toMatch(/url must not contain credentials/);
    expect(response.json().detail).not.toContain('s3cret');
    expect(await documentCount(t, tenant.headers)).toBe(0);
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
