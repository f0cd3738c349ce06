/**
 * The fake OpenAI-compatible provider of the tests, in a process of its own (as a real provider
 * is): a benchmark's client then reaches it across processes, as the service does. The parent
 * sets the reply script over IPC: {tokens, delayMs}; the child answers {url} once listening and
 * {ok: true, connections} after each script (connections: accepted so far, TLS only).
 *
 * With FAKE_PROVIDER_TLS_CERT and FAKE_PROVIDER_TLS_KEY (PEM files) it serves HTTP/2 over TLS,
 * HTTP/1.1 to a client that does not offer h2, as the public providers do.
 */
import { readFileSync } from 'node:fs';
import { startFakeOpenAi, type FakeOpenAi, type FakeReply } from '../../test/helpers/fake-openai.js';
import { startFakeOpenAiTls, type FakeOpenAiTls } from '../../test/helpers/fake-openai-tls.js';

const certFile = process.env.FAKE_PROVIDER_TLS_CERT;
const keyFile = process.env.FAKE_PROVIDER_TLS_KEY;
const fake: FakeOpenAi | FakeOpenAiTls =
  certFile && keyFile
    ? await startFakeOpenAiTls({
        certificate: {
          cert: readFileSync(certFile, 'utf8'),
          key: readFileSync(keyFile, 'utf8'),
          certFile,
          keyFile,
          remove: () => undefined,
        },
        // As many streams a connection as the client asks for (its own limit applies).
        settings: { maxConcurrentStreams: 1000 },
      })
    : await startFakeOpenAi();
let script: FakeReply = { tokens: ['Hello'] };
fake.reply = () => script;
process.on('message', (message: FakeReply) => {
  script = message;
  process.send!({ ok: true, connections: 'connections' in fake ? fake.connections : undefined });
});
process.on('disconnect', () => void fake.close().then(() => process.exit(0)));
process.send!({ url: fake.url });
