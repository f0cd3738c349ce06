import { describe, expect, it } from 'vitest';
import { parseMp3 } from '../../../test/helpers/audio.js';
import { isWav } from '../transformers/wav.js';
import type { OutputFormat, SynthesisRequest } from '../../ports/text-to-speech.js';
import { createCpuPool } from '../../lib/cpu-pool.js';
import { ESPEAK_WARM_UP, createEspeakTts, espeakSentenceCount, SPEECH_KIND, wordsPerMinute } from './espeak-tts.js';

const pool = createCpuPool({ threads: 2, kinds: { [SPEECH_KIND]: { queue: 8 } } });
const tts = createEspeakTts(pool);
const ENGLISH = 'Hello, and welcome to our support line. How can I help you today?';
const ARABIC = 'مرحبا بكم في خدمة العملاء. كيف يمكنني مساعدتك اليوم؟';

async function speak(
  request: Partial<SynthesisRequest> & { format: OutputFormat },
  signal = new AbortController().signal,
) {
  const chunks: Buffer[] = [];
  for await (const chunk of tts.synthesize(
    { text: ENGLISH, voice: { voiceId: 'x', offlineVoice: 'en-us+f3' }, ...request },
    signal,
  )) {
    chunks.push(chunk);
  }
  return { bytes: Buffer.concat(chunks), chunks: chunks.length };
}

/** 2.5–8 s for these two sentences (about 12 words at 175 words per minute, plus pauses). */
function expectPlausible(seconds: number) {
  expect(seconds).toBeGreaterThan(2);
  expect(seconds).toBeLessThan(9);
}

describe('espeak-ng offline text to speech', () => {
  it.each([
    ['en-us+f3', ENGLISH],
    ['ar+m1', ARABIC],
  ])('speaks %s as MP3 at 44.1 kHz 128 kb/s with a plausible duration', async (voice, text) => {
    const { bytes } = await speak({ text, voice: { voiceId: 'x', offlineVoice: voice }, format: 'mp3_44100_128' });
    const mp3 = parseMp3(bytes);
    expect([...mp3.sampleRates]).toEqual([44100]);
    expect([...mp3.bitrates]).toEqual([128]);
    expectPlausible(mp3.durationS);
  });

  it('speaks MP3 at 22.05 kHz 32 kb/s', async () => {
    const mp3 = parseMp3((await speak({ format: 'mp3_22050_32' })).bytes);
    expect([...mp3.sampleRates]).toEqual([22050]);
    expect([...mp3.bitrates]).toEqual([32]);
    expectPlausible(mp3.durationS);
  });

  it.each([
    ['pcm_8000', 8000, 2],
    ['pcm_16000', 16000, 2],
    ['pcm_24000', 24000, 2],
    ['pcm_44100', 44100, 2],
    ['ulaw_8000', 8000, 1],
    ['alaw_8000', 8000, 1],
  ] as const)('speaks %s with as many bytes as its duration at its rate', async (format, rate, width) => {
    const english = (await speak({ format })).bytes;
    const arabic = (await speak({ format, text: ARABIC, voice: { voiceId: 'x', offlineVoice: 'ar+f2' } })).bytes;
    for (const bytes of [english, arabic]) {
      expect(bytes.length % width).toBe(0);
      expectPlausible(bytes.length / width / rate);
    }
  });

  it('speaks WAV that the project reader decodes, with the format rate in its header', async () => {
    const { bytes } = await speak({ format: 'wav_16000', text: ARABIC, voice: { voiceId: 'x', offlineVoice: 'ar' } });
    expect(isWav(bytes)).toBe(true);
    expect(bytes.readUInt32LE(24)).toBe(16000);
    const { decodeWav, WHISPER_SAMPLE_RATE } = await import('../transformers/wav.js');
    expectPlausible(decodeWav(bytes).length / WHISPER_SAMPLE_RATE);
  });

  it('streams one chunk per sentence and speaks faster with a higher speed', async () => {
    const normal = await speak({ format: 'pcm_16000' });
    expect(normal.chunks).toBe(2);
    const fast = await speak({ format: 'pcm_16000', speed: 200 });
    expect(fast.bytes.length).toBeLessThan(normal.bytes.length * 0.75);
    expect(wordsPerMinute(50)).toBe(88);
    expect(wordsPerMinute(1000)).toBe(450);
  });

  it('stops synthesising when the signal aborts', async () => {
    const controller = new AbortController();
    const text = Array.from({ length: 200 }, (_, i) => `This is sentence number ${i + 1}.`).join(' ');
    const before = espeakSentenceCount();
    const iterator = tts
      .synthesize({ text, voice: { voiceId: 'x' }, format: 'pcm_16000' }, controller.signal)
      [Symbol.asyncIterator]();
    await iterator.next();
    controller.abort();
    await expect(iterator.next()).rejects.toThrow();
    // The worker runs ahead of the reader, but stops at the next sentence once it is told.
    let last = -1;
    while (espeakSentenceCount() !== last) {
      last = espeakSentenceCount();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(last - before).toBeLessThan(100);
  });

  it('runs each warm-up step in the pool without error (a failed step would end the warm-up), speech unchanged by it', async () => {
    const before = await speak({ format: 'mp3_44100_128' });
    const step = { kind: SPEECH_KIND, module: ESPEAK_WARM_UP.module, name: ESPEAK_WARM_UP.name };
    for (const input of ESPEAK_WARM_UP.inputs) await expect(pool.run(step, input)).resolves.toBeUndefined();
    expect((await speak({ format: 'mp3_44100_128' })).bytes.equals(before.bytes)).toBe(true);
  });
});
