/**
 * `GET /widget.js`: the built widget (`web/widget/` → `dist/web/widget.js`, esbuild at
 * `npm run build`). Read once, with its gzip form and a content version: `?v=<version>` (what
 * the snippet uses) is cached for a year as immutable; without it (or with an older version)
 * for five minutes, with an ETag so that a revalidation is a 304.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.js';

const YEAR_SECONDS = 365 * 24 * 3600;
const SHORT_SECONDS = 300;

interface Loaded {
  body: Buffer;
  gzip: Buffer;
  version: string;
  etag: string;
}

export function createWidgetScript(file: string) {
  let loaded: Loaded | null = null;
  const load = (): Loaded | null => {
    if (loaded) return loaded;
    let body: Buffer;
    try {
      body = readFileSync(file);
    } catch {
      return null;
    }
    const version = createHash('sha256').update(body).digest('hex').slice(0, 16);
    loaded = { body, gzip: gzipSync(body, { level: 9 }), version, etag: `"${version}"` };
    return loaded;
  };
  return {
    /** The script's content version (the snippet's `?v=`); "dev" until it is built. */
    get version(): string {
      return load()?.version ?? 'dev';
    },
    serve(request: FastifyRequest, reply: FastifyReply): void {
      const script = load();
      // Not a failure of the service: this build has no widget script (web/widget/ not built).
      if (!script)
        throw new AppError(404, 'The widget script is not in this build: build web/widget/ with npm run build');
      const { v } = request.query as { v?: string };
      const pinned = v === script.version;
      reply
        .header('content-type', 'text/javascript; charset=utf-8')
        .header(
          'cache-control',
          pinned ? `public, max-age=${YEAR_SECONDS}, immutable` : `public, max-age=${SHORT_SECONDS}`,
        )
        .header('etag', script.etag)
        .header('vary', 'Accept-Encoding')
        .header('cross-origin-resource-policy', 'cross-origin')
        .header('x-content-type-options', 'nosniff');
      const given = String(request.headers['if-none-match'] ?? '')
        .split(',')
        .map((tag) => tag.trim().replace(/^W\//, ''));
      if (given.includes(script.etag)) return void reply.code(304).send();
      const gzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
      if (gzip) reply.header('content-encoding', 'gzip');
      reply.send(gzip ? script.gzip : script.body);
    },
  };
}

export type WidgetScript = ReturnType<typeof createWidgetScript>;
