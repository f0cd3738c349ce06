/**
 * A voice turn over HTTP (`POST /api/public/voice-agents/{id}/respond`): a builtin:kb main agent
 * on a one-article knowledge base answers through the chat turn, the offline espeak-ng engine
 * speaks it; speech to text through the fake speech peer (OpenAI protocol at STT_URL); a model
 * agent on the fake OpenAI peer for a long answer cut by a client that leaves.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { espeakSentenceCount } from '../src/adapters/espeak/espeak-tts.js';
import { decodeWav } from '../src/adapters/transformers/wav.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { parseMp3 } from './helpers/audio.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { fakeProviders, startFakeOpenAi, type FakeOpenAi } from './helpers/fake-openai.js';
import { startFakeSpeech, toneWav, type FakeSpeech } from './helpers/fake-speech.js';
import { multipart, uploadArticle, waitForTask } from './knowledge/helpers.js';

const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const ARTICLE = {
  document_title: 'Returns and refunds',
  content:
    'Q: How long do refunds take?\nA: Refunds are paid to the original card within 5 business days after we receive the item. ' +
    'You get an e-mail when the refund leaves. Sale items can be returned within 14 days in their original packaging.',
};
interface Received {
  type: string;
  data: Record<string, unknown>;
}

let t: TestApp;
let peer: FakeSpeech;
let llm: FakeOpenAi;
let base: string;
let tenant: TestTenant;
let agentId: string;

async function api(method: string, url: string, payload?: object, headers = tenant.headers) {
  return t.app.inject({ method: method as 'POST', url: `/api/public${url}`, headers, payload });
}

async function voiceAgent(fields: Record<string, unknown> = {}) {
  const res = await api('POST', '/voice-agents', {
    name: 'Front desk',
    voice_id: RACHEL,
    main_agent_id: agentId,
    active: true,
    ...fields,
  });
  expect(res.statusCode).toBe(201);
  return res.json<{ id: string }>().id;
}

/** Posts the form over HTTP and reads the event stream; `onEvent` returning true disconnects. */
async function stream(
  id: string,
  fields: Record<string, string>,
  options: {
    headers?: Record<string, string>;
    audio?: Uint8Array;
    onEvent?: (event: Received) => boolean;
  } = {},
): Promise<{ status: number; events: Received[] }> {
  const form = multipart(
    fields,
    options.audio ? { name: 'q.wav', type: 'audio/wav', bytes: options.audio, field: 'audio' } : undefined,
  );
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const events: Received[] = [];
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: Number(port),
        method: 'POST',
        path: `/api/public/voice-agents/${id}/respond`,
        headers: { ...(options.headers ?? tenant.headers), ...form.headers, accept: 'text/event-stream' },
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          resolve({ status: res.statusCode ?? 0, events });
          return;
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const type = /^event: (.*)$/m.exec(frame)?.[1];
            const data = /^data: (.*)$/m.exec(frame)?.[1];
            if (!type || !data) continue;
            const event = { type, data: JSON.parse(data) as Record<string, unknown> };
            events.push(event);
            if (options.onEvent?.(event)) {
              req.destroy();
              resolve({ status: 200, events });
              return;
            }
          }
        });
        res.on('end', () => resolve({ status: 200, events }));
        res.on('error', () => resolve({ status: 200, events }));
      },
    );
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.end(form.payload);
  });
}

