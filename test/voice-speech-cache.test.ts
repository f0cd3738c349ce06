/**
 * Same text, same audio, over HTTP: the offline engine is a pure function of (text, voice,
 * settings, format), so identical requests give identical bytes whatever was synthesised in
 * between, and a repeat is served from the company's partition of the synthesis cache — never
 * from another company's. Real espeak-ng on the real CPU pool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { espeakSentenceCount } from '../src/adapters/espeak/espeak-tts.js';
import { createSpeechCache, speechCacheKey } from '../src/modules/voice-agents/voice-agents.speech-cache.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { createTenant, type TestTenant } from './helpers/factories.js';

const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const TTS = (voice: string, vendor = 'vendor') => `/api/public/voice-agents/${vendor}/voices/${voice}/tts`;
const TEXT = 'Thank you for calling. Your order left our warehouse this morning.';

let t: TestApp;
let a: TestTenant;
let b: TestTenant;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', STT_PROVIDER: 'none' });
  a = await createTenant(t.container, 'member');
  b = await createTenant(t.container, 'member');
});
afterAll(() => t?.close());

async function tts(tenant: TestTenant, payload: Record<string, unknown>, voice = RACHEL): Promise<Buffer> {
  const response = await t.app.inject({ method: 'POST', url: TTS(voice), headers: tenant.headers, payload });
  expect(response.statusCode).toBe(200);
  return response.rawPayload;
}

describe('the same request gives the same bytes', () => {
  it('after other syntheses, from the engine for another company and from the cache for the same one', async () => {
    const first = await tts(a, { text: TEXT, output_format: 'pcm_16000' });
    // Other syntheses in between, by both companies, some at once.
    await Promise.all([
      tts(b, { text: 'Something else entirely, for the other company.', output_format: 'pcm_16000' }),
      tts(a, { text: TEXT, output_format: 'pcm_16000', voice_speed: 130 }),
      tts(b, { text: 'A question? And an answer!', output_format: 'mp3_44100_128' }, 'sb-ar-msa-layla'),
    ]);
    const synthesised = espeakSentenceCount();
    const again = await tts(a, { text: TEXT, output_format: 'pcm_16000' });
    expect(again.equals(first)).toBe(true);
    // Served from company A's partition: nothing was synthesised.
    expect(espeakSentenceCount()).toBe(synthesised);

    // Company B asking the same is synthesised again (no hit across companies) — and the engine
    // gives the same bytes.
    const other = await tts(b, { text: TEXT, output_format: 'pcm_16000' });
    expect(espeakSentenceCount()).toBeGreaterThan(synthesised);
    expect(other.equals(first)).toBe(true);
  });

  it('every input is part of the key: format, speed, voice, language, settings each give a synthesis of their own', async () => {
    const base = { text: 'Every input counts.', output_format: 'wav_16000' };
    await tts(a, base);
    const variants: Array<[Record<string, unknown>, string?]> = [
      [{ ...base, output_format: 'wav_22050' }],
      [{ ...base, voice_speed: 120 }],
      [{ ...base, language_code: 'en-GB' }],
      [{ ...base, voice_stability: 0.9 }],
      [{ ...base, model_id: 'eleven_multilingual_v2' }],
      [base, '9BWtsMINqrJLrRacOk9x'],
    ];
    for (const [payload, voice] of variants) {
      const before = espeakSentenceCount();
      await tts(a, payload, voice);
      expect(espeakSentenceCount(), JSON.stringify({ payload, voice })).toBeGreaterThan(before);
    }
    const before = espeakSentenceCount();
    await tts(a, base);
    expect(espeakSentenceCount()).toBe(before);
  });

  it('a repeat of a streamed format is sent whole, with its length, in the same bytes', async () => {
    const payload = { text: 'Sent as it is encoded, then whole.', output_format: 'mp3_44100_128' };
    const request = { method: 'POST' as const, url: TTS(RACHEL), headers: a.headers, payload };
    const first = await t.app.inject(request);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-length']).toBeUndefined(); // streamed while it was encoded
    const before = espeakSentenceCount();
    const again = await t.app.inject(request);
    expect(again.statusCode).toBe(200);
    expect(espeakSentenceCount()).toBe(before);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.headers['content-length']).toBe(String(first.rawPayload.length));
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
  });

  it('the ElevenLabs-compatible route shares the company partition', async () => {
    const first = await tts(a, { text: 'Shared by both routes.', output_format: 'mp3_44100_128' });
    const before = espeakSentenceCount();
    const response = await t.app.inject({
      method: 'POST',
      url: `/elevenlabs/v1/text-to-speech/${RACHEL}?output_format=mp3_44100_128`,
      headers: { 'xi-api-key': a.apiKey, 'content-type': 'application/json' },
      payload: { text: 'Shared by both routes.' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.rawPayload.equals(first)).toBe(true);
    expect(espeakSentenceCount()).toBe(before);
  });
});

describe('the synthesis cache', () => {
  const key = (text: string) =>
    speechCacheKey({
      engine: 'espeak-ng',
      voiceId: RACHEL,
      offlineVoice: 'en-us+f3',
      format: 'pcm_16000',
      text,
      modelId: undefined,
      languageCode: undefined,
      speed: undefined,
      stability: undefined,
      similarityBoost: undefined,
      style: undefined,
    });

  it('keeps each company within its bytes, least recently used out first, and never answers across companies', () => {
    const cache = createSpeechCache({ maxBytes: 4000, companyBytes: 1000 })!;
    cache.set('a', key('one'), [Buffer.alloc(250, 1)]);
    cache.set('a', key('two'), [Buffer.alloc(250, 2)]);
    cache.set('a', key('three'), [Buffer.alloc(250, 3)]);
    cache.get('a', key('one'));
    cache.set('a', key('four'), [Buffer.alloc(250, 4)]);
    cache.set('a', key('five'), [Buffer.alloc(250, 5)]);
    expect(cache.get('a', key('two'))).toBeUndefined();
    expect(cache.get('a', key('one'))?.[0]?.[0]).toBe(1);
    expect(cache.stats()).toEqual({ companies: 1, entries: 4, bytes: 1000 });
    expect(cache.get('b', key('one'))).toBeUndefined();
    // Larger than a quarter of a partition: not kept.
    cache.set('b', key('big'), [Buffer.alloc(200), Buffer.alloc(51)]);
    expect(cache.get('b', key('big'))).toBeUndefined();
  });

  it('holds at most maxBytes / companyBytes partitions, and is off at 0', () => {
    const cache = createSpeechCache({ maxBytes: 2000, companyBytes: 1000 })!;
    for (const company of ['a', 'b', 'c']) cache.set(company, key('x'), [Buffer.alloc(100)]);
    expect(cache.stats().companies).toBe(2);
    expect(cache.get('a', key('x'))).toBeUndefined();
    expect(createSpeechCache({ maxBytes: 0, companyBytes: 1000 })).toBeNull();
  });

  it('keys differ for every input', () => {
    expect(key('a')).not.toBe(key('b'));
    expect(key('a')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
