import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTenant, type TestTenant } from '../helpers/factories.js';
import { waitForTask } from './helpers.js';

/** A local site: robots rules, a sitemap, a cycle, an endless chain, redirects in and out. */
const page = (title: string, body: string, links: string[] = []) =>
  `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body}</p>${links
    .map((href) => `<a href="${href}">${href}</a>`)
    .join(' ')}</main></body></html>`;

let site: Server;
let other: Server;
let base: string;
let otherBase: string;
let t: TestApp;
/** What the site serves now: the test changes it between crawls. */
const state = { bVersion: 1, cExists: true, requests: [] as string[] };

function serve(request: IncomingMessage, response: ServerResponse) {
  const url = request.url ?? '/';
  state.requests.push(url);
  const html = (body: string, headers: Record<string, string> = {}) =>
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(body);
  if (url === '/robots.txt')
    return response
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`User-agent: *\nDisallow: /private\n\nSitemap: ${base}/sitemap.xml\n`);
  if (url === '/sitemap.xml')
    return response
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(
        `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
          ['/', '/orphan', '/private/secret'].map((path) => `<url><loc>${base}${path}</loc></url>`).join('') +
          `</urlset>`,
      );
  if (url === '/')
    return html(
      page('Help centre', 'Welcome to the help centre of the bicycle shop.', [
        '/a',
        '/b',
        '/private/hidden',
        '/skip-me',
        '/loop/1',
        '/to-metadata',
        '/to-other-port',
        '/moved',
        'http://example.com/elsewhere',
        'mailto:help@example.com',
      ]),
    );
  if (url === '/a') {
    // An ETag: the second crawl asks If-None-Match and gets a 304.
    if (request.headers['if-none-match'] === '"a-1"') return response.writeHead(304, { etag: '"a-1"' }).end();
    return html(page('Warranty', 'Frames carry a lifetime warranty; forks carry five years.', ['/', '/b#top']), {
      etag: '"a-1"',
    });
  }
  if (url === '/b')
    return html(
      page(
        'Delivery',
        state.bVersion === 1
          ? 'Bicycles are delivered within seven working days.'
          : 'Bicycles are now delivered within three working days.',
        ['/a', ...(state.cExists ? ['/c'] : [])],
      ),
    );
  if (url === '/c') {
    if (!state.cExists) return response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Gone</h1>');
    return html(page('Old promotion', 'A spring promotion on helmets, ten percent off.'));
  }
  if (url === '/orphan') return html(page('Opening hours', 'The workshop opens at nine on weekdays.'));
  if (url === '/skip-me') return html(page('Skipped', 'This page is excluded by a pattern.'));
  if (url.startsWith('/private')) return html(page('Private', 'robots.txt keeps crawlers out of here.'));
  if (url.startsWith('/loop/')) {
    const n = Number(url.slice('/loop/'.length));
    return html(page(`Loop ${n}`, `Page ${n} of an endless chain.`, [`/loop/${n + 1}`, '/loop/1']));
  }
  if (url === '/to-metadata') return response.writeHead(302, { location: 'http://169.254.169.254/latest/' }).end();
  if (url === '/to-other-port') return response.writeHead(302, { location: `${otherBase}/admin` }).end();
  if (url === '/moved') return response.writeHead(301, { location: '/orphan' }).end();
  response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
}

beforeAll(async () => {
  site = createServer(serve);
  other = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<p>admin</p>'));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  // Only the test site is allowed though it is private: every other private address is refused.
  t = await createTestApp({
    EMBEDDINGS_PROVIDER: 'none',
    WEBSITE_ALLOWED_HOSTS: new URL(base).host,
    WEBSITE_FETCH_TIMEOUT_MS: '5000',
    CRAWL_DELAY_MS: '0',
  });
});
afterAll(async () => {
  await t?.close();
  for (const server of [site, other]) {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  }
});

async function collectionOf(tenant: TestTenant) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/public/collections',
    headers: tenant.headers,
    payload: { name: `Site ${Math.random().toString(16).slice(2)}`, company_id: tenant.companyId },
  });
  return response.json().id as string;
}

function startCrawl(tenant: { headers: Record<string, string> }, body: Record<string, unknown>) {
  return t.app.inject({
    method: 'POST',
    url: '/api/public/documents/upload/crawl',
    headers: tenant.headers,
    payload: body,
  });
}

/** Runs the crawl in this test's container, then every page's ingestion; the crawl as the API shows it. */
async function runCrawl(tenant: TestTenant, crawlId: string) {
  await t.container.knowledge.crawl(crawlId.replace(/^crawl_/, ''));
  const crawl = (
    await t.app.inject({ method: 'GET', url: `/api/public/documents/crawl/${crawlId}`, headers: tenant.headers })
  ).json();
  return crawl;
}

async function documentsOf(tenant: TestTenant, collectionId: string) {
  const list = (
    await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/list',
      headers: tenant.headers,
      payload: { collection_id: collectionId, limit: 100 },
    })
  ).json();
  const documents = [];
  for (const doc of list.data as { task_id: string }[])
    documents.push(await waitForTask(t, tenant.headers, doc.task_id));
  const full = [];
  for (const task of documents) {
    full.push(
      (
        await t.app.inject({ method: 'GET', url: `/api/public/documents/${task.document_id}`, headers: tenant.headers })
      ).json() as { source_url: string; content: string; title: string; status: string; id: string },
    );
  }
  return new Map(full.map((doc) => [new URL(doc.source_url).pathname, doc]));
}

describe('website crawls', () => {
  it('crawls the site within robots.txt, the sitemap and the patterns, and re-crawls changes and vanished pages', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const collectionId = await collectionOf(tenant);
    const created = await startCrawl(tenant, {
      url: `${base}/`,
      collection_id: collectionId,
      max_pages: 30,
      max_depth: 3,
      exclude: ['/skip*'],
      categories: ['help'],
    });
    expect(created.statusCode).toBe(202);
    expect(created.json()).toMatchObject({ status: 'pending', progress: null, collection_id: collectionId });
    const crawlId = created.json().crawl_id as string;
    // The same crawl again while it is pending: a conflict.
    expect((await startCrawl(tenant, { url: `${base}/`, collection_id: collectionId })).statusCode).toBe(409);

    const first = await runCrawl(tenant, crawlId);
    expect(first.status, JSON.stringify(first)).toBe('completed');
    expect(first.progress).toMatchObject({ stage: 'removing' });
    const pages = await documentsOf(tenant, collectionId);
    // The cycle (/ ↔ /a ↔ /b) is crawled once; the endless chain stops at max_depth (3 links away);
    // /orphan is linked from nowhere but the sitemap (and /moved, a redirect to it, is not kept twice).
    expect([...pages.keys()].sort()).toEqual(
      ['/', '/a', '/b', '/c', '/loop/1', '/loop/2', '/loop/3', '/orphan'].sort(),
    );
    expect(first.pages).toMatchObject({ added: 8, updated: 0, removed: 0 });
    expect(pages.get('/b')!.content).toContain('seven working days');
    expect(pages.get('/a')!.title).toBe('Warranty');
    // robots.txt's Disallow and the exclude pattern: never fetched.
    expect(state.requests.filter((url) => url.startsWith('/private') || url === '/skip-me')).toEqual([]);
    // Redirects to a private address (the metadata service, another local port): refused.
    expect(first.failures).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ url: `${base}/to-metadata`, error: expect.stringMatching(/private or reserved/) }),
        expect.objectContaining({ url: `${base}/to-other-port`, error: expect.stringMatching(/private or reserved/) }),
      ]),
    );
    expect(first.pages.failed).toBe(2);

    const search = (
      await t.app.inject({
        method: 'POST',
        url: '/api/public/documents/search',
        headers: tenant.headers,
        payload: { query: 'how long does delivery take', search_method: {}, categories: ['help'] },
      })
    ).json();
    expect(search.results[0].document_id).toBe(pages.get('/b')!.id);

    // The site changes: /b's text, /c is gone (404, no longer linked).
    state.bVersion = 2;
    state.cExists = false;
    state.requests = [];
    const again = await startCrawl(tenant, { url: `${base}/`, collection_id: collectionId, exclude: ['/skip*'] });
    expect(again.statusCode).toBe(202);
    expect(again.json().crawl_id).toBe(crawlId);
    const second = await runCrawl(tenant, crawlId);
    expect(second.status, JSON.stringify(second)).toBe('completed');
    expect(second.pages).toMatchObject({ added: 0, updated: 1, removed: 1 });
    expect(second.pages.unchanged).toBe(6);
    expect(state.requests).not.toContain('/loop/4');
    const after = await documentsOf(tenant, collectionId);
    expect(after.has('/c')).toBe(false);
    expect(after.get('/b')!.content).toContain('three working days');
    // Unchanged pages keep their document; /a answered 304 to its ETag.
    expect(after.get('/a')!.id).toBe(pages.get('/a')!.id);
    expect(after.get('/orphan')!.id).toBe(pages.get('/orphan')!.id);
  });

  it('stops at max_pages on an endless chain', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const collectionId = await collectionOf(tenant);
    const created = (
      await startCrawl(tenant, { url: `${base}/loop/1`, collection_id: collectionId, max_pages: 3, max_depth: 10 })
    ).json();
    const crawl = await runCrawl(tenant, created.crawl_id);
    expect(crawl.status).toBe('completed');
    expect(crawl.progress).toMatchObject({ stage: 'removing' });
    expect(crawl.pages.added).toBe(3);
  });

  it('refuses bad input, private start URLs, other companies and members', async () => {
    const tenant = await createTenant(t.container, 'developer');
    const collectionId = await collectionOf(tenant);
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ url: `${base}/` }, /collection_id/],
      [{ url: 'ftp://example.com/', collection_id: collectionId }, /http or https/],
      [{ url: 'not a url', collection_id: collectionId }, /absolute/],
      [{ url: 'http://user:pw@example.com/', collection_id: collectionId }, /credentials/],
      [{ url: 'http://169.254.169.254/', collection_id: collectionId }, /private or reserved/],
      [{ url: `${base}/`, collection_id: collectionId, max_pages: 0 }, /max_pages/],
      [{ url: `${base}/`, collection_id: collectionId, max_pages: 5000 }, /max_pages/],
      [{ url: `${base}/`, collection_id: collectionId, max_depth: -1 }, /max_depth/],
      [{ url: `${base}/`, collection_id: collectionId, include: ['/a b'] }, /include/],
      [{ url: `${base}/`, collection_id: collectionId, exclude: 'x' }, /exclude/],
      [{ url: `${base}/`, collection_id: collectionId, company_id: tenant.companyId }, /company_id/],
    ];
    for (const [body, message] of bad) {
      const response = await startCrawl(tenant, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(response.json()), JSON.stringify(body)).toMatch(message);
    }
    const stranger = await createTenant(t.container, 'developer');
    expect((await startCrawl(stranger, { url: `${base}/`, collection_id: collectionId })).statusCode).toBe(404);
    const member = await tenant.member('member');
    expect((await startCrawl(member, { url: `${base}/`, collection_id: collectionId })).statusCode).toBe(403);
    const created = (await startCrawl(tenant, { url: `${base}/`, collection_id: collectionId })).json();
    const foreign = await t.app.inject({
      method: 'GET',
      url: `/api/public/documents/crawl/${created.crawl_id}`,
      headers: stranger.headers,
    });
    expect(foreign.statusCode).toBe(404);
  });
});
