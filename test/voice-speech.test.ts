/**
 * The voice agents family's speech routes over HTTP: text to speech with the offline engine
 * (espeak-ng, formats decoded) and through the ElevenLabs and OpenAI-protocol peers, speech to
 * text through the speech port, every bad input, and a client that goes away mid-synthesis.
 */
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { espeakSentenceCount } from '../src/adapters/espeak/espeak-tts.js';
import { wavHeader } from '../src/adapters/tts/encoders.js';
import { createVoiceSpeechService } from '../src/modules/voice-agents/index.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { parseMp3 } from './helpers/audio.js';
import { startFakeElevenLabsTts } from './helpers/fake-elevenlabs-tts.js';
import { startFakeOpenAiSpeech } from './helpers/fake-openai-speech.js';
import { startFakeSpeech, type FakeSpeech } from './helpers/fake-speech.js';
import { createTenant, type TestTenant } from './helpers/factories.js';

const TTS = (voice: string, vendor = 'vendor') => `/api/public/voice-agents/${vendor}/voices/${voice}/tts`;
const STT = '/api/public/voice-agents/stt';
const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const LAYLA = 'sb-ar-msa-layla';

function form(file?: { name: string; type: string; bytes: Buffer }, fields: Record<string, string> = {}) {
  const boundary = 'voiceboundary';
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${file.name}"\r\ncontent-type: ${file.type}\r\n\r\n`,
      ),
      file.bytes,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** One second of 16 kHz silence as WAV. */
const SECOND = Buffer.concat([wavHeader(16000, 32000), Buffer.alloc(32000)]);

