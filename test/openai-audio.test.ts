/**
 * OpenAI's audio routes with the official `openai` SDK unmodified (only `baseURL` and `apiKey`):
 * `audio.speech.create` with a catalog voice and with a voice agent, every response_format
 * decoded by ffmpeg (skipped, saying so, without it), the refusals in OpenAI's error shape; and
 * `audio.transcriptions.create` through the speech port, a local speech peer as the engine.
 */
import type { AddressInfo } from 'node:net';
import OpenAI, { AuthenticationError, BadRequestError, toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wavHeader } from '../src/adapters/tts/encoders.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { parseMp3 } from './helpers/audio.js';
import { startFakeSpeech, type FakeSpeech } from './helpers/fake-speech.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { envelope, correlation, ffmpegDecode, ffprobe, hasFfmpeg, NO_FFMPEG, rawInput } from './helpers/ffmpeg.js';

const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const TEXT = 'Your order has shipped. It should arrive on Monday.';
/** One second of 16 kHz silence as WAV. */
const SECOND = Buffer.concat([wavHeader(16000, 32000), Buffer.alloc(32000)]);

let peer: FakeSpeech;
let t: TestApp;
let base: string;
let tenant: TestTenant;
let other: TestTenant;
let apiKey: string;
let voiceAgentId: string;
let otherVoiceAgentId: string;

const client = (key = apiKey) => new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 });

async function createVoiceAgent(owner: TestTenant): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/public/voice-agents',
    headers: owner.headers,
    payload: { name: 'Front desk', voice_id: RACHEL, voice_speed: 150 },
  });
  expect(response.statusCode).toBe(201);
  return response.json<{ id: string }>().id;
}

async function refusal(promise: Promise<unknown>): Promise<BadRequestError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(BadRequestError);
  return error as BadRequestError;
}

beforeAll(async () => {
  peer = await startFakeSpeech('sk-stt-key-0123456789');
  t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', STT_URL: `${peer.url}/v1`, STT_API_KEY: peer.apiKey });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  tenant = await createTenant(t.container);
  other = await createTenant(t.container);
  apiKey = (await tenant.chatToken()).token;
  voiceAgentId = await createVoiceAgent(tenant);
  otherVoiceAgentId = await createVoiceAgent(other);
});

afterAll(async () => {
  await t.close();
  await peer.close();
});

