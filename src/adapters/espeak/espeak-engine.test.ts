/**
 * The engine initialised once (./espeak-wasm.ts): every voice of the catalog speaks, text is read
 * as text (never as SSML markup), sentences keep their closing pause, a synthesis stopped early
 * gives the start of the whole one, and nothing said before changes what comes next. Real engine;
 * the first-moment path through the real pool of two threads.
 */
import { describe, expect, it } from 'vitest';
import { createCpuPool } from '../../lib/cpu-pool.js';
import type { OutputFormat, SynthesisRequest } from '../../ports/text-to-speech.js';
import { OFFLINE_LANGUAGE_VOICES, catalogVoices, offlineVoiceFor } from '../../modules/voice-agents/voice-catalog.js';
import { createEspeakTts, SPEECH_KIND } from './espeak-tts.js';
import { espeakEngine, ssmlText, voiceResolver } from './espeak-wasm.js';

const bytesOf = (samples: Int16Array) => Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);

/** Trailing samples quieter than 50 (of 32767). */
function trailingSilence(samples: Int16Array): number {
  let at = samples.length;
  while (at > 0 && Math.abs(samples[at - 1]!) < 50) at--;
  return samples.length - at;
}

describe('espeak-ng engine', () => {
  it('speaks every voice of the catalog, its other language, and every offline language voice', async () => {
    const engine = await espeakEngine();
    const voices = new Set<string>();
    for (const voice of catalogVoices()) {
      voices.add(voice.offline_voice);
      for (const language of voice.languages) voices.add(offlineVoiceFor(voice, language));
    }
    for (const base of OFFLINE_LANGUAGE_VOICES) voices.add(`${base}+m3`).add(`${base}+f2`);
    const sounds = new Map<string, string>();
    for (const voice of voices) {
      const text = voice.startsWith('ar') ? 'مرحبا بكم.' : 'Hello there.';
      const { samples, sampleRate, complete } = engine.speak(voice, 175, text);
      expect(complete).toBe(true);
      expect(samples.length / sampleRate, voice).toBeGreaterThan(0.4);
      sounds.set(voice, bytesOf(samples).toString('base64'));
    }
    // Variants are applied (a voice that fell back to its language keeps its variant).
    expect(sounds.get('en-gb+m3')).not.toBe(sounds.get('en-gb+f2'));
    expect(sounds.get('en-us+m3')).not.toBe(sounds.get('en-gb+m3'));
    expect(() => engine.speak('xx-nowhere+m1', 175, 'Hello.')).toThrow(/no voice xx-nowhere\+m1/);
  });

  it('finds a voice by name or file name, else by the language it speaks first', () => {
    const resolve = voiceResolver([
      { name: 'English (Great Britain)', identifier: 'gmw/en', languages: [{ name: 'en-gb', priority: 2 }] },
      { name: 'English (Lancaster)', identifier: 'gmw/en-GB-x-gbclan', languages: [{ name: 'en-gb', priority: 3 }] },
      { name: 'English (America)', identifier: 'gmw/en-US', languages: [{ name: 'en-us', priority: 2 }] },
    ]);
    expect(resolve('en-us+f3')).toBe('en-us+f3');
    expect(resolve('en-GB-x-gbclan')).toBe('en-GB-x-gbclan');
    expect(resolve('en-gb+m3')).toBe('gmw/en+m3');
    expect(resolve('fr+m1')).toBe('fr+m1');
  });

  it('reads markup and entities as text', async () => {
    expect(ssmlText('a < b & c')).toBe('a &lt; b &amp; c </s>');
    const engine = await espeakEngine();
    const plain = engine.speak('en-us', 175, 'one two three').samples.length;
    // As markup, <two> would be an unknown tag and dropped ("one three"); as text it is spoken.
    expect(engine.speak('en-us', 175, 'one <two> three').samples.length).toBeGreaterThan(plain * 1.2);
    expect(engine.speak('en-us', 175, 'one &amp; three').samples.length).toBeGreaterThan(plain);
  });

  it('ends a sentence with the pause of its punctuation', async () => {
    const engine = await espeakEngine();
    const pause = (text: string) => {
      const { samples, sampleRate } = engine.speak('en-us', 175, text);
      return trailingSilence(samples) / sampleRate;
    };
    const [full, comma, bare, question] = [pause('Yes.'), pause('Yes,'), pause('Yes'), pause('Is it?')];
    expect(full).toBeGreaterThan(0.2);
    expect(bare).toBeCloseTo(full, 2);
    expect(question).toBeCloseTo(full, 2);
    expect(comma).toBeGreaterThan(0.08);
    expect(comma).toBeLessThan(full * 0.75);
  });

  it('gives the start of the whole sentence when stopped early, and other syntheses in between change nothing', async () => {
    const engine = await espeakEngine();
    const text = 'Your refund leaves our bank today and reaches your card within five business days.';
    const whole = engine.speak('en-gb+f2', 190, text);
    const start = engine.speak('en-gb+f2', 190, text, 0.9);
    expect(whole.complete).toBe(true);
    expect(start.complete).toBe(false);
    expect(start.samples.length).toBeGreaterThanOrEqual(0.9 * start.sampleRate);
    expect(start.samples.length).toBeLessThan(whole.samples.length / 2);
    expect(bytesOf(start.samples).equals(bytesOf(whole.samples.subarray(0, start.samples.length)))).toBe(true);
    engine.speak('ar+m1', 120, 'مرحبا بكم في خدمة العملاء.');
    engine.speak('en-us+f4', 300, 'Something else, said fast by another company!', 0.5);
    engine.reset();
    engine.speak('en-us-nyc+m3', 90, 'And slowly.');
    expect(bytesOf(engine.speak('en-gb+f2', 190, text).samples).equals(bytesOf(whole.samples))).toBe(true);
  });

  it("joins a turn's first moment and the rest of its sentence exactly (through the pool)", async () => {
    const tts = createEspeakTts(createCpuPool({ threads: 2, kinds: { [SPEECH_KIND]: { queue: 8 } } }));
    const text = 'Refunds are paid to the original card within five business days. You get an e-mail then.';
    const speak = async (request: Partial<SynthesisRequest> & { format: OutputFormat }) => {
      const chunks: Buffer[] = [];
      const signal = new AbortController().signal;
      for await (const chunk of tts.synthesize(
        { text, voice: { voiceId: 'x', offlineVoice: 'en-us+f3' }, ...request },
        signal,
      ))
        chunks.push(chunk);
      return chunks;
    };
    const whole = Buffer.concat(await speak({ format: 'pcm_22050' }));
    const parts = await speak({ format: 'pcm_22050', complete: true, firstPart: true });
    expect(parts.length).toBeGreaterThanOrEqual(2);
    // The first moment is under a second; with the rest it is the whole synthesis, byte for byte.
    expect(parts[0]!.length / 2 / 22_050).toBeLessThan(0.95);
    expect(Buffer.concat(parts).equals(whole)).toBe(true);
  });
});
