/**
 * A webhook receiver on a loopback port that verifies every delivery with the official
 * Standard Webhooks library (`standardwebhooks`), as a company's own receiver would. Its answer
 * is programmable per request: a status, a Retry-After, a delay, a redirect, a huge body, or
 * holding the request until released.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Which of the receiver's secrets verified it (index into `secrets`), or -1 when none did. */
  verifiedWith: number;
  contentType: string | undefined;
}

export type Answer =
  | { status: number; retryAfter?: string; body?: string }
  | { redirect: string }
  | { hugeBytes: number }
  | { delayMs: number; status: number }
  | { hold: true };

export interface Receiver {
  url: string;
  received: Received[];
  /** Secrets to verify with (a rotation's old and new ones). */
  secrets: string[];
  /** How to answer the next requests (default 204). */
  answer: (request: Received) => Answer;
  /** Answers every held request with `status`. */
  release(status?: number): void;
  held(): number;
  /** Resolves once `count` requests have been received. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

function verifyWith(secrets: string[], body: string, headers: IncomingMessage['headers']): number {
  const required = {
    'webhook-id': String(headers['webhook-id'] ?? ''),
    'webhook-timestamp': String(headers['webhook-timestamp'] ?? ''),
    'webhook-signature': String(headers['webhook-signature'] ?? ''),
  };
  return secrets.findIndex((secret) => {
    try {
      new Webhook(secret).verify(body, required);
      return true;
    } catch {
      return false;
    }
  });
}

export async function startReceiver(secrets: string[] = []): Promise<Receiver> {
  const held: ServerResponse[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    secrets,
    answer: () => ({ status: 204 }),
    release(status = 200) {
      for (const response of held.splice(0)) if (!response.destroyed) response.writeHead(status).end();
    },
    held: () => held.length,
    waitFor(count, timeoutMs = 30_000) {
      if (receiver.received.length >= count) return Promise.resolve(receiver.received.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${receiver.received.length} of ${count} deliveries`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(receiver.received.slice());
          },
        });
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        receiver.release(503);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const entry: Received = {
      id: String(request.headers['webhook-id']),
      timestamp: String(request.headers['webhook-timestamp']),
      signature: String(request.headers['webhook-signature']),
      body,
      payload: JSON.parse(body) as Received['payload'],
      verifiedWith: verifyWith(receiver.secrets, body, request.headers),
      contentType: request.headers['content-type'],
    };
    receiver.received.push(entry);
    for (const waiter of waiters.filter((w) => receiver.received.length >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    const answer = receiver.answer(entry);
    if ('hold' in answer) return void held.push(response);
    if ('redirect' in answer) return void response.writeHead(307, { location: answer.redirect }).end();
    if ('hugeBytes' in answer) {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const block = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const pump = () => {
        while (sent < answer.hugeBytes) {
          sent += block.length;
          if (!response.write(block)) return void response.once('drain', pump);
        }
        response.end();
      };
      response.on('error', () => undefined);
      return pump();
    }
    if ('delayMs' in answer) {
      setTimeout(() => !response.destroyed && response.writeHead(answer.status).end(), answer.delayMs);
      return;
    }
    const headers: Record<string, string> = answer.retryAfter ? { 'retry-after': answer.retryAfter } : {};
    response.writeHead(answer.status, headers).end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
