/**
 * `/elevenlabs` driven by ElevenLabs' official SDK (`@elevenlabs/elevenlabs-js`), unmodified but
 * for `baseUrl` and the key: text to speech in several formats (offline espeak-ng), streamed,
 * voices (v1, v2 pages, one), models, speech to text through the speech peer, and the errors the
 * SDK raises with ElevenLabs' `{detail: {status, message}}`.
 */
import { ElevenLabsClient, ElevenLabsError } from '@elevenlabs/elevenlabs-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wavHeader } from '../src/adapters/tts/encoders.js';
import { parseMp3 } from './helpers/audio.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { startFakeSpeech, type FakeSpeech } from './helpers/fake-speech.js';

const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const SECOND = Buffer.concat([wavHeader(16000, 32000), Buffer.alloc(32000)]);

let t: TestApp;
let base: string;
let peer: FakeSpeech;
let tenant: TestTenant;

const client = (apiKey = tenant.headers['x-api-key']!) =>
  new ElevenLabsClient({ apiKey, baseUrl: `${base}/elevenlabs`, maxRetries: 0 });

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<{ bytes: Buffer; chunks: number }> {
  const parts: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) parts.push(chunk);
  return { bytes: Buffer.concat(parts), chunks: parts.length };
}

/** The error the SDK raised, with ElevenLabs' body. */
async function refusal(
  promise: Promise<unknown>,
): Promise<ElevenLabsError & { body: { detail: { status: string; message: string } } }> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ElevenLabsError);
  return error as never;
}

beforeAll(async () => {
  peer = await startFakeSpeech('sk-stt-key-0123456789');
  t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', STT_URL: `${peer.url}/v1`, STT_API_KEY: peer.apiKey });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  tenant = await createTenant(t.container, 'member');
});
afterAll(async () => {
  await t?.close();
  await peer?.close();
});

