/**
 * The offline engine's jobs in the CPU pool (src/lib/cpu-pool.ts): espeak-ng (./espeak-wasm.ts)
 * sentence by sentence, each sentence's PCM resampled and encoded as it comes
 * (../tts/encoders.ts) and sent at once, so the first bytes leave after the first sentence. Run
 * in a worker thread; they stop at the next sentence when the caller gives up.
 *
 * `speakFirst` serves a spoken turn's first audio: it synthesises the start of one sentence only
 * (espeak stops once 0.9 s of audio is made; a sentence that ends before goes whole), encodes its
 * first moment (cut at the quietest 10 ms between 0.35 and 0.9 s) as a complete file, and says
 * where the rest starts; `speak` then synthesises that sentence again in a job of its own and
 * encodes it from there (`skip`). Synthesis is a pure function of its input (./espeak-wasm.ts), so
 * the second synthesis gives the same samples and the rest joins the first moment exactly. The
 * first audio so costs under a second of synthesis and of encoding, whatever the sentence's
 * length; the sentence's first second is synthesised twice (espeak cannot resume a stopped one).
 */
import type { CpuJobContext } from '../../lib/cpu-pool.js';
import type { OutputFormat } from '../../ports/text-to-speech.js';
import { createEncoder } from '../tts/encoders.js';
import { splitSentences } from '../tts/sentences.js';
import { espeakEngine } from './espeak-wasm.js';

export interface SpeakJobInput {
  text: string;
  voice: string;
  wordsPerMinute: number;
  format: OutputFormat;
  /** One complete file at the end (../tts/encoders.ts). */
  complete?: boolean;
  /** The sentences to speak, already split (else `text` is split here). */
  sentences?: string[];
  /** Samples of the first sentence already sent (its first moment, `FirstAudio.restFrom`): left out. */
  skip?: number;
}

/** One step of the answer: the bytes encoded so far (maybe none: MP3 buffers frames), after a sentence or at the end. */
export interface SpeakJobChunk {
  bytes: Uint8Array;
  sentence: boolean;
}

/** `speakFirst`'s answer: the sentence's first moment as a complete file, and where the rest starts. */
export interface FirstAudio {
  bytes: Uint8Array;
  /** The sample (at the engine's rate) where the rest of the sentence starts; null when it went whole. */
  restFrom: number | null;
}

/** The first moment is cut at the quietest 10 ms between these times; a shorter sentence goes whole. */
const FIRST_CUT_FROM_S = 0.35;
const FIRST_CUT_TO_S = 0.9;
/** Sentences known to be shorter than this are not cut (the rest would be too short to be worth a file of its own). */
const CUT_BELOW_S = 1.4;

/** The bytes in an ArrayBuffer of their own, so they move to the caller instead of being copied. */
function own(bytes: Buffer): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes);
}

/**
 * Where to cut a sentence's first moment: the middle of its quietest 10 ms window in range, or its
 * end when the sentence is `complete` and short. `samples` may be only the sentence's start (at
 * least FIRST_CUT_TO_S of it when not complete).
 */
export function firstCut(samples: Int16Array, sampleRate: number, complete = true): number {
  if (complete && samples.length < sampleRate * CUT_BELOW_S) return samples.length;
  const window = Math.round(sampleRate * 0.01);
  const last = Math.round(sampleRate * FIRST_CUT_TO_S);
  let best = Infinity;
  let at = samples.length;
  for (let start = Math.round(sampleRate * FIRST_CUT_FROM_S); start + window <= last; start += window) {
    let energy = 0;
    for (let i = start; i < start + window; i++) energy += samples[i]! * samples[i]!;
    if (energy < best) {
      best = energy;
      at = start + (window >> 1);
    }
  }
  return at;
}

export async function speakFirst(input: SpeakJobInput): Promise<FirstAudio> {
  const engine = await espeakEngine();
  // Enough to choose where to cut; a sentence that ends before that goes whole.
  const pcm = engine.speak(input.voice, input.wordsPerMinute, input.text, FIRST_CUT_TO_S);
  const cut = firstCut(pcm.samples, pcm.sampleRate, pcm.complete);
  const encoder = createEncoder(input.format, pcm.sampleRate, { complete: true });
  const head = encoder.push(pcm.samples.subarray(0, cut));
  const bytes = own(Buffer.concat([head, encoder.end()]));
  return { bytes, restFrom: pcm.complete && cut === pcm.samples.length ? null : cut };
}

export async function speak(input: SpeakJobInput, context: CpuJobContext<SpeakJobChunk>): Promise<void> {
  const engine = await espeakEngine();
  const complete = input.complete ?? false;
  let encoder: ReturnType<typeof createEncoder> | null = null;
  let skip = input.skip ?? 0;
  for (const sentence of input.sentences ?? splitSentences(input.text)) {
    context.throwIfCancelled();
    const pcm = engine.speak(input.voice, input.wordsPerMinute, sentence);
    encoder ??= createEncoder(input.format, pcm.sampleRate, { complete });
    const bytes = own(encoder.push(skip ? pcm.samples.subarray(skip) : pcm.samples));
    // A sentence whose first moment went first was counted then.
    if (bytes.length || !skip) context.emit({ bytes, sentence: !skip }, [bytes.buffer]);
    skip = 0;
  }
  context.throwIfCancelled();
  const rest = own((encoder ?? createEncoder(input.format, 22_050, { complete })).end());
  if (rest.length) context.emit({ bytes: rest, sentence: false }, [rest.buffer]);
}

/** A warm-up step (the pool's, while its thread is idle): one sentence synthesised and encoded in each format, the bytes dropped. */
export async function warmUp(input: { text: string; formats: OutputFormat[] }): Promise<void> {
  const engine = await espeakEngine();
  const pcm = engine.speak('en-us', 175, input.text);
  for (const format of input.formats) {
    const encoder = createEncoder(format, pcm.sampleRate, { complete: true });
    encoder.push(pcm.samples);
    encoder.end();
  }
}
