/**
 * A small REST API for custom_api tests, under `/api/v1` of a local server on port 0. The auth
 * scheme is chosen at start (`bearer`, `basic`, `api_key` in a named header, `none`) and checked
 * on every request (401 `{error: "unauthorized"}` with WWW-Authenticate; a good token without
 * the right tenant header: 403). Routes: `GET /api/v1/` (index), `GET /api/v1/orders/{id}`,
 * `GET /api/v1/orders?status=…`, `POST /api/v1/orders/{id}/notes` (JSON body), `DELETE
 * /api/v1/orders/{id}`, `GET /api/v1/status.txt` (text), `GET /api/v1/big` (a long JSON list).
 * Anything else is 404. Every request is recorded; scripted faults answer the next one.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export type CustomAuth =
  | { type: 'bearer'; token: string }
  | { type: 'basic'; user: string; password: string }
  | { type: 'api_key'; header: string; key: string }
  | { type: 'none' };

export interface CustomRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  json: unknown;
}

export interface FakeCustomApi {
  url: string;
  /** base_url: `<url>/api/v1`. */
  baseUrl: string;
  requests: CustomRequest[];
  /** Orders by id. */
  orders: Map<string, { id: string; status: string; notes: string[] }>;
  fail(fault: { status: number; body: unknown; headers?: Record<string, string> }): void;
  close(): Promise<void>;
}

function authorized(auth: CustomAuth, headers: IncomingHttpHeaders): boolean {
  switch (auth.type) {
    case 'none':
      return true;
    case 'bearer':
      return headers.authorization === `Bearer ${auth.token}`;
    case 'basic':
      return headers.authorization === `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`;
    case 'api_key':
      return headers[auth.header.toLowerCase()] === auth.key;
  }
}

export async function startFakeCustomApi(auth: CustomAuth, tenantHeader?: string): Promise<FakeCustomApi> {
  const requests: CustomRequest[] = [];
  const faults: { status: number; body: unknown; headers?: Record<string, string> }[] = [];
  const orders = new Map([
    ['A-100', { id: 'A-100', status: 'shipped', notes: [] as string[] }],
    ['A-101', { id: 'A-101', status: 'pending', notes: [] as string[] }],
  ]);
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, json });
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      const raw = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(status, {
        'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
        'content-length': Buffer.byteLength(raw),
        ...headers,
      });
      res.end(raw);
    };
    const fault = faults.shift();
    if (fault) return answer(fault.status, fault.body, fault.headers);
    if (!authorized(auth, req.headers)) {
      return answer(
        401,
        { error: 'unauthorized', message: 'missing or invalid credentials' },
        {
          'www-authenticate': auth.type === 'basic' ? 'Basic realm="api"' : 'Bearer',
        },
      );
    }
    if (tenantHeader && req.headers['x-tenant'] !== tenantHeader) {
      return answer(403, { error: 'forbidden', message: 'unknown tenant' });
    }
    const url = new URL(req.url ?? '/', 'http://peer');
    const path = url.pathname;
    if (path === '/api/v1' || path === '/api/v1/') return answer(200, { name: 'Orders API', version: 1 });
    if (path === '/api/v1/status.txt' && req.method === 'GET') return answer(200, 'all systems operational');
    if (path === '/api/v1/big' && req.method === 'GET') {
      return answer(200, { items: Array.from({ length: 2000 }, (_, i) => ({ i, label: `item number ${i}` })) });
    }
    if (path === '/api/v1/orders' && req.method === 'GET') {
      const status = url.searchParams.get('status');
      return answer(200, { orders: [...orders.values()].filter((order) => !status || order.status === status) });
    }
    const match = /^\/api\/v1\/orders\/([^/]+)(\/notes)?$/.exec(path);
    if (match) {
      const id = decodeURIComponent(match[1]!);
      const order = orders.get(id);
      if (!order) return answer(404, { error: 'not_found', message: `order ${id} not found` });
      if (!match[2] && req.method === 'GET') return answer(200, order);
      if (!match[2] && req.method === 'DELETE') {
        orders.delete(id);
        res.writeHead(204).end();
        return;
      }
      if (match[2] && req.method === 'POST') {
        if (!String(req.headers['content-type']).startsWith('application/json')) {
          return answer(415, { error: 'unsupported_media_type' });
        }
        const note = (json as { note?: unknown } | undefined)?.note;
        if (typeof note !== 'string' || !note) return answer(422, { error: 'invalid', message: 'note is required' });
        order.notes.push(note);
        return answer(201, { id: order.id, notes: order.notes });
      }
      return answer(405, { error: 'method_not_allowed' });
    }
    return answer(404, { error: 'not_found', message: `no route ${path}` });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}/api/v1`,
    requests,
    orders,
    fail: (fault) => faults.push(fault),
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
