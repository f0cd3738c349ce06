/**
 * The transport's limits (src/http/limits.ts): a body that never arrives is answered 408 in the
 * family's shape and its connection closed; a declared body over the largest limit is refused
 * with 413 before any of it is sent; connections per address are bounded.
 */
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant } from './helpers/factories.js';

let t: TestApp;
let port: number;
let token: Record<string, string>;
beforeAll(async () => {
  t = await createTestApp({ HTTP_REQUEST_TIMEOUT_MS: '1500', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '4' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  token = (await (await createTenant(t.container)).chatToken()).headers;
});
afterAll(() => t?.close());

/** Sends `head` (and nothing more), then reads until the server closes the connection. */
function exchange(head: string): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1', () => socket.write(head));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' ? resolve({ text, closed: true }) : reject(error),
    );
    socket.on('close', () => resolve({ text, closed: true }));
  });
}

/** Sends the request line, then header after header in packets of their own, and reads the answer. */
function exchangeInPieces(parts: string[]): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket: Socket = connect(port, '127.0.0.1', async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        await new Promise((next) => setTimeout(next, 10));
      }
    });
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      ['ECONNRESET', 'EPIPE'].includes(error.code ?? '') ? resolve({ text, closed: true }) : reject(error),
    );
    socket.on('close', () => resolve({ text, closed: true }));
  });
}

const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

describe('HTTP limits', () => {
  it('answers a chat POST whose body never arrives with 408 in the chat shape and closes the connection', async () => {
    const { text, closed } = await exchange(
      `POST /api/v1/chat/agent/chat HTTP/1.1\r\nHost: x\r\nx-api-token: ${token['x-api-token']}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
    );
    expect(closed).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(bodyOf(text)).toEqual({ error: 'RequestTimeout', message: expect.any(String), statusCode: 408 });
  });

  it('refuses a declared 2 GB upload with 413 at once, in the documents shape, without reading it', async () => {
    const { text, closed } = await exchange(
      'POST /api/public/documents/upload HTTP/1.1\r\nHost: x\r\nx-api-key: sk_whatever\r\n' +
        'Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 2147483648\r\n\r\n',
    );
    expect(closed).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(bodyOf(text)).toEqual({ detail: expect.stringMatching(/content-length 2147483648/) });
  });

  it.each([
    [
      '/api/v1/chat/conversations',
      { error: 'RequestHeaderFieldsTooLarge', statusCode: 431 },
      ['error', 'message', 'statusCode'],
    ],
    [
      '/customer-support?limit=5',
      { error: 'RequestHeaderFieldsTooLarge', statusCode: 431, path: '/customer-support' },
      ['error', 'message', 'path', 'statusCode', 'timestamp'],
    ],
    ['/api/public/deployments', { status_code: 431 }, ['detail', 'status_code']],
    ['/api/public/integrations', {}, ['detail']],
  ])('answers headers over 16 KB sent in pieces to %s with 431 in that family shape', async (target, fields, keys) => {
    const headers = Array.from({ length: 8 }, (_, i) => `x-padding-${i}: ${'p'.repeat(3000)}\r\n`);
    const { text, closed } = await exchangeInPieces([`GET ${target} HTTP/1.1\r\nHost: x\r\n`, ...headers, '\r\n']);
    expect(closed).toBe(true);
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    const body = bodyOf(text);
    expect(body).toMatchObject(fields);
    expect(Object.keys(body).sort()).toEqual(keys);
  });

  it('bounds the connections one address holds open', async () => {
    const held = await Promise.all(
      Array.from(
        { length: 4 },
        () =>
          new Promise<Socket>((resolve) => {
            const socket = connect(port, '127.0.0.1', () => resolve(socket));
          }),
      ),
    );
    // The four held sockets are counted; the next one is closed by the server unanswered.
    const extra = await exchange('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(extra.text).toBe('');
    for (const socket of held) socket.destroy();
  });
});
