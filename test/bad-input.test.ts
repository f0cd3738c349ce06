/**
 * Bad input answered at the root, in each family's error shape: NUL characters in any part of a
 * request, unbounded numbers, broken multipart framing, router errors (bad percent-encoding, long
 * path parameters) and HTTP-parser errors (oversized headers) on a listening server.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chatSetup, type ChatSetup } from './helpers/chat.js';

let t: TestApp;
let setup: ChatSetup;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', EMBEDDINGS_PROVIDER: 'none', STT_PROVIDER: 'none' });
  setup = await chatSetup(t.app, t.container);
});
afterAll(async () => t?.close());

const BOUNDARY = 'badinputboundary42';

/** A multipart body of text fields and files, optionally cut short. */
function form(
  parts: ({ name: string; value: string } | { name: string; filename: string; type: string; bytes: string })[],
  options: { truncate?: boolean } = {},
): string {
  const body =
    parts
      .map((part) =>
        'filename' in part
          ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\n` +
            `Content-Type: ${part.type}\r\n\r\n${part.bytes}\r\n`
          : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`,
      )
      .join('') + `--${BOUNDARY}--\r\n`;
  return options.truncate ? body.slice(0, Math.floor(body.length * 0.6)) : body;
}

const multipartType = `multipart/form-data; boundary=${BOUNDARY}`;
const pdf = { name: 'file', filename: 'a.pdf', type: 'application/pdf', bytes: '%PDF-1.4 not really' };