const speak = async (body: Partial<OpenAI.Audio.SpeechCreateParams>) => {
  const response = await client().audio.speech.create({ model: 'tts-1', voice: RACHEL, input: TEXT, ...body });
  return { type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
};

describe('audio.speech.create', () => {
  it('speaks MP3 by default with a catalog voice', async () => {
    const { type, bytes } = await speak({});
    expect(type).toBe('audio/mpeg');
    const mp3 = parseMp3(bytes);
    expect([...mp3.sampleRates]).toEqual([44100]);
    expect(mp3.durationS).toBeGreaterThan(1);
  });

  it.skipIf(!hasFfmpeg)('serves mp3, opus, wav and pcm, each decoded by ffmpeg like the same text as WAV', async () => {
    if (!hasFfmpeg) console.warn(NO_FFMPEG);
    const wav = await speak({ response_format: 'wav' });
    expect(wav.type).toBe('audio/wav');
    expect(wav.bytes.readUInt32LE(4)).toBe(wav.bytes.length - 8);
    expect(wav.bytes.readUInt32LE(40)).toBe(wav.bytes.length - 44);
    const reference = await ffmpegDecode(wav.bytes);
    const cases = [
      ['mp3', 'audio/mpeg', 'mp3', 44100],
      ['opus', 'audio/ogg;codecs=opus', 'opus', 48000],
      ['pcm', 'audio/pcm;rate=24000', 'pcm_s16le', 24000],
    ] as const;
    for (const [format, contentType, codec, rate] of cases) {
      const { type, bytes } = await speak({ response_format: format });
      expect(type).toBe(contentType);
      const input = format === 'pcm' ? rawInput('pcm_24000') : [];
      const probed = await ffprobe(bytes, input);
      expect([probed.codec_name, Number(probed.sample_rate)]).toEqual([codec, rate]);
      const decoded = await ffmpegDecode(bytes, input);
      const seconds = decoded.length / rate;
      // A streamed MP3 (no info frame) keeps the encoder delay and the last padding: at most ≈ 51 ms.
      expect(Math.abs(seconds - reference.length / 24000), format).toBeLessThan(0.08);
      // Two syntheses of the same text share their loudness contour (10 ms RMS).
      expect(correlation(envelope(reference, 24000), envelope(decoded, rate)), format).toBeGreaterThan(0.8);
    }
  });

  it('speaks with a voice agent of the company, and speed changes the rate', async () => {
    const slow = await speak({ voice: voiceAgentId, response_format: 'pcm', speed: 1 });
    const fast = await speak({ voice: voiceAgentId, response_format: 'pcm', speed: 2 });
    expect(slow.type).toBe('audio/pcm;rate=24000');
    expect(fast.bytes.length).toBeLessThan(slow.bytes.length * 0.8);
  });

  it("refuses in OpenAI's shape: aac and flac, an unknown voice, another company's voice agent, bad fields", async () => {
    for (const format of ['aac', 'flac'] as const) {
      const error = await refusal(speak({ response_format: format }));
      expect(error.status).toBe(400);
      expect(error.param).toBe('response_format');
      expect(error.message).toContain('mp3, opus, wav, pcm');
    }
    for (const voice of ['no-such-voice', otherVoiceAgentId]) {
      const error = await refusal(speak({ voice }));
      expect(error.param).toBe('voice');
      expect(error.message).toContain(voice);
    }
    expect((await refusal(speak({ speed: 5 }))).status).toBe(400);
    expect((await refusal(speak({ input: '   ' }))).param).toBe('input');
    expect((await refusal(speak({ stream_format: 'sse' }))).param).toBe('stream_format');
    const unknown = await fetch(`${base}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', voice: RACHEL, input: 'Hi.', frobnicate: true }),
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain('frobnicate');
    const denied = await client('ct_not_a_token')
      .audio.speech.create({ model: 'tts-1', voice: RACHEL, input: 'Hi.' })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(denied).toBeInstanceOf(AuthenticationError);
  });
});

describe('audio.transcriptions.create', () => {
  it('transcribes through the speech port as json, text and verbose_json', async () => {
    peer.hear(SECOND, 'Where is my order?', 'en');
    const file = () => toFile(SECOND, 'question.wav', { type: 'audio/wav' });
    const json = await client().audio.transcriptions.create({ file: await file(), model: 'whisper-1' });
    expect(json.text).toBe('Where is my order?');
    const text = await client().audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'text',
    });
    expect(String(text).trim()).toBe('Where is my order?');
    const verbose = await client().audio.transcriptions.create({
      file: await file(),
      model: 'whisper-1',
      response_format: 'verbose_json',
      language: 'en',
    });
    expect(verbose).toMatchObject({ task: 'transcribe', text: 'Where is my order?', duration: 1 });
    expect(peer.requests.at(-1)!.file!.size).toBe(SECOND.length);
  });

  it("refuses in OpenAI's shape: srt, a file that is not audio, an unknown field", async () => {
    const srt = await refusal(
      client().audio.transcriptions.create({
        file: await toFile(SECOND, 'q.wav', { type: 'audio/wav' }),
        model: 'whisper-1',
        response_format: 'srt',
      }),
    );
    expect(srt.param).toBe('response_format');
    expect(srt.message).toContain('json, text, verbose_json');
    const notAudio = await client()
      .audio.transcriptions.create({
        file: await toFile(Buffer.from('hello'), 'notes.txt', { type: 'text/plain' }),
        model: 'whisper-1',
      })
      .then(
        () => null,
        (error: unknown) => error as { status: number },
      );
    expect(notAudio?.status).toBe(415);
    const form = new FormData();
    form.append('model', 'whisper-1');
    form.append('frobnicate', 'yes');
    form.append('file', new Blob([SECOND], { type: 'audio/wav' }), 'q.wav');
    const unknown = await fetch(`${base}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      body: form,
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { param: string } }).error.param).toBe('frobnicate');
  });
});