beforeAll(async () => {
  peer = await startFakeSpeech();
  llm = await startFakeOpenAi(() => ({
    tokens: Array.from({ length: 40 }, (_, i) => `Warranty clause ${i + 1} covers part ${i + 100}. `),
    delayMs: 30,
  }));
  t = await createTestApp({
    LLM_PROVIDERS: fakeProviders(llm),
    EMBEDDINGS_PROVIDER: 'none',
    RATE_LIMIT_ENABLED: 'false',
    STT_URL: `${peer.url}/v1`,
    STT_API_KEY: peer.apiKey,
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  tenant = await createTenant(t.container);
  const agent = await api('POST', '/agents', { title: 'Helper', model: 'builtin:kb' });
  expect(agent.statusCode).toBe(201);
  agentId = agent.json<{ id: string }>().id;
  for (const article of [ARTICLE]) {
    const upload = await uploadArticle(t.app, tenant.headers, article);
    expect((await waitForTask(t, tenant.headers, upload.task_id)).status).toBe('completed');
  }
});
afterAll(async () => {
  await t?.close();
  await peer?.close();
  await llm?.close();
});

describe('a streamed voice turn', () => {
  it('streams start, text chunks, decodable MP3 audio per sentence, end — and records the turn', async () => {
    const id = await voiceAgent();
    const { status, events } = await stream(id, { text: 'How long do refunds take?', user: 'caller-1' });
    expect(status).toBe(200);
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('start');
    expect(types.at(-1)).toBe('end');
    expect(types).not.toContain('error');
    expect(types).not.toContain('transcribed_text');
    expect(types.indexOf('agent_text_chunk')).toBe(1);
    const audio = events.filter((event) => event.type === 'audio_chunk');
    expect(audio.length).toBeGreaterThan(1);
    audio.forEach((event, index) => {
      expect(event.data).toMatchObject({ index, format: 'mp3_44100_128', content_type: 'audio/mpeg' });
      const mp3 = parseMp3(Buffer.from(String(event.data.audio), 'base64'));
      expect(mp3.frames).toBeGreaterThan(0);
      expect([...mp3.sampleRates]).toEqual([44100]);
    });
    const text = events
      .filter((event) => event.type === 'agent_text_chunk')
      .map((event) => event.data.content)
      .join('');
    expect(text).toContain('Refunds are paid to the original card');
    const end = events.at(-1)!.data as { conversation_id: string; message_id: string };
    expect(end.conversation_id).toBe(events[0]!.data.conversation_id);
    expect(end.message_id).toMatch(/^[0-9a-f-]{36}$/);

    const conversation = await t.container.db
      .selectFrom('conversations')
      .select(['channel', 'agent_id', 'support_query_id', 'external_user_id', 'chat_token_id', 'deployment_id'])
      .where('id', '=', end.conversation_id)
      .executeTakeFirstOrThrow();
    expect(conversation).toMatchObject({
      channel: 'voice',
      agent_id: agentId,
      external_user_id: 'caller-1',
      chat_token_id: null,
      deployment_id: null,
    });
    expect(conversation.support_query_id).not.toBeNull();
    const messages = await t.container.db
      .selectFrom('conversation_messages')
      .select(['role', 'content'])
      .where('conversation_id', '=', end.conversation_id)
      .orderBy('seq')
      .execute();
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(messages[1]!.content).toBe(text);
  });

  it('continues a conversation and speaks WAV chunks the project reader decodes', async () => {
    const id = await voiceAgent({ output_format: 'wav_16000' });
    const first = await stream(id, { text: 'How long do refunds take?' });
    const conversationId = String(first.events[0]!.data.conversation_id);
    const { events } = await stream(id, { text: 'Can I return a sale item?', conversation_id: conversationId });
    expect(events[0]!.data.conversation_id).toBe(conversationId);
    const audio = events.filter((event) => event.type === 'audio_chunk');
    expect(audio.length).toBeGreaterThan(0);
    for (const event of audio) {
      expect(event.data.content_type).toBe('audio/wav');
      const samples = decodeWav(Buffer.from(String(event.data.audio), 'base64'));
      expect(samples.length).toBeGreaterThan(1600);
    }
  });

  it('transcribes audio first (transcribed_text before the answer)', async () => {
    const id = await voiceAgent();
    const wav = toneWav(31);
    peer.hear(wav, 'How long do refunds take?');
    const { events } = await stream(id, {}, { audio: wav });
    expect(events.map((event) => event.type).slice(0, 3)).toEqual(['start', 'transcribed_text', 'agent_text_chunk']);
    expect(events[1]!.data.content).toBe('How long do refunds take?');
    expect(events.some((event) => event.type === 'audio_chunk')).toBe(true);
    expect(events.at(-1)!.type).toBe('end');
  });

  it('a client that goes away stops the model call and synthesis', async () => {
    const model = await api('POST', '/agents', { title: 'Talker', model: 'fake:gpt-test' });
    expect(model.statusCode).toBe(201);
    const id = await voiceAgent({ output_format: 'pcm_16000', main_agent_id: model.json().id });
    const abortedBefore = llm.aborted;
    const before = espeakSentenceCount();
    const { events } = await stream(
      id,
      { text: 'Tell me everything about the warranty.' },
      { onEvent: (event) => event.type === 'audio_chunk' },
    );
    expect(events.at(-1)!.type).toBe('audio_chunk');
    for (let i = 0; i < 100 && llm.aborted === abortedBefore; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(llm.aborted).toBe(abortedBefore + 1);
    let last = -1;
    while (espeakSentenceCount() !== last) {
      last = espeakSentenceCount();
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    // The model had 40 sentences to say: far fewer were spoken.
    expect(espeakSentenceCount() - before).toBeLessThan(20);
    const conversationId = String(events[0]!.data.conversation_id);
    let answer: { finish_reason: string | null } | undefined;
    for (let i = 0; i < 100 && !answer; i++) {
      answer = await t.container.db
        .selectFrom('conversation_messages')
        .select(['finish_reason'])
        .where('conversation_id', '=', conversationId)
        .where('role', '=', 'assistant')
        .executeTakeFirst();
      if (!answer) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(answer?.finish_reason).toBe('aborted');
  });
});

describe('events on time, citations as data', () => {
  type Speak = TestApp['container']['voiceSpeech']['speak'];

  /** Runs `body` with the voice service's synthesis wrapped by `wrap` (the real synthesis underneath). */
  async function withSpeak<T>(wrap: (real: Speak) => Speak, body: () => Promise<T>): Promise<T> {
    const speech = t.container.voiceSpeech;
    const real = speech.speak;
    speech.speak = wrap(real);
    try {
      return await body();
    } finally {
      speech.speak = real;
    }
  }

  it('transcribed_text and the text of a sentence reach the socket while its synthesis is held', async () => {
    const id = await voiceAgent({ output_format: 'pcm_16000' });
    const wav = toneWav(41);
    peer.hear(wav, 'How long do refunds take?');
    const log: string[] = [];
    const requested: string[] = [];
    let release!: (seen: string) => void;
    const clientSawText = new Promise<string>((resolve) => (release = resolve));
    let transcribed = false;
    let text = '';
    const { events } = await withSpeak(
      (real) => async (voiceId, input, signal, scope, options) => {
        requested.push(input.text);
        const first = requested.length === 1;
        if (first) {
          log.push('synthesis of sentence 0 asked');
          // The hook: the first sentence is only synthesised once the client has read its text
          // (a generous fallback keeps a regression from hanging the run: the log then says so).
          const wait = new Promise<string>((resolve) =>
            setTimeout(() => resolve('gate: text not seen'), 60_000).unref(),
          );
          log.push(await Promise.race([clientSawText, wait]));
        }
        const audio = await real(voiceId, input, signal, scope, options);
        if (first) log.push('audio of sentence 0 produced');
        return audio;
      },
      () =>
        stream(
          id,
          {},
          {
            audio: wav,
            onEvent: (event) => {
              if (event.type === 'transcribed_text') transcribed = true;
              if (event.type === 'agent_text_chunk') text += String(event.data.content);
              if (event.type === 'audio_chunk' && event.data.index === 0) log.push('client read audio 0');
              if (transcribed && requested[0] && text.includes(requested[0])) release('gate: text seen by the client');
              return false;
            },
          },
        ),
    );
    expect(log).toEqual([
      'synthesis of sentence 0 asked',
      'gate: text seen by the client',
      'audio of sentence 0 produced',
      'client read audio 0',
    ]);
    expect(events.map((event) => event.type).slice(0, 3)).toEqual(['start', 'transcribed_text', 'agent_text_chunk']);
    const audio = events.filter((event) => event.type === 'audio_chunk');
    expect(audio[0]!.data.text).toBe(requested[0]);
    // Measured on the server from the moment the sentence's text was complete (here: held ≥ until the client read it).
    for (const event of audio) expect(event.data.text_to_audio_ms).toBeGreaterThan(0);
  }, 120_000);

  it('speaks the answer, never its sources line, and sends the citations as data', async () => {
    const id = await voiceAgent({ output_format: 'pcm_16000' });
    const spoken: string[] = [];
    const { events } = await withSpeak(
      (real) => async (voiceId, input, signal, scope, options) => {
        spoken.push(input.text);
        return real(voiceId, input, signal, scope, options);
      },
      () => stream(id, { text: 'How long do refunds take?' }),
    );
    expect(events.at(-1)!.type).toBe('end');
    expect(spoken.length).toBeGreaterThan(0);
    expect(spoken.join(' ')).toContain('Refunds are paid to the original card');
    for (const text of spoken) {
      expect(text).not.toMatch(/Sources/);
      expect(text).not.toContain(ARTICLE.document_title);
    }
    const audio = events.filter((event) => event.type === 'audio_chunk');
    // A sentence whose audio comes in two chunks carries its text with the first (the other: "").
    expect(audio.map((event) => event.data.text).filter(Boolean)).toEqual(spoken);
    const said = events
      .filter((event) => event.type === 'agent_text_chunk')
      .map((event) => String(event.data.content))
      .join('');
    expect(said).not.toContain('Sources:');
    const citations = events.find((event) => event.type === 'citations');
    expect(citations).toBeDefined();
    const list = citations!.data.citations as Array<Record<string, unknown>>;
    expect(list[0]).toMatchObject({ title: ARTICLE.document_title });
    expect(list[0]!.document_id).toMatch(/^doc_[0-9a-f-]{36}$/);
    expect(events.map((event) => event.type).indexOf('citations')).toBe(events.length - 2);
  });

  it("a model's citation markers are not read aloud", async () => {
    const model = await api('POST', '/agents', { title: 'Citer', model: 'fake:gpt-test' });
    const id = await voiceAgent({ output_format: 'pcm_16000', main_agent_id: model.json().id });
    const previous = llm.reply;
    llm.reply = () => ({
      tokens: ['Refunds take five days [1]. ', 'Sale items [1, 2] go back ', 'within two weeks [2].'],
    });
    const spoken: string[] = [];
    try {
      const { events } = await withSpeak(
        (real) => async (voiceId, input, signal, scope, options) => {
          spoken.push(input.text);
          return real(voiceId, input, signal, scope, options);
        },
        () => stream(id, { text: 'Refunds?' }),
      );
      expect(events.at(-1)!.type).toBe('end');
    } finally {
      llm.reply = previous;
    }
    expect(spoken).toEqual(['Refunds take five days.', 'Sale items go back within two weeks.']);
  });
});

describe('one audio body', () => {
  it('answers audio in the voice agent format with the texts in headers', async () => {
    const id = await voiceAgent();
    const wav = toneWav(32);
    peer.hear(wav, 'How long do refunds take? ✓');
    const form = multipart({}, { name: 'q.wav', type: 'audio/wav', bytes: wav, field: 'audio' });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/public/voice-agents/${id}/respond`,
      headers: { ...tenant.headers, ...form.headers },
      payload: form.payload,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('audio/mpeg');
    expect(parseMp3(res.rawPayload).durationS).toBeGreaterThan(1);
    expect(decodeURIComponent(String(res.headers['x-transcribed-text']))).toBe('How long do refunds take? ✓');
    expect(decodeURIComponent(String(res.headers['x-agent-text']))).toContain('Refunds are paid');
    expect(res.headers['x-conversation-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers['x-message-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('refusals', () => {
  const post = (id: string, fields: Record<string, string>, headers = tenant.headers) => {
    const form = multipart(fields);
    return t.app.inject({
      method: 'POST',
      url: `/api/public/voice-agents/${id}/respond`,
      headers: { ...headers, ...form.headers },
      payload: form.payload,
    });
  };

  it('409 for an inactive voice agent or one without a main agent, saying why', async () => {
    const inactive = await post(await voiceAgent({ active: false }), { text: 'hello' });
    expect(inactive.statusCode).toBe(409);
    expect(inactive.json().detail).toContain('inactive');
    const orphan = await post(await voiceAgent({ main_agent_id: null }), { text: 'hello' });
    expect(orphan.statusCode).toBe(409);
    expect(orphan.json().detail).toContain('no main agent');
  });

  it("404 for another company's voice agent", async () => {
    const id = await voiceAgent();
    const other = await createTenant(t.container);
    const res = await post(id, { text: 'hello' }, other.headers);
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toBe(`Voice agent not found: ${id}`);
  });

  it('400 for neither or both of audio and text, a blank text, an unknown field', async () => {
    const id = await voiceAgent();
    expect((await post(id, {})).statusCode).toBe(400);
    expect((await post(id, { text: '   ' })).statusCode).toBe(400);
    expect((await post(id, { text: 'x'.repeat(8001) })).statusCode).toBe(400);
    const unknown = await post(id, { text: 'hi', voice_id: 'x' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().detail).toContain("'voice_id'");
    const nul = await post(id, { text: 'hi\u0000there' });
    expect(nul.statusCode).toBe(400);
    expect(nul.json().detail).toBe("Invalid field 'text': must not contain NUL characters");
    const both = multipart({ text: 'hi' }, { name: 'q.wav', type: 'audio/wav', bytes: toneWav(33), field: 'audio' });
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/public/voice-agents/${id}/respond`,
      headers: { ...tenant.headers, ...both.headers },
      payload: both.payload,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toContain('not both');
    const json = await api('POST', `/voice-agents/${id}/respond`, { text: 'hi' });
    expect(json.statusCode).toBe(415);
  });

  it('maps speech-to-text refusals as /stt does: not audio → 415, no speech → 400', async () => {
    const id = await voiceAgent();
    const send = async (file: { name: string; type: string; bytes: Uint8Array }) => {
      const form = multipart({}, { ...file, field: 'audio' });
      return t.app.inject({
        method: 'POST',
        url: `/api/public/voice-agents/${id}/respond`,
        headers: { ...tenant.headers, ...form.headers, accept: 'text/event-stream' },
        payload: form.payload,
      });
    };
    const text = await send({ name: 'q.txt', type: 'text/plain', bytes: Buffer.from('hello') });
    expect(text.statusCode).toBe(415);
    expect(text.json().detail).toContain("Invalid field 'audio': the file is not audio");
    const typedAsWav = await send({ name: 'q.wav', type: 'audio/wav', bytes: Buffer.from('a text file, named .wav') });
    expect(typedAsWav.statusCode).toBe(415);
    const silence = await send({ name: 'q.wav', type: 'audio/wav', bytes: toneWav(34) });
    expect(silence.statusCode).toBe(400);
    expect(silence.json().detail).toContain('no speech');
  });

  it('lets a member (the lowest role) talk to the voice agent', async () => {
    const id = await voiceAgent();
    const member = await tenant.member('member');
    const res = await post(id, { text: 'How long do refunds take?' }, member.headers);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('audio/mpeg');
  });
});