describe('offline text to speech (espeak-ng)', () => {
  let t: TestApp;
  let tenant: TestTenant;
  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', STT_PROVIDER: 'none' });
    tenant = await createTenant(t.container, 'member');
  });
  afterAll(() => t.close());
  const tts = (voice: string, payload: object, vendor?: string) =>
    t.app.inject({ method: 'POST', url: TTS(voice, vendor), headers: tenant.headers, payload });

  it('speaks a curated English voice as MP3 (the default format) for a member', async () => {
    const response = await tts(RACHEL, { text: 'Hello there. Thanks for calling us today.' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('audio/mpeg');
    const mp3 = parseMp3(response.rawPayload);
    expect([...mp3.sampleRates]).toEqual([44100]);
    expect(mp3.durationS).toBeGreaterThan(1.5);
    expect(mp3.durationS).toBeLessThan(7);
  });

  it('speaks a curated Arabic voice as raw 16 kHz PCM under the elevenlabs alias', async () => {
    const response = await tts(
      LAYLA,
      { text: 'مرحبا بكم. كيف يمكنني مساعدتك؟', output_format: 'pcm_16000', voice_speed: 120 },
      'elevenlabs',
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('audio/pcm;rate=16000');
    const seconds = response.rawPayload.length / 2 / 16000;
    expect(seconds).toBeGreaterThan(1);
    expect(seconds).toBeLessThan(7);
  });

  it.each([
    ['ulaw_8000', 'audio/basic'],
    ['alaw_8000', 'audio/x-alaw-basic;rate=8000'],
    ['wav_22050', 'audio/wav'],
  ])('serves %s as %s', async (format, type) => {
    const response = await tts(RACHEL, { text: 'One moment please.', output_format: format });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(type);
  });

  it('honours ?output_format= in the query (the ElevenLabs way) and refuses a query the body contradicts', async () => {
    const inQuery = await t.app.inject({
      method: 'POST',
      url: `${TTS(RACHEL)}?output_format=wav_16000`,
      headers: tenant.headers,
      payload: { text: 'One moment please.' },
    });
    expect(inQuery.statusCode).toBe(200);
    expect(inQuery.headers['content-type']).toBe('audio/wav');
    const wav = inQuery.rawPayload;
    expect(wav.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(wav.readUInt32LE(24)).toBe(16000);
    // The real sizes: the RIFF size covers the file, the data size its samples.
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    const both = await t.app.inject({
      method: 'POST',
      url: `${TTS(RACHEL)}?output_format=pcm_16000`,
      headers: tenant.headers,
      payload: { text: 'Hi.', output_format: 'mp3_44100_128' },
    });
    expect(both.statusCode).toBe(400);
    expect(JSON.stringify(both.json())).toContain('output_format');
    const unknown = await t.app.inject({
      method: 'POST',
      url: `${TTS(RACHEL)}?output_format=flac_48000`,
      headers: tenant.headers,
      payload: { text: 'Hi.' },
    });
    expect(unknown.statusCode).toBe(400);
    expect(JSON.stringify(unknown.json())).toContain('mp3_44100_128');
  });

  it('answers 404 naming a voice that is not in the catalog', async () => {
    const response = await tts('no-such-voice', { text: 'Hello.' });
    expect(response.statusCode).toBe(404);
    expect(response.json().detail).toContain('no-such-voice');
  });

  it('answers 400 listing the supported formats for an unknown one', async () => {
    const response = await tts(RACHEL, { text: 'Hello.', output_format: 'flac_48000' });
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toContain('mp3_44100_128');
    expect(response.json().detail).toContain('ulaw_8000');
  });

  it.each([
    [{}, 'text'],
    [{ text: '' }, 'text'],
    [{ text: '   ' }, 'text'],
    [{ text: 'x'.repeat(5001) }, '5000'],
    [{ text: 'Hi.', voice_style: 1.5 }, 'voice_style'],
    [{ text: 'Hi.', voice_speed: 1000 }, 'voice_speed'],
    [{ text: 'Hi.', language_code: 'english' }, 'language_code'],
    [{ text: 'Hi.', extra: true }, 'extra'],
  ])('answers 400 for %j', async (payload, field) => {
    const response = await tts(RACHEL, payload);
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toContain(field);
  });

  it('answers 401 without a key', async () => {
    const response = await t.app.inject({ method: 'POST', url: TTS(RACHEL), payload: { text: 'Hi.' } });
    expect(response.statusCode).toBe(401);
  });

  it('stops synthesising when the client goes away', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const sentences = 80;
    const text = Array.from({ length: sentences }, (_, i) => `This is sentence number ${i + 1} of a long answer.`).join(
      ' ',
    );
    const before = espeakSentenceCount();
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: TTS(RACHEL),
          headers: { ...tenant.headers, 'content-type': 'application/json' },
        },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', () => undefined);
      req.end(JSON.stringify({ text, output_format: 'pcm_16000' }));
      setTimeout(() => reject(new Error('no audio')), 20_000).unref();
    });
    // Wait until the engine is idle: the count stops moving.
    let last = -1;
    while (espeakSentenceCount() !== last) {
      last = espeakSentenceCount();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(last - before).toBeLessThan(sentences / 2);
  });
});

