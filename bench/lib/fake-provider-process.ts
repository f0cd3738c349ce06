/**
 * The fake OpenAI-compatible provider of the tests, in a process of its own (as a real provider
 * is): a benchmark's client then reaches it across processes, as the service does. The parent
 * sets the reply script over IPC: {tokens, delayMs}; the child answers {url} once listening and
 * {ok: true} after each script.
 */
import { startFakeOpenAi, type FakeReply } from '../../test/helpers/fake-openai.js';

const fake = await startFakeOpenAi();
let script: FakeReply = { tokens: ['Hello'] };
fake.reply = () => script;
process.on('message', (message: FakeReply) => {
  script = message;
  process.send!({ ok: true });
});
process.on('disconnect', () => void fake.close().then(() => process.exit(0)));
process.send!({ url: fake.url });
