/**
 * The console's static files at /console: the strict Content-Security-Policy and other headers,
 * the SPA fallback, gzip, caching of hashed assets, and a clear 503 when the console is not built.
 */
import Fastify from 'fastify';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, CONSOLE_DIR, PREVIEW_CSP, registerConsole } from '../src/http/console.js';
import { createTestApp, type TestApp } from './helpers/app.js';

const built = existsSync(path.join(CONSOLE_DIR, 'index.html'));
if (!built) console.log('console serving tests skipped: the console is not built (npm run build)');

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

describe.skipIf(!built)('the console at /console', () => {
  it('leads from / and /console to /console/', async () => {
    for (const url of ['/', '/console']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe('/console/');
    }
  });

  it('serves the app with a strict policy, and its routes fall back to it', async () => {
    const home = await t.app.inject({ method: 'GET', url: '/console/' });
    expect(home.statusCode).toBe(200);
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(home.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe');
    expect(home.headers['x-frame-options']).toBe('DENY');
    expect(home.headers['x-content-type-options']).toBe('nosniff');
    expect(home.headers['cache-control']).toBe('no-cache');
    expect(home.body).toContain('<div id="app"></div>');
    expect(home.body).not.toMatch(/<script>(?!<\/script>)|<style>|style="/);
    const deep = await t.app.inject({ method: 'GET', url: '/console/agents/42' });
    expect(deep.statusCode).toBe(200);
    expect(deep.body).toBe(home.body);
  });

  it('serves the widget preview framable by the console only, the console framing nothing else', async () => {
    expect(CONSOLE_CSP).toContain("frame-src 'self'");
    const preview = await t.app.inject({ method: 'GET', url: '/console/preview.html' });
    expect(preview.statusCode).toBe(200);
    expect(preview.headers['content-security-policy']).toBe(PREVIEW_CSP);
    expect(PREVIEW_CSP).toContain("frame-ancestors 'self'");
    expect(PREVIEW_CSP).toContain("script-src 'self';");
    expect(PREVIEW_CSP).toContain("connect-src 'self';");
    expect(preview.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(preview.body).toContain('id="preview-status"');
    expect(preview.body).not.toMatch(/<script>(?!<\/script>)|<style>|style="/);
    const home = await t.app.inject({ method: 'GET', url: '/console/' });
    expect(home.headers['x-frame-options']).toBe('DENY');
  });

  it('serves hashed assets gzipped and cached for good, with an ETag; unknown assets are 404', async () => {
    const home = await t.app.inject({ method: 'GET', url: '/console/' });
    const script = /src="\/console\/(assets\/[^"]+\.js)"/.exec(home.body)?.[1];
    expect(script).toBeDefined();
    const plain = await t.app.inject({ method: 'GET', url: `/console/${script}` });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const zipped = await t.app.inject({
      method: 'GET',
      url: `/console/${script}`,
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
    expect(gunzipSync(zipped.rawPayload).equals(plain.rawPayload)).toBe(true);
    const again = await t.app.inject({
      method: 'GET',
      url: `/console/${script}`,
      headers: { 'if-none-match': String(plain.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    expect((await t.app.inject({ method: 'GET', url: '/console/assets/nope.js' })).statusCode).toBe(404);
  });
});

describe('a console that is not built', () => {
  it('answers 503 saying how to build it', async () => {
    const app = Fastify();
    registerConsole(app, path.join(CONSOLE_DIR, 'no-such-folder'));
    const res = await app.inject({ method: 'GET', url: '/console/' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build');
    await app.close();
  });
});
