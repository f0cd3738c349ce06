/**
 * Same input, same bytes: espeak-ng keeps state between calls (the pitch-flutter phase, the echo
 * buffer, a clock-seeded noise generator), so the engine puts its instance back to the state it
 * had after loading before every sentence. Real engine, real pool of two threads.
 */
import { describe, expect, it } from 'vitest';
import { createCpuPool } from '../../lib/cpu-pool.js';
import type { OutputFormat, SynthesisRequest } from '../../ports/text-to-speech.js';
import { createEspeakTts, SPEECH_KIND } from './espeak-tts.js';
import { espeakEngine } from './espeak-wasm.js';

const pool = createCpuPool({ threads: 2, kinds: { [SPEECH_KIND]: { queue: 16 } } });
const tts = createEspeakTts(pool);
const TEXT = 'Your refund is on its way. It reaches your card within five business days.';

async function speak(request: Partial<SynthesisRequest> & { format: OutputFormat }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const signal = new AbortController().signal;
  for await (const chunk of tts.synthesize(
    { text: TEXT, voice: { voiceId: 'x', offlineVoice: 'en-us+f3' }, ...request },
    signal,
  ))
    chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('espeak-ng synthesis is a pure function of its input', () => {
  it.each(['pcm_22050', 'mp3_44100_128', 'wav_16000'] as const)(
    'two identical %s requests after other syntheses on every thread are byte-identical',
    async (format) => {
      const first = await speak({ format });
      // Other texts, voices and speeds, on both threads at once.
      await Promise.all([
        speak({ format, text: 'Something else entirely, said by another company.', speed: 140 }),
        speak({
          format: 'pcm_16000',
          text: 'مرحبا بكم في خدمة العملاء.',
          voice: { voiceId: 'y', offlineVoice: 'ar+m1' },
        }),
        speak({
          format,
          text: 'A third, longer text! With a question? And more.',
          voice: { voiceId: 'z', offlineVoice: 'en-gb+m3' },
        }),
        speak({ format: 'ulaw_8000', text: TEXT, speed: 60 }),
      ]);
      const [second, third] = await Promise.all([speak({ format }), speak({ format })]);
      expect(first.length).toBeGreaterThan(1000);
      expect(second.equals(first)).toBe(true);
      expect(third.equals(first)).toBe(true);
    },
  );

  it('the engine gives one sentence the same samples whatever it said before, and only then', async () => {
    const engine = await espeakEngine();
    const pcm = () => Buffer.from(engine.speak('en-us+m2', 175, 'Good morning, how may I help?').samples.buffer);
    const once = pcm();
    engine.speak('en-gb', 300, 'Flutter and echo, a long and different sentence spoken fast.');
    engine.speak('en-us+f4', 90, 'Another one, slowly.');
    expect(pcm().equals(once)).toBe(true);
    // Different input still gives different audio (the reset does not freeze the output).
    expect(
      Buffer.from(engine.speak('en-us+m2', 175, 'Good evening, how may I help?').samples.buffer).equals(once),
    ).toBe(false);
  });
});
