/** The HTTP text-to-speech engines against local peers that answer like ElevenLabs and OpenAI's speech protocol. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createElevenLabsTts } from '../src/adapters/elevenlabs/elevenlabs-tts.js';
import { createElevenLabsVoices } from '../src/adapters/elevenlabs/elevenlabs-voices.js';
import { SPEECH_KIND } from '../src/adapters/espeak/espeak-tts.js';
import { createOpenAiTts } from '../src/adapters/openai-compatible/openai-tts.js';
import { createCpuPool } from '../src/lib/cpu-pool.js';
import { SpeechError } from '../src/ports/speech.js';
import type { SynthesisRequest, TextToSpeech } from '../src/ports/text-to-speech.js';
import { startFakeElevenLabsTts, type FakeTtsPeer } from './helpers/fake-elevenlabs-tts.js';
import { parseMp3 } from './helpers/audio.js';
import { ffmpegDecode, hasFfmpeg } from './helpers/ffmpeg.js';
import { startFakeOpenAiSpeech } from './helpers/fake-openai-speech.js';

const VOICE = '21m00Tcm4TlvDq8ikWAM';

async function collect(tts: TextToSpeech, request: Partial<SynthesisRequest> = {}) {
  const chunks: Buffer[] = [];
  const full: SynthesisRequest = {
    text: 'Hello there.',
    voice: { voiceId: VOICE },
    format: 'mp3_44100_128',
    ...request,
  };
  for await (const chunk of tts.synthesize(full, new AbortController().signal)) chunks.push(chunk);
  return chunks;
}

async function failure(promise: Promise<unknown>): Promise<SpeechError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SpeechError);
  return error as SpeechError;
}

describe('ElevenLabs text to speech', () => {
  let peer: FakeTtsPeer;
  beforeAll(async () => {
    peer = await startFakeElevenLabsTts();
  });
  afterAll(() => peer.close());
  const tts = (apiKey = peer.apiKey, timeoutMs = 5000) =>
    createElevenLabsTts({ apiKey, baseUrl: peer.url, model: 'eleven_turbo_v2_5', timeoutMs });

  it('posts the text, model, language and voice settings and streams the audio chunks through', async () => {
    const chunks = await collect(tts(), {
      format: 'ulaw_8000',
      languageCode: 'ar',
      speed: 110,
      stability: 0.3,
      style: 0.2,
    });
    expect(chunks.length).toBeGreaterThanOrEqual(1);
    expect(Buffer.concat(chunks).toString()).toBe('AUDIO:Hello there.');
    const request = peer.requests.at(-1)!;
    expect(request.path).toBe(`/v1/text-to-speech/${VOICE}/stream`);
    expect(request.query.get('output_format')).toBe('ulaw_8000');
    expect(request.credential).toBe(peer.apiKey);
    expect(request.body).toMatchObject({
      text: 'Hello there.',
      model_id: 'eleven_turbo_v2_5',
      language_code: 'ar',
      voice_settings: { stability: 0.3, style: 0.2, speed: 1.1 },
    });
  });

  it('turns 401 into an unavailable engine without echoing the key', async () => {
    const error = await failure(collect(tts('xi-wrong-key-000000')));
    expect(error.failure).toBe('unavailable');
    expect(error.status).toBe(401);
    expect(error.message).toContain('Invalid API key');
    expect(error.message).not.toContain('xi-wrong-key');
  });

  it('turns 429 into a provider failure with the vendor message', async () => {
    peer.fail({
      kind: 'status',
      status: 429,
      code: 'too_many_concurrent_requests',
      message: 'Too many concurrent requests',
    });
    const error = await failure(collect(tts()));
    expect(error).toMatchObject({ failure: 'provider', status: 429 });
    expect(error.message).toContain('Too many concurrent requests');
  });

  it('reads the account voice list once and answers from the cache until it is stale', async () => {
    let clock = 0;
    const voices = createElevenLabsVoices({
      apiKey: peer.apiKey,
      baseUrl: peer.url,
      timeoutMs: 5000,
      ttlMs: 1000,
      now: () => clock,
    });
    const signal = new AbortController().signal;
    const listed = () => peer.requests.filter((r) => r.path === '/v1/voices').length;
    const before = listed();
    expect(await voices.hasVoice(VOICE, signal)).toBe(true);
    expect(await voices.hasVoice('someoneElse', signal)).toBe(false);
    expect(listed() - before).toBe(1);
    clock = 2000;
    await voices.hasVoice(VOICE, signal);
    expect(listed() - before).toBe(2);
    const refused = createElevenLabsVoices({ apiKey: 'xi-wrong-key-000000', baseUrl: peer.url, timeoutMs: 5000 });
    expect(await failure(refused.hasVoice(VOICE, signal))).toMatchObject({ failure: 'unavailable', status: 401 });
  });

  it('gives up on a provider that does not answer', async () => {
    peer.fail({ kind: 'hang' });
    const error = await failure(collect(tts(peer.apiKey, 300)));
    expect(error.failure).toBe('provider');
    expect(error.message).toContain('did not answer within 300 ms');
  });
});

describe('OpenAI speech protocol', () => {
  let peer: FakeTtsPeer;
  beforeAll(async () => {
    peer = await startFakeOpenAiSpeech();
  });
  const cpu = createCpuPool({ threads: 1, kinds: { [SPEECH_KIND]: { queue: 16 } } });
  afterAll(async () => {
    await peer.close();
    await cpu.close();
  });
  const tts = (apiKey = peer.apiKey, timeoutMs = 5000) =>
    createOpenAiTts({ baseUrl: `${peer.url}/v1`, apiKey, model: 'tts-1', timeoutMs, cpu });

  it.each([
    ['mp3_44100_128', 44100, 128],
    ['mp3_22050_32', 22050, 32],
  ] as const)(
    'asks for the protocol PCM and answers %s with MP3 at that rate and bitrate',
    async (format, rate, kbps) => {
      // The peer's "audio" is its bytes: 24 kHz 16-bit PCM to us (as the protocol's pcm is).
      const text = 'Hello there, this is the provider speaking. '.repeat(20);
      const samples = Buffer.byteLength(`AUDIO:${text}`) >> 1;
      const streamed = Buffer.concat(await collect(tts(), { text, format, voice: { voiceId: 'alloy' }, speed: 150 }));
      expect(peer.requests.at(-1)).toMatchObject({
        path: '/v1/audio/speech',
        credential: peer.apiKey,
        body: { model: 'tts-1', input: text, voice: 'alloy', response_format: 'pcm', speed: 1.5 },
      });
      const mp3 = parseMp3(streamed);
      expect([...mp3.sampleRates]).toEqual([rate]);
      expect([...mp3.bitrates]).toEqual([kbps]);
      if (hasFfmpeg) {
        // Complete (a spoken turn's chunk): exactly the provider's samples, resampled to the format's rate.
        const complete = Buffer.concat(await collect(tts(), { text, format, complete: true }));
        expect((await ffmpegDecode(complete)).length).toBe(Math.round((samples * rate) / 24000));
      }
    },
  );

  it('asks for 24 kHz PCM and wraps it in a WAV header for wav_24000', async () => {
    const bytes = Buffer.concat(await collect(tts(), { format: 'wav_24000' }));
    expect(bytes.toString('latin1', 0, 4)).toBe('RIFF');
    expect(bytes.readUInt32LE(24)).toBe(24000);
    expect(bytes.subarray(44).toString()).toBe('AUDIO:Hello there.');
    expect(peer.requests.at(-1)!.body.response_format).toBe('pcm');
    expect(tts().formats).toContain('ulaw_8000');
    expect(tts().formats).toContain('mp3_44100_32');
  });

  it('turns 401 into an unavailable engine', async () => {
    const error = await failure(collect(tts('sk-wrong-0000000000')));
    expect(error).toMatchObject({ failure: 'unavailable', status: 401 });
    expect(error.message).toContain('Incorrect API key provided');
  });

  it('turns 429 into a provider failure', async () => {
    peer.fail({ kind: 'status', status: 429, code: 'rate_limit_exceeded', message: 'Rate limit reached' });
    const error = await failure(collect(tts()));
    expect(error).toMatchObject({ failure: 'provider', status: 429 });
    expect(error.message).toContain('Rate limit reached');
  });

  it('gives up on a provider that does not answer', async () => {
    peer.fail({ kind: 'hang' });
    const error = await failure(collect(tts(peer.apiKey, 300)));
    expect(error.message).toContain('did not answer within 300 ms');
  });
});
