/**
 * Limits of the HTTP transport, so that no client can hold the service: the whole request
 * (headers and body) must arrive within `requestTimeoutMs` (else Node answers 408 in the
 * family's shape, src/http/transport-errors.ts, and closes the connection; a response being
 * streamed, SSE included, is not a request still arriving, so it is not cut), the headers within
 * `headersTimeoutMs`, a declared `content-length` above the largest body any route takes is
 * refused with 413 before a byte of it is read, and one address holds at most
 * `maxConnectionsPerAddress` connections at once (0: no bound).
 */
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { AppError } from './errors.js';
import { rememberTarget, watchRequestLines } from './transport-errors.js';

export interface HttpLimits {
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  maxConnectionsPerAddress: number;
  /** The largest body any route accepts (uploads included). */
  maxBodyBytes: number;
}

/** Fastify's options for the limits Node's HTTP server enforces. */
export function serverTimeouts(limits: HttpLimits) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
      // How often Node looks for requests past their time (its default, 30 s, would let one linger).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(limits.requestTimeoutMs / 4))),
    },
  };
}

/** Refuses a declared body over the largest limit at once, and bounds connections per address. */
export function registerHttpLimits(app: FastifyInstance, limits: HttpLimits): void {
  app.addHook('onRequest', async (request, reply) => {
    rememberTarget(request.raw.socket, request.url);
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > limits.maxBodyBytes) {
      // The body is never read: the connection closes after the answer.
      reply.header('connection', 'close');
      throw new AppError(413, `The body is larger than ${limits.maxBodyBytes} bytes (content-length ${declared})`);
    }
  });
  watchRequestLines(app.server);
  if (limits.maxConnectionsPerAddress > 0) boundConnections(app.server, limits.maxConnectionsPerAddress);
}

function boundConnections(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}