describe('text to speech with the ElevenLabs SDK', () => {
  it('converts to MP3 by default, with voice settings nested as the SDK sends them', async () => {
    const audio = await client().textToSpeech.convert(RACHEL, {
      text: 'Hello there. Thanks for calling us today.',
      modelId: 'eleven_multilingual_v2',
      voiceSettings: { stability: 0.5, similarityBoost: 0.7, speed: 1.1, useSpeakerBoost: true },
    });
    const { bytes } = await bytesOf(audio);
    const mp3 = parseMp3(bytes);
    expect([...mp3.sampleRates]).toEqual([44100]);
    expect(mp3.durationS).toBeGreaterThan(1);
  });

  it.each([
    ['pcm_16000', 16000],
    ['ulaw_8000', 8000],
  ] as const)('converts to %s, output_format in the query', async (outputFormat, rate) => {
    const audio = await client().textToSpeech.convert(RACHEL, { text: 'One moment please.', outputFormat });
    const { bytes } = await bytesOf(audio);
    const seconds = bytes.length / (outputFormat === 'pcm_16000' ? 2 : 1) / rate;
    expect(seconds).toBeGreaterThan(0.3);
    expect(seconds).toBeLessThan(5);
  });

  it('streams sentence by sentence', async () => {
    const audio = await client().textToSpeech.stream(RACHEL, {
      text: 'Your order has shipped. It should arrive on Monday. Anything else?',
      outputFormat: 'mp3_22050_32',
    });
    const { bytes, chunks } = await bytesOf(audio);
    expect(chunks).toBeGreaterThan(1);
    expect([...parseMp3(bytes).sampleRates]).toEqual([22050]);
  });

  it('serves mp3_44100_32 offline at 44.1 kHz and 32 kb/s', async () => {
    const audio = await client().textToSpeech.convert(RACHEL, { text: 'Hi there.', outputFormat: 'mp3_44100_32' });
    const mp3 = parseMp3((await bytesOf(audio)).bytes);
    expect([...mp3.sampleRates]).toEqual([44100]);
    expect([...mp3.bitrates]).toEqual([32]);
  });

  it('refuses in ElevenLabs’ shape: an unknown format (listing the served ones), an unknown voice, a bad key', async () => {
    // The SDK itself refuses formats outside its list (all of which are served): sent as it would.
    const format = await fetch(`${base}/elevenlabs/v1/text-to-speech/${RACHEL}?output_format=mp3_48000_320`, {
      method: 'POST',
      headers: { 'xi-api-key': tenant.headers['x-api-key']!, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hi.' }),
    });
    expect(format.status).toBe(400);
    const body = (await format.json()) as { detail: { status: string; message: string } };
    expect(body.detail.status).toBe('invalid_request');
    expect(body.detail.message).toContain('mp3_44100_128');
    const voice = await refusal(client().textToSpeech.convert('no-such-voice', { text: 'Hi.' }));
    expect(voice.statusCode).toBe(404);
    expect(voice.body.detail.message).toContain('no-such-voice');
    const key = await refusal(client('sk_not_a_key').voices.getAll());
    expect(key.statusCode).toBe(401);
    expect(key.body.detail.status).toBe('invalid_api_key');
    const blank = await refusal(client().textToSpeech.convert(RACHEL, { text: '   ' }));
    expect(blank.statusCode).toBe(400);
  });

  it('refuses unknown body fields and out-of-range settings, naming them', async () => {
    const response = await fetch(`${base}/elevenlabs/v1/text-to-speech/${RACHEL}`, {
      method: 'POST',
      headers: { 'xi-api-key': tenant.headers['x-api-key']!, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hi.', frobnicate: true }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { detail: { status: string; message: string } };
    expect(body.detail.message).toContain('frobnicate');
    const speed = await refusal(client().textToSpeech.convert(RACHEL, { text: 'Hi.', voiceSettings: { speed: 9 } }));
    expect(speed.body.detail.message).toContain('speed');
  });
});

describe('voices and models with the ElevenLabs SDK', () => {
  it('lists the catalog (v1), pages it (v2) and gets one voice', async () => {
    const all = await client().voices.getAll();
    expect(all.voices.map((voice) => voice.voiceId)).toContain(RACHEL);
    const first = await client().voices.search({ pageSize: 2 });
    expect(first.voices).toHaveLength(2);
    expect(first.hasMore).toBe(true);
    expect(first.totalCount).toBe(all.voices.length);
    const second = await client().voices.search({ pageSize: 2, nextPageToken: first.nextPageToken! });
    expect(second.voices[0]!.voiceId).not.toBe(first.voices[0]!.voiceId);
    const rachel = await client().voices.get(RACHEL);
    expect(rachel).toMatchObject({ voiceId: RACHEL, name: 'Rachel', category: 'premade' });
    const found = await client().voices.search({ search: 'rachel' });
    expect(found.voices.map((voice) => voice.voiceId)).toEqual([RACHEL]);
    expect((await refusal(client().voices.get('nobody'))).statusCode).toBe(404);
  });

  it('lists the engine in force as a model', async () => {
    const models = await client().models.list();
    expect(models).toHaveLength(1);
    expect(models[0]).toMatchObject({ modelId: 'espeak-ng', canDoTextToSpeech: true });
    expect(models[0]!.languages?.map((language) => language.languageId)).toEqual(expect.arrayContaining(['en', 'ar']));
  });
});

describe('speech to text with the ElevenLabs SDK', () => {
  it('transcribes through the configured engine', async () => {
    peer.hear(SECOND, 'Where is my order?', 'en');
    const transcript = await client().speechToText.convert({
      modelId: 'scribe_v1',
      file: new Blob([SECOND], { type: 'audio/wav' }),
      languageCode: 'en',
    });
    expect(transcript).toMatchObject({ text: 'Where is my order?' });
    const words = (transcript as { words: { text: string; type: string }[] }).words;
    expect(words.filter((word) => word.type === 'word').map((word) => word.text)).toEqual([
      'Where',
      'is',
      'my',
      'order?',
    ]);
  });

  it('refuses a missing model_id, a text file as audio, and a URL to fetch', async () => {
    const form = (fields: Record<string, string>, file?: Blob, name = 'q.wav') => {
      const body = new FormData();
      for (const [name, value] of Object.entries(fields)) body.set(name, value);
      if (file) body.set('file', file, name);
      return fetch(`${base}/elevenlabs/v1/speech-to-text`, {
        method: 'POST',
        headers: { 'xi-api-key': tenant.headers['x-api-key']! },
        body,
      });
    };
    const noModel = await form({}, new Blob([SECOND], { type: 'audio/wav' }));
    expect(noModel.status).toBe(400);
    expect(((await noModel.json()) as { detail: { message: string } }).detail.message).toContain('model_id');
    const text = await form({ model_id: 'scribe_v1' }, new Blob(['hello'], { type: 'text/plain' }), 'notes.txt');
    expect(text.status).toBe(415);
    const url = await form({ model_id: 'scribe_v1', cloud_storage_url: 'http://169.254.169.254/' });
    expect(url.status).toBe(400);
  });
});
