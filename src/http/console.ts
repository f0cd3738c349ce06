/**
 * The web console at /console: the files Vite built into dist/web/console, read once at start-up
 * and kept in memory with their gzip form, served with a strict Content-Security-Policy (scripts,
 * styles, media and connections from this origin only; no inline code; no framing). Hashed assets
 * are cached for good; any other path under /console answers the app's index.html, so the
 * console's own routes survive a reload (SPA fallback). Not part of the API: hidden from OpenAPI.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** dist/web/console of this checkout: two levels above this file, from src/http and dist/http alike. */
export const CONSOLE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/web/console');

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "media-src 'self' blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "frame-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The page the deployments page frames to preview the widget: the console alone may frame it;
 * the widget script may add its own styles (a Shadow DOM's <style>), nothing else loosens. */
export const PREVIEW_PAGE = 'preview.html';
export const PREVIEW_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

interface Asset {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
  etag: string;
}

function readAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (statSync(full).isFile()) {
        const body = readFileSync(full);
        const type = TYPES[path.extname(entry.name)] ?? 'application/octet-stream';
        const compressible = /^(text|application\/json|image\/svg)/.test(type) && body.length > 512;
        assets.set(path.relative(dir, full).split(path.sep).join('/'), {
          body,
          gzip: compressible ? gzipSync(body, { level: 9 }) : null,
          type,
          etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
        });
      }
    }
  };
  walk(dir);
  return assets;
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, immutable: boolean, preview = false) {
  reply
    .header('content-type', asset.type)
    .header('etag', asset.etag)
    .header('vary', 'accept-encoding')
    .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
    .header('content-security-policy', preview ? PREVIEW_CSP : CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', preview ? 'SAMEORIGIN' : 'DENY')
    .header('cross-origin-opener-policy', 'same-origin');
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  const acceptsGzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  if (asset.gzip && acceptsGzip) return reply.header('content-encoding', 'gzip').send(asset.gzip);
  return reply.send(asset.body);
}

export function registerConsole(app: FastifyInstance, dir: string = CONSOLE_DIR) {
  const assets = existsSync(path.join(dir, 'index.html')) ? readAssets(dir) : null;
  const hidden = { schema: { hide: true } };
  app.get('/console', hidden, async (_request, reply) => reply.redirect('/console/', 302));
  app.get<{ Params: { '*': string } }>('/console/*', hidden, async (request, reply) => {
    if (!assets) {
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built: run `npm run build` (npm ci builds it).\n');
    }
    const wanted = request.params['*'];
    const asset = assets.get(wanted);
    if (asset && wanted !== 'index.html')
      return send(request, reply, asset, wanted.startsWith('assets/'), wanted === PREVIEW_PAGE);
    if (wanted.startsWith('assets/')) return reply.code(404).type('text/plain; charset=utf-8').send('Not found\n');
    return send(request, reply, assets.get('index.html')!, false);
  });
}
