/**
 * The offline engine's job in the CPU pool (src/lib/cpu-pool.ts): espeak-ng (./espeak-wasm.ts)
 * sentence by sentence, each sentence's PCM resampled and encoded as it comes
 * (../tts/encoders.ts) and sent at once, so the first bytes leave after the first sentence. Runs
 * in a worker thread; stops at the next sentence when the caller gives up.
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
}

/** One step of the answer: the bytes encoded so far (maybe none: MP3 buffers frames), after a sentence or at the end. */
export interface SpeakJobChunk {
  bytes: Uint8Array;
  sentence: boolean;
}

/** The bytes in an ArrayBuffer of their own, so they move to the caller instead of being copied. */
function own(bytes: Buffer): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes);
}

export async function speak(input: SpeakJobInput, context: CpuJobContext<SpeakJobChunk>): Promise<void> {
  const engine = await espeakEngine();
  let encoder: ReturnType<typeof createEncoder> | null = null;
  for (const sentence of splitSentences(input.text)) {
    context.throwIfCancelled();
    const pcm = engine.speak(input.voice, input.wordsPerMinute, sentence);
    encoder ??= createEncoder(input.format, pcm.sampleRate, { complete: input.complete ?? false });
    const bytes = own(encoder.push(pcm.samples));
    context.emit({ bytes, sentence: true }, [bytes.buffer]);
  }
  context.throwIfCancelled();
  const rest = own((encoder ?? createEncoder(input.format, 22_050, { complete: input.complete ?? false })).end());
  if (rest.length) context.emit({ bytes: rest, sentence: false }, [rest.buffer]);
}
