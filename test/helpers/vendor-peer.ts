/**
 * A local HTTP server for connector tests, listening on port 0: it records every request (path,
 * headers, parsed JSON body) and answers through the vendor handler it was given, unless a fault
 * was scripted for the next request: a status with the vendor's error body and headers (429 with
 * Retry-After, 5xx), an answer that never comes, a huge body, or a redirect.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PeerRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown;
}

export interface PeerAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type PeerFault =
  | { kind: 'status'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'huge'; bytes: number }
  | { kind: 'redirect'; location: string };

export interface VendorPeer {
  url: string;
  requests: PeerRequest[];
  /** The next request gets this fault instead of the vendor's answer (queued in order). */
  fail(fault: PeerFault): void;
  close(): Promise<void>;
}

function send(response: ServerResponse, answer: PeerAnswer) {
  const text = JSON.stringify(answer.body);
  response.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...answer.headers,
  });
  response.end(text);
}

function sendHuge(response: ServerResponse, bytes: number) {
  // Chunked, without a content-length: the client must count what it reads.
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write('{"data":"');
  const chunk = 'x'.repeat(16 * 1024);
  let sent = 0;
  const pump = () => {
    while (sent < bytes) {
      sent += chunk.length;
      if (!response.write(chunk)) return response.once('drain', pump);
    }
    response.end('"}');
  };
  response.on('error', () => undefined);
  pump();
}

export async function startVendorPeer(handler: (request: PeerRequest) => PeerAnswer): Promise<VendorPeer> {
  const requests: PeerRequest[] = [];
  const faults: PeerFault[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    const request = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, json };
    requests.push(request);
    const fault = faults.shift();
    if (!fault) return send(res, handler(request));
    switch (fault.kind) {
      case 'status':
        return send(res, fault);
      case 'hang':
        return; // never answers; closeAllConnections() ends it
      case 'huge':
        return sendHuge(res, fault.bytes);
      case 'redirect':
        res.writeHead(302, { location: fault.location, 'content-length': 0 });
        return res.end();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    fail: (fault) => faults.push(fault),
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
