/**
 * `GET /widget.js`: the built widget (web/widget/, esbuild) as the snippet loads it — the
 * versioned URL cached for a year as immutable, the bare one for five minutes with an ETag (a
 * revalidation is a 304), gzip when asked, at most 40 KB gzipped, and no eval of any kind (a
 * strict Content-Security-Policy refuses it).
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWidget } from '../scripts/build-widget.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { widgetSetup, type WidgetSetup } from './helpers/widget.js';

let t: TestApp;
let w: WidgetSetup;

beforeAll(async () => {
  await buildWidget();
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none' });
  w = await widgetSetup(t.app, t.container);
});
afterAll(async () => t?.close());

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

describe('GET /widget.js', () => {
  it("serves the built script; the snippet's versioned URL is immutable for a year", async () => {
    const version = /widget\.js\?v=([0-9a-f]{16})"/.exec(w.snippet)?.[1];
    expect(version, w.snippet).toBeDefined();
    const pinned = await get(`/widget.js?v=${version}`);
    expect(pinned.statusCode).toBe(200);
    expect(pinned.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(pinned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(pinned.headers.etag).toBe(`"${version}"`);
    expect(pinned.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(pinned.body).toContain('switchboard-widget');
    expect(pinned.body).not.toMatch(/\beval\(|new Function\(|document\.write/);
  });

  it('without the version (or an old one): five minutes, revalidated by ETag with a 304', async () => {
    for (const url of ['/widget.js', '/widget.js?v=0000000000000000']) {
      const res = await get(url);
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      const again = await get(url, { 'if-none-match': String(res.headers.etag) });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
    }
  });

  it('gzip when asked: at most 40 KB on the wire, the same script', async () => {
    const plain = await get('/widget.js');
    const zipped = await get('/widget.js', { 'accept-encoding': 'gzip, br' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(zipped.rawPayload.length).toBeLessThanOrEqual(40 * 1024);
    expect(gunzipSync(zipped.rawPayload).toString('utf8')).toBe(plain.body);
  });

  it('refuses a bad version parameter with a 400 naming it', async () => {
    const res = await get(`/widget.js?v=${'x'.repeat(65)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/\bv\b/);
  });
});