describe('text to speech through providers', () => {
  it('streams ElevenLabs audio with the settings, and maps its 404, 401 and 429', async () => {
    const peer = await startFakeElevenLabsTts('xi-route-key-000000', [RACHEL, 'accountVoice0001']);
    const t = await createTestApp({
      RATE_LIMIT_ENABLED: 'false',
      ELEVENLABS_API_KEY: peer.apiKey,
      ELEVENLABS_BASE_URL: peer.url,
    });
    try {
      const tenant = await createTenant(t.container);
      const post = (voice: string, payload: object) =>
        t.app.inject({ method: 'POST', url: TTS(voice), headers: tenant.headers, payload });
      const ok = await post(RACHEL, {
        text: 'Hello.',
        output_format: 'ulaw_8000',
        voice_stability: 0.2,
        model_id: 'eleven_flash_v2_5',
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['content-type']).toBe('audio/basic');
      expect(ok.body).toBe('AUDIO:Hello.');
      expect(peer.requests.at(-1)!.body).toMatchObject({
        model_id: 'eleven_flash_v2_5',
        voice_settings: { stability: 0.2 },
      });
      expect((await post('notAVoiceAtTheVendor', { text: 'Hi.' })).statusCode).toBe(404);
      const own = await post('accountVoice0001', { text: 'Mine.' });
      expect(own.statusCode).toBe(200);
      expect(own.body).toBe('AUDIO:Mine.');
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/public/voice-agents',
        headers: tenant.headers,
        payload: { name: 'Own voice', voice_id: 'accountVoice0001' },
      });
      expect(created.statusCode).toBe(201);
      expect(peer.requests.filter((r) => r.path === '/v1/voices').length).toBe(1);
      peer.fail({ kind: 'status', status: 429, code: 'quota_exceeded', message: 'Quota exceeded' });
      const busy = await post(RACHEL, { text: 'Hi.' });
      expect(busy.statusCode).toBe(429);
      expect(busy.json().detail).toContain('Quota exceeded');
      peer.fail({ kind: 'status', status: 401, code: 'invalid_api_key', message: 'Invalid API key' });
      const refused = await post(RACHEL, { text: 'Hi.' });
      expect(refused.statusCode).toBe(503);
      expect(refused.body).not.toContain(peer.apiKey);
    } finally {
      await t.close();
      await peer.close();
    }
  });

  it('serves mp3_44100_32 through the OpenAI-protocol engine at 44.1 kHz and 32 kb/s', async () => {
    const peer = await startFakeOpenAiSpeech();
    const t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', TTS_URL: `${peer.url}/v1`, TTS_API_KEY: peer.apiKey });
    try {
      const tenant = await createTenant(t.container);
      const post = (payload: object) =>
        t.app.inject({ method: 'POST', url: TTS(RACHEL), headers: tenant.headers, payload });
      const mp3 = await post({ text: 'Hi.', output_format: 'mp3_44100_32' });
      expect(mp3.statusCode).toBe(200);
      expect([...parseMp3(mp3.rawPayload).sampleRates]).toEqual([44100]);
      expect([...parseMp3(mp3.rawPayload).bitrates]).toEqual([32]);
      const pcm = await post({ text: 'Hi.', output_format: 'pcm_24000' });
      expect(pcm.statusCode).toBe(200);
      expect(pcm.body).toBe('AUDIO:Hi.');
    } finally {
      await t.close();
      await peer.close();
    }
  });

  it('refuses with 400 a format the engine does not serve, listing those it does', () => {
    const speech = createVoiceSpeechService({
      tts: {
        tts: { id: 'narrow', formats: ['pcm_16000'], synthesize: async function* () {} },
        reason: null,
        maxTextChars: 100,
      },
      stt: { stt: null, reason: null },
      maxAudioBytes: 1000,
    });
    expect(() => speech.checkFormat('mp3_44100_32')).toThrow(
      expect.objectContaining({ statusCode: 400, message: expect.stringContaining('pcm_16000') }),
    );
    expect(speech.checkFormat('pcm_16000')).toBe('pcm_16000');
  });

  it('answers 503 saying what to configure when there is no engine', async () => {
    const speech = createVoiceSpeechService({
      tts: { tts: null, reason: 'Text-to-speech is not configured: set ELEVENLABS_API_KEY', maxTextChars: 100 },
      stt: { stt: null, reason: null },
      maxAudioBytes: 1000,
    });
    await expect(speech.speak(RACHEL, { text: 'Hi.' }, new AbortController().signal)).rejects.toMatchObject({
      statusCode: 503,
      message: expect.stringContaining('ELEVENLABS_API_KEY'),
    });
  });
});