describe('NUL characters', () => {
  it('refuses a NUL in a JSON body field with 400 naming the field (deployments/companies shape)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: setup.tenant.headers,
      payload: { title: 'Sup\u0000port' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      detail: "Invalid field 'title': must not contain NUL characters",
      status_code: 400,
    });
  });

  it('refuses a NUL nested in a body and in a property name', async () => {
    const nested = await t.app.inject({
      method: 'PUT',
      url: '/api/public/companies',
      headers: setup.tenant.headers,
      payload: { name: 'Acme', settings: { greeting: ['hi', 'a\u0000'] } },
    });
    expect(nested.statusCode).toBe(400);
    expect(nested.json().detail).toMatch(/NUL characters/);
    const key = await t.app.inject({
      method: 'POST',
      url: '/api/public/collections',
      headers: setup.tenant.headers,
      payload: { name: 'x', 'a\u0000b': 1 },
    });
    expect(key.statusCode).toBe(400);
    expect(key.json()).toEqual({ detail: 'Invalid request body: a property name must not contain NUL characters' });
  });

  it('refuses %00 in a query parameter with 400 naming it (insights and chat shapes)', async () => {
    const insights = await t.app.inject({
      method: 'GET',
      url: '/team-notifications?notification_type=%00',
      headers: setup.tenant.headers,
    });
    expect(insights.statusCode).toBe(400);
    expect(insights.json()).toMatchObject({
      error: 'ValidationError',
      message: "Invalid query parameter 'notification_type': must not contain NUL characters",
      statusCode: 400,
      path: '/team-notifications',
    });
    const chat = await t.app.inject({
      method: 'GET',
      url: '/api/v1/chat/conversations?user=ab%00c',
      headers: setup.token,
    });
    expect(chat.statusCode).toBe(400);
    expect(chat.json()).toEqual({
      error: 'ValidationError',
      message: "Invalid query parameter 'user': must not contain NUL characters",
      statusCode: 400,
    });
  });

  it('refuses %00 in a path parameter with 400 naming it', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/public/documents/doc%00',
      headers: setup.tenant.headers,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: "Invalid path parameter 'documentId': must not contain NUL characters" });
  });

  it('refuses an unpaired surrogate, which PostgreSQL cannot store either', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/public/agents',
      headers: { ...setup.tenant.headers, 'content-type': 'application/json' },
      payload: '{"title":"x","welcome_message":"hi \\ud800"}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toBe(
      "Invalid field 'welcome_message': must not contain unpaired surrogates (invalid Unicode)",
    );
  });

  it('refuses a NUL in a chat form field (multipart) in the chat shape', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers: { ...setup.token, 'content-type': multipartType },
      payload: form([
        { name: 'agent_key', value: setup.agentKey },
        { name: 'query', value: 'hello\u0000' },
      ]),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'ValidationError',
      message: "Invalid field 'query': must not contain NUL characters",
      statusCode: 400,
    });
  });

  it('refuses a NUL escaped inside the JSON text of the chat history', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers: setup.token,
      payload: { agent_key: setup.agentKey, query: 'hi', messages: '[{"role":"user","content":"a\\u0000b"}]' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe("Invalid field 'messages[0].content': must not contain NUL characters");
  });

  it('refuses a NUL in a document upload field or file name in the documents shape', async () => {
    const title = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/file',
      headers: { ...setup.tenant.headers, 'content-type': multipartType },
      payload: form([{ name: 'document_title', value: 'Ti\u0000tle' }, pdf]),
    });
    expect(title.statusCode).toBe(400);
    expect(title.json()).toEqual({ detail: "Invalid field 'document_title': must not contain NUL characters" });
    const fileName = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/file',
      headers: { ...setup.tenant.headers, 'content-type': multipartType },
      payload: form([
        { name: 'document_title', value: 'Title' },
        { ...pdf, filename: 'a\u0000.pdf' },
      ]),
    });
    expect(fileName.statusCode).toBe(400);
    expect(fileName.json()).toEqual({ detail: "Invalid field 'file.name': must not contain NUL characters" });
    const categories = await t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/file',
      headers: { ...setup.tenant.headers, 'content-type': multipartType },
      payload: form([
        { name: 'document_title', value: 'Title' },
        { name: 'categories', value: '["faq","a\\u0000"]' },
        pdf,
      ]),
    });
    expect(categories.statusCode).toBe(400);
    expect(categories.json()).toEqual({ detail: "Invalid field 'categories.1': must not contain NUL characters" });
  });

  it('refuses nesting deeper than 32 levels', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers: { ...setup.token, 'content-type': 'application/json' },
      payload: `{"agent_key":"${setup.agentKey}","query":"hi","messages":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^Invalid field 'messages(\.0)+': must not be nested more than 32 levels deep$/);
  });
});

describe('numbers out of range', () => {
  it.each(['1e308', '99999999999999999999', 'Infinity', '-Infinity', '2147483648'])(
    'refuses skip=%s on list routes with 400 naming skip',
    async (skip) => {
      for (const [url, headers] of [
        ['/api/public/agents', setup.tenant.headers],
        ['/customer-support', setup.tenant.headers],
        ['/api/v1/chat/conversations', setup.token],
      ] as const) {
        const res = await t.app.inject({ method: 'GET', url: `${url}?skip=${skip}`, headers });
        expect(res.statusCode).toBe(400);
        expect(JSON.stringify(res.json())).toMatch(
          /Invalid query parameter 'skip': must be (at most 2147483647|a finite number|at least 0)/,
        );
      }
    },
  );

  it('still pages at the largest skip', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/public/agents?skip=2147483647',
      headers: setup.tenant.headers,
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('multipart framing', () => {
  const upload = (payload: string, contentType = multipartType) =>
    t.app.inject({
      method: 'POST',
      url: '/api/public/documents/upload/file',
      headers: { ...setup.tenant.headers, 'content-type': contentType },
      payload,
    });
  const chat = (payload: string, contentType = multipartType) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/chat/agent/chat',
      headers: { ...setup.token, 'content-type': contentType },
      payload,
    });
  const title = { name: 'document_title', value: 'Title' };

  it('answers a document upload without a boundary, cut short, or with two files with 400 {detail}', async () => {
    const cases = [
      await upload(form([title, pdf]), 'multipart/form-data'),
      await upload(form([title, pdf], { truncate: true })),
      await upload(form([title, pdf, { ...pdf, filename: 'b.pdf' }])),
      await upload(form([title, { ...pdf, name: 'other' }])),
    ];
    for (const res of cases) {
      expect(res.statusCode).toBe(400);
      expect(Object.keys(res.json())).toEqual(['detail']);
    }
    expect(cases[2]!.json().detail).toBe("Invalid form: only one file may be sent, in field 'file'");
    expect(cases[3]!.json().detail).toBe("Invalid field 'other': only 'file' may be a file");
  });

  it('answers a chat form without a boundary, cut short, or with two audio files with 400 in the chat shape', async () => {
    const audio = { name: 'audio', filename: 'a.wav', type: 'audio/wav', bytes: 'RIFF' };
    const agentKey = { name: 'agent_key', value: setup.agentKey };
    const cases = [
      await chat(form([agentKey, { name: 'query', value: 'hi' }]), 'multipart/form-data'),
      await chat(form([agentKey, { name: 'query', value: 'hi' }], { truncate: true })),
      await chat(form([agentKey, audio, audio])),
    ];
    for (const res of cases) {
      expect(res.statusCode).toBe(400);
      expect(Object.keys(res.json()).sort()).toEqual(['error', 'message', 'statusCode']);
    }
  });
});

describe('router errors', () => {
  it('answers a bad percent-encoding in the path with 400 in the family shape', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/customer-support/%zz',
      headers: { ...setup.tenant.headers, 'x-request-id': 'trace-bad-url-1' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['x-request-id']).toBe('trace-bad-url-1');
    expect(res.json()).toMatchObject({
      error: 'ValidationError',
      message: "Invalid path '/customer-support/%zz': not valid percent-encoding",
      statusCode: 400,
      path: '/customer-support/%zz',
    });
  });

  it('answers a path parameter over 100 characters with 400 in the family shape, without echoing it', async () => {
    const long = 'a'.repeat(5000);
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/public/deployments/${long}`,
      headers: setup.tenant.headers,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      detail: 'Invalid path parameter: longer than 100 characters',
      status_code: 400,
    });
  });

  it('quotes at most the start of an unknown long path in a 404', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/team-notifications/x/${'b'.repeat(5000)}`,
      headers: setup.tenant.headers,
    });
    expect(res.statusCode).toBe(404);
    expect(res.body.length).toBeLessThan(800);
    expect(res.json().message).toMatch(/^Route not found: GET \/team-notifications\/x\/b+…$/);
  });
});

describe('HTTP parser errors on a listening server', () => {
  /** Sends raw bytes and resolves with everything the server wrote before closing. */
  async function raw(request: string): Promise<string> {
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    return new Promise((resolve, reject) => {
      const socket = connect(address.port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', (error: NodeJS.ErrnoException) =>
        error.code === 'ECONNRESET' ? resolve(Buffer.concat(chunks).toString()) : reject(error),
      );
      socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
      socket.write(request);
    });
  }

  beforeAll(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('answers headers over 16 KB with 431 in the family shape', async () => {
    const answer = await raw(
      `GET /customer-support HTTP/1.1\r\nHost: x\r\nx-api-key: k\r\nx-padding: ${'p'.repeat(20_000)}\r\n\r\n`,
    );
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(body!)).toMatchObject({
      error: 'RequestHeaderFieldsTooLarge',
      statusCode: 431,
      path: '/customer-support',
    });
  });

  it('answers a malformed request with 400 in the family shape of its path', async () => {
    const answer = await raw(`GET /api/v1/chat/conversations HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n`);
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(body!)).toEqual({
      error: 'BadRequest',
      message: 'The request is not valid HTTP',
      statusCode: 400,
    });
  });
});
