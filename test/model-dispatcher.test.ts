/**
 * The dispatcher of model-provider calls (src/adapters/llm/model-dispatcher.ts) against a local
 * provider that speaks OpenAI's chat-completions stream over TLS: HTTP/2 chosen by ALPN, or
 * HTTP/1.1 alone. Turns go through the model client the service uses, over the dispatcher; the
 * provider's certificate is self-signed and trusted by its PEM (LLM_CA_FILE).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { constants as http2Constants } from 'node:http2';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient } from '../src/adapters/llm/llm-client.js';
import {
  createModelDispatcher,
  type ModelDispatcher,
  type ModelDispatcherOptions,
} from '../src/adapters/llm/model-dispatcher.js';
import { loadConfig } from '../src/config.js';
import { LlmError, type LanguageModels, type LlmStreamPart } from '../src/ports/llm.js';
import type { FakeReply } from './helpers/fake-openai.js';
import {
  selfSignedCertificate,
  startFakeOpenAiTls,
  type FakeOpenAiTls,
  type FakeOpenAiTlsOptions,
  type SelfSignedCertificate,
} from './helpers/fake-openai-tls.js';

let certificate: SelfSignedCertificate;
beforeAll(() => {
  certificate = selfSignedCertificate();
});
afterAll(() => certificate?.remove());

const opened: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function provider(options: Partial<FakeOpenAiTlsOptions> = {}): Promise<FakeOpenAiTls> {
  const fake = await startFakeOpenAiTls({ certificate, ...options });
  opened.push(fake);
  return fake;
}

function models(
  fake: FakeOpenAiTls,
  options: Partial<ModelDispatcherOptions> = {},
): { llm: LanguageModels; dispatcher: ModelDispatcher } {
  const dispatcher = createModelDispatcher({
    http2: true,
    maxStreamsPerConnection: 100,
    ca: certificate.cert,
    ...options,
  });
  opened.push({ close: () => dispatcher.destroy() });
  const llm = createLlmClient({
    providers: [{ name: 'p', type: 'openai', apiKey: 'sk-test', baseUrl: fake.url, models: [] }],
    dispatcher,
  });
  return { llm, dispatcher };
}

function turn(llm: LanguageModels, text: string, signal = new AbortController().signal) {
  return llm.stream({ model: 'p:m', messages: [{ role: 'user', content: text }], temperature: 0, signal });
}

async function collect(stream: AsyncIterable<LlmStreamPart>): Promise<LlmStreamPart[]> {
  const parts: LlmStreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

/** Each reply names its question; no reply starts before `gate` (every request has arrived). */
function echo(gate: Promise<unknown>): (request: { messages: Array<{ content: string }> }) => FakeReply {
  return (request) => ({
    tokens: ['re: ', request.messages.at(-1)!.content],
    holdBefore: { index: 0, until: gate },
  });
}