describe('speech to text', () => {
  let peer: FakeSpeech;
  let t: TestApp;
  let offline: TestApp;
  let tenant: TestTenant;
  beforeAll(async () => {
    peer = await startFakeSpeech('sk-stt-key-0123456789');
    t = await createTestApp({
      RATE_LIMIT_ENABLED: 'false',
      STT_URL: `${peer.url}/v1`,
      STT_API_KEY: peer.apiKey,
      CHAT_MAX_AUDIO_BYTES: '40000',
    });
    offline = await createTestApp({ RATE_LIMIT_ENABLED: 'false', STT_PROVIDER: 'none' });
    tenant = await createTenant(t.container);
  });
  afterAll(async () => {
    await t.close();
    await offline.close();
    await peer.close();
  });
  const stt = (app: TestApp, body: ReturnType<typeof form>, headers = tenant.headers) =>
    app.app.inject({ method: 'POST', url: STT, headers: { ...headers, ...body.headers }, payload: body.payload });

  it('transcribes an audio file with its duration', async () => {
    peer.hear(SECOND, 'Where is my order?');
    const response = await stt(t, form({ name: 'q.wav', type: 'audio/wav', bytes: SECOND }, { language: 'en' }));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ text: 'Where is my order?', duration_s: 1 });
  });

  it('answers 400 without a file', async () => {
    const response = await stt(t, form(undefined, { language: 'en' }));
    expect(response.statusCode).toBe(400);
    expect(response.json().detail).toContain('file');
  });

  it('answers 415 for a file that is not audio', async () => {
    const response = await stt(t, form({ name: 'notes.txt', type: 'text/plain', bytes: Buffer.from('hello') }));
    expect(response.statusCode).toBe(415);
  });

  it('answers 413 for a file over the cap', async () => {
    const big = Buffer.concat([wavHeader(16000, 64000), Buffer.alloc(64000)]);
    const response = await stt(t, form({ name: 'long.wav', type: 'audio/wav', bytes: big }));
    expect(response.statusCode).toBe(413);
  });

  it('checks the form before the engine: without one, bad input is still a 400 or 415 naming the problem', async () => {
    const other = await createTenant(offline.container);
    const send = (body: ReturnType<typeof form>) => stt(offline, body, other.headers);
    const text = Buffer.from('Where is my order? This is a text file, not a recording.\n');
    const cases: [ReturnType<typeof form>, number, RegExp][] = [
      [form({ name: 'q.wav', type: 'audio/wav', bytes: text }), 415, /'file': the file is not audio .*audio\/wav/],
      [form({ name: 'q.mp3', type: 'audio/mpeg', bytes: Buffer.from('ID') }), 415, /'file': the file is not audio/],
      [form({ name: 'q.wav', type: 'audio/wav', bytes: SECOND }, { prompt: 'x' }), 400, /'prompt': unknown field/],
      [form({ name: 'q.wav', type: 'audio/wav', bytes: SECOND }, { language: 'e\u0000n' }), 400, /NUL/],
      [form({ name: 'q\u0000.wav', type: 'audio/wav', bytes: SECOND }), 400, /NUL/],
      [form({ name: 'q.wav', type: 'audio/wav', bytes: SECOND }, { language: 'english please' }), 400, /'language'/],
      [form(undefined, { language: 'en' }), 400, /'file': an audio file is required/],
    ];
    for (const [body, status, detail] of cases) {
      const response = await send(body);
      expect(response.statusCode, response.body).toBe(status);
      expect(Object.keys(response.json())).toEqual(['detail']);
      expect(response.json().detail).toMatch(detail);
    }
    // The same upload as real audio reaches the missing engine.
    expect((await send(form({ name: 'q.wav', type: 'audio/wav', bytes: SECOND }))).statusCode).toBe(503);
  });

  it('answers 503 saying what to configure without an engine', async () => {
    const other = await createTenant(offline.container);
    const response = await stt(offline, form({ name: 'q.wav', type: 'audio/wav', bytes: SECOND }), other.headers);
    expect(response.statusCode).toBe(503);
    expect(response.json().detail).toContain('STT_PROVIDER');
  });
});
