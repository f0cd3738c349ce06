/**
 * Audio turns: the `audio` of the chat form is transcribed by the configured speech-to-text
 * provider (a local peer speaking ElevenLabs' or OpenAI's protocol), the transcript is the user's
 * message, and `builtin:kb` answers it from the knowledge base. Failures of the provider map to
 * the chat error shape (or an `error` event) by their cause.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { chatSetup, type ChatSetup } from './helpers/chat.js';
import { startFakeSpeech, toneWav, type FakeSpeech } from './helpers/fake-speech.js';
import { readChatStream } from './helpers/sse-client.js';
import { uploadArticle, waitForTask } from './knowledge/helpers.js';

let peer: FakeSpeech;
let t: TestApp;
let base: string;
let setup: ChatSetup;

const REFUNDS =
  'Q: How long do refunds take?\nA: Refunds are paid to the original card within 5 business days after we receive the item.';

function audioFile(bytes: Uint8Array, name = 'question.wav', type = 'audio/wav') {
  return new File([bytes], name, { type });
}

async function postForm(path: string, fields: Record<string, string | File>, headers = setup.token) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') form.set(name, value);
    else form.set(name, value);
  }
  return fetch(`${base}${path}`, { method: 'POST', headers, body: form });
}

async function messagesOf(conversationId: string) {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/v1/chat/conversations/${conversationId}/messages`,
    headers: setup.token,
  });
  return res.json<{ data: { role: string; content: string }[] }>().data;
}

beforeAll(async () => {
  peer = await startFakeSpeech();
  t = await createTestApp({
    EMBEDDINGS_PROVIDER: 'none',
    ELEVENLABS_API_KEY: peer.apiKey,
    ELEVENLABS_BASE_URL: peer.url,
    STT_TIMEOUT_MS: '1000',
    // A stream whose client leaves is cancelled at once (not kept for a reconnect).
    CHAT_STREAM_RESUME_MS: '0',
  });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  setup = await chatSetup(t.app, t.container);
  const upload = await uploadArticle(t.app, setup.tenant.headers, {
    document_title: 'Returns and refunds',
    content: REFUNDS,
  });
  expect((await waitForTask(t, setup.tenant.headers, upload.task_id)).status).toBe('completed');
});
afterAll(async () => {
  await t?.close();
  await peer?.close();
});

describe('audio turns through ElevenLabs speech-to-text', () => {
  it('streams the transcript first, then answers it from the knowledge base', async () => {
    const audio = toneWav(1);
    peer.hear(audio, 'How long does a refund take?');
    peer.requests.length = 0;
    const events = await readChatStream(`${base}/api/v1/chat/agent/stream`, setup.token, {
      agent_key: setup.agentKey,
      audio: audioFile(audio),
    });
    expect(events.map((e) => e.type)).toEqual([
      'start',
      'transcribed_text',
      ...events.slice(2, -2).map(() => 'agent_text_chunk'),
      'chunk',
      'end',
    ]);
    expect(events[1]!.data.content).toBe('How long does a refund take?');
    const answer = events
      .filter((e) => e.type === 'agent_text_chunk')
      .map((e) => e.data.content)
      .join('');
    expect(answer).toContain('Refunds are paid to the original card within 5 business days');
    expect(events.at(-1)!.data.was_resolved).toBe(true);
    expect(peer.requests).toEqual([
      {
        protocol: 'elevenlabs',
        credential: peer.apiKey,
        fields: { model_id: 'scribe_v2', tag_audio_events: 'false' },
        file: { name: 'question.wav', type: 'audio/wav', size: audio.length },
      },
    ]);
    const stored = await messagesOf(events[0]!.data.conversation_id);
    expect(stored.map((m) => [m.role, m.content.slice(0, 28)])).toEqual([
      ['user', 'How long does a refund take?'],
      ['assistant', answer.slice(0, 28)],
    ]);
  });

  it('answers audio with a typed query as one message, without streaming', async () => {
    const audio = toneWav(2);
    peer.hear(audio, 'How long do refunds take');
    const res = await postForm('/api/v1/chat/agent/chat', {
      agent_key: setup.agentKey,
      audio: audioFile(audio, 'clip.mp3', 'audio/mpeg'),
      query: 'to my card?',
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { conversation_id: string; agent_response_text: string; was_resolved: boolean };
    expect(body.was_resolved).toBe(true);
    expect(body.agent_response_text).toContain('within 5 business days');
    expect((await messagesOf(body.conversation_id))[0]!.content).toBe('How long do refunds take\nto my card?');
    expect(peer.requests.at(-1)!.file).toEqual({ name: 'clip.mp3', type: 'audio/mpeg', size: audio.length });
  });

  it('refuses audio with no speech in it (400), and reports it in the stream as error then end', async () => {
    const silence = toneWav(3);
    const res = await postForm('/api/v1/chat/agent/chat', { agent_key: setup.agentKey, audio: audioFile(silence) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'ValidationError',
      message: 'The audio contained no speech',
      statusCode: 400,
    });
    const events = await readChatStream(`${base}/api/v1/chat/agent/stream`, setup.token, {
      agent_key: setup.agentKey,
      audio: audioFile(silence),
    });
    expect(events.map((e) => e.type)).toEqual(['start', 'transcribed_text', 'error', 'end']);
    expect(events[2]!.data.content).toMatch(/no speech/);
  });

  it.each([
    [
      422,
      'The uploaded file is not a valid audio file',
      400,
      "Invalid field 'audio': ElevenLabs answered 422: The uploaded file is not a valid audio file",
    ],
    [401, 'Invalid API key', 503, 'Speech-to-text failed: ElevenLabs answered 401: Invalid API key'],
    [500, 'Internal server error', 502, 'Speech-to-text failed: ElevenLabs answered 500: Internal server error'],
  ])('turns the provider answering %i into %#', async (status, message, expected, text) => {
    peer.script = () => ({ status, message });
    try {
      const res = await postForm('/api/v1/chat/agent/chat', {
        agent_key: setup.agentKey,
        audio: audioFile(toneWav(4)),
      });
      expect(res.status).toBe(expected);
      expect(((await res.json()) as { message: string }).message).toBe(text);
    } finally {
      peer.script = () => ({});
    }
  });

  it('gives up on a provider that does not answer within STT_TIMEOUT_MS (502), and stops the request', async () => {
    peer.script = () => ({ delayMs: 3000 });
    const aborted = peer.aborted;
    try {
      const events = await readChatStream(`${base}/api/v1/chat/agent/stream`, setup.token, {
        agent_key: setup.agentKey,
        audio: audioFile(toneWav(5)),
      });
      expect(events.map((e) => e.type)).toEqual(['start', 'error', 'end']);
      expect(events[1]!.data.content).toBe('Speech-to-text failed: ElevenLabs did not answer within 1000 ms');
      await expect.poll(() => peer.aborted).toBe(aborted + 1);
    } finally {
      peer.script = () => ({});
    }
  });

  it('stops the transcription when the client goes away', async () => {
    peer.script = () => ({ delayMs: 800 });
    const aborted = peer.aborted;
    const before = peer.requests.length;
    try {
      const controller = new AbortController();
      const form = new FormData();
      form.set('agent_key', setup.agentKey);
      form.set('audio', audioFile(toneWav(6)));
      const res = await fetch(`${base}/api/v1/chat/agent/stream`, {
        method: 'POST',
        headers: setup.token,
        body: form,
        signal: controller.signal,
      });
      expect(res.status).toBe(200);
      await expect.poll(() => peer.requests.length).toBe(before + 1);
      controller.abort();
      await expect.poll(() => peer.aborted).toBe(aborted + 1);
    } finally {
      peer.script = () => ({});
    }
  });

  it('checks the form before transcribing: a missing agent_key or an unknown agent costs no provider call', async () => {
    const before = peer.requests.length;
    const missing = await postForm('/api/v1/chat/agent/chat', { audio: audioFile(toneWav(7)) });
    expect(missing.status).toBe(400);
    const unknown = await postForm('/api/v1/chat/agent/chat', {
      agent_key: `agent:${crypto.randomUUID()}:web:us-east`,
      audio: audioFile(toneWav(7)),
    });
    expect(unknown.status).toBe(404);
    expect(peer.requests.length).toBe(before);
  });
});

describe('other speech-to-text engines', () => {
  it('speaks the OpenAI transcriptions protocol to STT_URL (Whisper servers)', async () => {
    const other = await createTestApp({
      EMBEDDINGS_PROVIDER: 'none',
      STT_URL: `${peer.url}/v1`,
      STT_API_KEY: peer.apiKey,
      STT_MODEL: 'whisper-large-v3',
    });
    try {
      const address = await other.app.listen({ port: 0, host: '127.0.0.1' });
      const mine = await chatSetup(other.app, other.container);
      const audio = toneWav(8);
      peer.hear(audio, 'Hello there');
      const form = new FormData();
      form.set('agent_key', mine.agentKey);
      form.set('audio', audioFile(audio));
      const res = await fetch(`${address}/api/v1/chat/agent/chat`, { method: 'POST', headers: mine.token, body: form });
      expect(res.status).toBe(200);
      expect(peer.requests.at(-1)).toEqual({
        protocol: 'openai',
        credential: peer.apiKey,
        fields: { model: 'whisper-large-v3', response_format: 'json' },
        file: { name: 'question.wav', type: 'audio/wav', size: audio.length },
      });
      const { conversation_id } = (await res.json()) as { conversation_id: string };
      const messages = await other.app.inject({
        method: 'GET',
        url: `/api/v1/chat/conversations/${conversation_id}/messages`,
        headers: mine.token,
      });
      expect(messages.json().data[0].content).toBe('Hello there');
    } finally {
      await other.close();
    }
  });

  it('with a local Whisper model: reads only WAV (415), refuses a broken WAV (400), says which model is missing (503)', async () => {
    const local = await createTestApp({
      EMBEDDINGS_PROVIDER: 'none',
      STT_PROVIDER: 'local',
      MODELS_DIR: '/nonexistent-models',
      STT_LOCAL_MODEL: 'onnx-community/whisper-base',
    });
    try {
      const address = await local.app.listen({ port: 0, host: '127.0.0.1' });
      const mine = await chatSetup(local.app, local.container);
      const send = async (file: File) => {
        const form = new FormData();
        form.set('agent_key', mine.agentKey);
        form.set('audio', file);
        const res = await fetch(`${address}/api/v1/chat/agent/chat`, {
          method: 'POST',
          headers: mine.token,
          body: form,
        });
        return { status: res.status, message: ((await res.json()) as { message: string }).message };
      };
      expect(
        await send(audioFile(new Uint8Array([0xff, 0xfb, 0x90, 0x44, 0, 0, 0, 0]), 'clip.mp3', 'audio/mpeg')),
      ).toEqual({
        status: 415,
        message:
          "Invalid field 'audio': The local speech-to-text model reads WAV audio only: send a WAV file, or configure ElevenLabs or an OpenAI-compatible speech-to-text server for other formats",
      });
      expect(await send(audioFile(toneWav(9).slice(0, 36)))).toEqual({
        status: 400,
        message: "Invalid field 'audio': The WAV file has no data chunk",
      });
      const missing = await send(audioFile(toneWav(9)));
      expect(missing.status).toBe(503);
      expect(missing.message).toMatch(
        /^Speech-to-text failed: Whisper model onnx-community\/whisper-base could not be loaded from MODELS_DIR: /,
      );
      expect(missing.message).not.toContain('/nonexistent-models');
    } finally {
      await local.close();
    }
  });

  it('without an engine: 503 naming what to configure; STT_PROVIDER=none says so', async () => {
    const none = await createTestApp({ EMBEDDINGS_PROVIDER: 'none', STT_PROVIDER: 'none' });
    try {
      const address = await none.app.listen({ port: 0, host: '127.0.0.1' });
      const mine = await chatSetup(none.app, none.container);
      const form = new FormData();
      form.set('agent_key', mine.agentKey);
      form.set('audio', audioFile(toneWav(10)));
      const res = await fetch(`${address}/api/v1/chat/agent/chat`, { method: 'POST', headers: mine.token, body: form });
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        error: 'ServiceUnavailable',
        message: 'Speech-to-text is not configured (STT_PROVIDER=none): audio cannot be sent',
        statusCode: 503,
      });
    } finally {
      await none.close();
    }
  });
});