describe('model dispatcher', () => {
  it('carries many concurrent turns on one HTTP/2 connection', async () => {
    const fake = await provider();
    const { llm, dispatcher } = models(fake);
    const count = 60;
    fake.reply = echo(fake.arrived(count));
    const replies = await Promise.all(
      Array.from({ length: count }, (_, index) => collect(turn(llm, `q${index}`)).then((parts) => parts.join(''))),
    );
    expect(replies).toEqual(Array.from({ length: count }, (_, index) => `re: q${index}`));
    // Every reply was held until all 60 requests had arrived: all 60 were open at once, on one connection.
    expect(fake.connections).toBe(1);
    expect(fake.sessions.map((session) => [session.streams, session.mostOpen])).toEqual([[count, count]]);
    expect(dispatcher.state.protocols().get(new URL(fake.url).origin)).toBe('h2');
  });

  it("opens another connection when one carries the provider's limit of streams", async () => {
    const fake = await provider({ settings: { maxConcurrentStreams: 5 } });
    const { llm } = models(fake);
    const count = 12;
    fake.reply = echo(fake.arrived(count));
    const replies = await Promise.all(
      Array.from({ length: count }, (_, index) => collect(turn(llm, `q${index}`)).then((parts) => parts.join(''))),
    );
    expect(replies).toEqual(Array.from({ length: count }, (_, index) => `re: q${index}`));
    // None refused; no connection above the peer's limit; three connections at least.
    expect(fake.streamCodes.every((code) => code === 0)).toBe(true);
    expect(fake.sessions.every((session) => session.mostOpen <= 5)).toBe(true);
    expect(fake.sessions.length).toBeGreaterThanOrEqual(3);
    expect(fake.sessions.reduce((sum, session) => sum + session.streams, 0)).toBe(count);
  });

  it('falls back to one HTTP/1.1 connection per call when the provider does not offer h2', async () => {
    const fake = await provider({ http2: false });
    const { llm, dispatcher } = models(fake);
    const count = 6;
    fake.reply = echo(fake.arrived(count));
    const replies = await Promise.all(
      Array.from({ length: count }, (_, index) => collect(turn(llm, `q${index}`)).then((parts) => parts.join(''))),
    );
    expect(replies).toEqual(Array.from({ length: count }, (_, index) => `re: q${index}`));
    // Held replies: had any call waited behind another on a connection, none would have ended.
    expect(fake.connections).toBe(count);
    expect(dispatcher.state.protocols().get(new URL(fake.url).origin)).toBe('h1');
  });

  it('speaks HTTP/1.1 only when HTTP/2 is off', async () => {
    const fake = await provider();
    const { llm, dispatcher } = models(fake, { http2: false });
    expect(await collect(turn(llm, 'hi'))).toEqual(['Hello', ' there', '!']);
    expect(fake.sessions).toEqual([]);
    expect(dispatcher.state.connections()).toEqual({ h1: 1, h2: 0 });
  });

  it('turns a stream reset mid-reply into a retryable error, the rest of the connection unharmed', async () => {
    const fake = await provider();
    const { llm } = models(fake);
    fake.reply = (request) =>
      request.messages.at(-1)!.content === 'break' ? { tokens: ['a', 'b', 'c'], resetAfter: 2 } : { tokens: ['fine'] };
    const parts: LlmStreamPart[] = [];
    const failure = await (async () => {
      for await (const part of turn(llm, 'break')) parts.push(part);
    })().catch((error: unknown) => error);
    expect(parts).toEqual(['a', 'b']);
    expect(failure).toBeInstanceOf(LlmError);
    expect((failure as LlmError).retryable).toBe(true);
    expect(fake.streamCodes).toContain(http2Constants.NGHTTP2_INTERNAL_ERROR);
    expect(await collect(turn(llm, 'again'))).toEqual(['fine']);
    expect(fake.sessions).toHaveLength(1);
  });

  it('resets the HTTP/2 stream when a turn is aborted, and keeps the connection', async () => {
    const fake = await provider();
    const { llm } = models(fake);
    const hold = new Promise(() => undefined);
    fake.reply = (request) =>
      request.messages.at(-1)!.content === 'stop'
        ? { tokens: ['one', 'two'], holdBefore: { index: 1, until: hold } }
        : {};
    const controller = new AbortController();
    const parts: LlmStreamPart[] = [];
    for await (const part of turn(llm, 'stop', controller.signal)) {
      parts.push(part);
      controller.abort();
    }
    expect(parts).toEqual(['one']);
    const session = fake.sessions[0]!;
    // The client's RST_STREAM closed the stream before its reply ended (undici resets with NO_ERROR).
    await expect.poll(() => fake.aborted, { timeout: 30_000 }).toBe(1);
    expect(fake.streamCodes).toHaveLength(1);
    expect(session.open).toBe(0);
    fake.reply = () => ({ tokens: ['next'] });
    expect(await collect(turn(llm, 'next'))).toEqual(['next']);
    expect(fake.sessions).toHaveLength(1);
  });

  it("fails the replies in flight on a provider's GOAWAY with a retryable error; the next turn reconnects", async () => {
    // undici 7 destroys the connection on GOAWAY, graceful or not: why LLM_HTTP2 is off by default.
    const fake = await provider();
    const { llm } = models(fake);
    const count = 3;
    const hold = new Promise(() => undefined);
    fake.reply = () => ({ tokens: ['x', 'y'], holdBefore: { index: 1, until: hold } });
    const arrived = fake.arrived(count);
    const turns = Array.from({ length: count }, async () => {
      const parts: LlmStreamPart[] = [];
      try {
        for await (const part of turn(llm, 'q')) parts.push(part);
        return parts;
      } catch (error) {
        return error;
      }
    });
    await arrived;
    fake.sessions[0]!.session.goaway(http2Constants.NGHTTP2_NO_ERROR, 2 ** 31 - 1);
    for (const outcome of await Promise.all(turns)) {
      expect(outcome).toBeInstanceOf(LlmError);
      expect((outcome as LlmError).retryable).toBe(true);
    }
    fake.reply = () => ({ tokens: ['back'] });
    expect(await collect(turn(llm, 'again'))).toEqual(['back']);
    expect(fake.sessions).toHaveLength(2);
  });

  it('refuses a provider whose certificate it does not trust', async () => {
    const fake = await provider();
    const { llm } = models(fake, { ca: undefined });
    const failure = await collect(turn(llm, 'hi')).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LlmError);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('LLM_HTTP2, LLM_HTTP2_MAX_STREAMS and LLM_CA_FILE', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'llm-ca-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('offers HTTP/1.1 alone by default, 100 streams a connection with HTTP/2, and reads the CA file', () => {
    expect(loadConfig({}).chat.llmHttp).toEqual({ http2: false, maxStreamsPerConnection: 100, ca: undefined });
    const config = loadConfig({ LLM_HTTP2: 'true', LLM_HTTP2_MAX_STREAMS: '250', LLM_CA_FILE: certificate.certFile });
    expect(config.chat.llmHttp).toEqual({ http2: true, maxStreamsPerConnection: 250, ca: certificate.cert.trim() });
  });

  it.each([
    [{ LLM_HTTP2: 'maybe' }, /LLM_HTTP2 must be true or false/],
    [{ LLM_HTTP2_MAX_STREAMS: '0' }, /LLM_HTTP2_MAX_STREAMS must be between 1 and 1000/],
    [{ LLM_CA_FILE: '/nonexistent/ca.pem' }, /LLM_CA_FILE cannot be read \(ENOENT\)/],
  ])('refuses %o', (env: Record<string, string>, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it.each([
    ['just text\n', /LLM_CA_FILE holds no PEM certificate/],
    ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', /LLM_CA_FILE certificate 1 does not parse/],
  ])('refuses a CA file holding %j', (text, message) => {
    const file = path.join(dir, 'ca.pem');
    writeFileSync(file, text);
    expect(() => loadConfig({ LLM_CA_FILE: file })).toThrow(message);
  });
});
