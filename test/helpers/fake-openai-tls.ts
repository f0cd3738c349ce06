/**
 * The fake OpenAI chat-completions provider of test/helpers/fake-openai.ts over TLS, as the
 * public providers are reached: HTTP/2 chosen by ALPN (node:http2's secure server, HTTP/1.1 for
 * a client that does not offer h2), or HTTP/1.1 alone (`http2: false`, node:https). Its
 * certificate is self-signed, made at the start by `openssl` for localhost and 127.0.0.1; a
 * client trusts it by its PEM (`cert`), or the file at `certFile` (NODE_EXTRA_CA_CERTS,
 * LLM_CA_FILE). The server counts its connections and, over HTTP/2, the streams of each and how
 * each stream ended (its RST_STREAM code; `aborted` counts replies whose client left before their end).
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2Session,
  type ServerHttp2Stream,
  type Settings,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openAiHandler, type FakeOpenAi } from './fake-openai.js';

export interface SelfSignedCertificate {
  key: string;
  cert: string;
  /** The certificate's and the key's files (removed by `remove`). */
  certFile: string;
  keyFile: string;
  remove(): void;
}

/** A self-signed P-256 certificate for localhost and 127.0.0.1, valid two days, made by openssl. */
export function selfSignedCertificate(): SelfSignedCertificate {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchboard-tls-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return {
    key: readFileSync(keyFile, 'utf8'),
    cert: readFileSync(certFile, 'utf8'),
    certFile,
    keyFile,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface FakeOpenAiTls extends FakeOpenAi {
  /** TLS connections accepted. */
  connections: number;
  /** HTTP/2 sessions, each with the streams it carried and the most it carried at once. */
  sessions: Array<{ streams: number; open: number; mostOpen: number; session: Http2Session }>;
  /** How each HTTP/2 stream ended: its RST_STREAM code (0: NO_ERROR, 2: INTERNAL_ERROR …). */
  streamCodes: number[];
  /** Resolves when `count` requests (streams or HTTP/1.1 requests) have arrived in all. */
  arrived(count: number): Promise<void>;
}

export interface FakeOpenAiTlsOptions {
  certificate: SelfSignedCertificate;
  /** false: HTTP/1.1 alone (no ALPN h2). Default true. */
  http2?: boolean;
  /** The server's HTTP/2 SETTINGS (maxConcurrentStreams: what one connection may carry). */
  settings?: Settings;
  reply?: FakeOpenAi['reply'];
}

export async function startFakeOpenAiTls(options: FakeOpenAiTlsOptions): Promise<FakeOpenAiTls> {
  const fake: FakeOpenAiTls = {
    url: '',
    requests: [],
    aborted: 0,
    reply: options.reply ?? (() => ({ tokens: ['Hello', ' there', '!'] })),
    close: async () => undefined,
    connections: 0,
    sessions: [],
    streamCodes: [],
    arrived: () => Promise.resolve(),
  };
  let requests = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const handler = openAiHandler(fake);
  const counted: typeof handler = (request, response) => {
    requests += 1;
    for (const waiter of waiters.filter((candidate) => candidate.count <= requests)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    return handler(request, response);
  };
  fake.arrived = (count) =>
    count <= requests ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }));
  const { key, cert } = options.certificate;
  const http2 = options.http2 ?? true;
  const server = http2
    ? createSecureServer({ key, cert, allowHTTP1: true, settings: options.settings ?? {} }, counted as never)
    : createHttpsServer({ key, cert }, counted);
  server.on('secureConnection', () => (fake.connections += 1));
  if (http2) {
    (server as Http2SecureServer).on('session', (session) => {
      const entry = { streams: 0, open: 0, mostOpen: 0, session };
      fake.sessions.push(entry);
      session.on('stream', (stream: ServerHttp2Stream) => {
        entry.streams += 1;
        entry.open += 1;
        entry.mostOpen = Math.max(entry.mostOpen, entry.open);
        stream.on('close', () => {
          entry.open -= 1;
          fake.streamCodes.push(stream.rstCode ?? 0);
        });
      });
    });
  }
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  fake.url = `https://localhost:${(server.address() as AddressInfo).port}/v1`;
  fake.close = async () => {
    for (const { session } of fake.sessions) session.destroy();
    if (!http2) (server as ReturnType<typeof createHttpsServer>).closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return fake;
}
