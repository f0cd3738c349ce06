/**
 * The offline text-to-speech engine: espeak-ng synthesis and our encoders, run as a job of the
 * CPU pool (./espeak.job.ts) so that no sentence is synthesised or encoded on the event loop; the
 * job's chunks are yielded as they arrive. Voice: the catalog's `offlineVoice` (`en-us+f3`,
 * `ar+m1`), else `ar` for Arabic text, else `en-us`. `speed` (percent) scales espeak's 175 words
 * per minute, bounded to 80–450. Ignored: model, stability, similarity boost and style (espeak has
 * no such settings). A full pool refuses at once with CpuBusyError (503 and `Retry-After`).
 */
import { cpuJobModule, type CpuJob, type CpuJobFailure, type CpuPool } from '../../lib/cpu-pool.js';
import { SpeechError, type SpeechFailure } from '../../ports/speech.js';
import { OUTPUT_FORMATS, type OutputFormat, type TextToSpeech } from '../../ports/text-to-speech.js';
import { splitSentences } from '../tts/sentences.js';
import type { FirstAudio, SpeakJobChunk, SpeakJobInput } from './espeak.job.js';

const NORMAL_WPM = 175;

/** The pool's kind for speech synthesis and encoding (the container sizes its queue). */
export const SPEECH_KIND = 'speech';

const JOB_MODULE = cpuJobModule(import.meta.url, './espeak.job');
const reviveError = (failure: CpuJobFailure) =>
  failure.name === 'SpeechError'
    ? new SpeechError(failure.message, failure.data.failure as SpeechFailure)
    : new SpeechError(`espeak-ng failed: ${failure.message}`, 'provider');
const SPEAK_JOB: CpuJob<SpeakJobInput, void, SpeakJobChunk> = {
  kind: SPEECH_KIND,
  module: JOB_MODULE,
  name: 'speak',
  reviveError,
};
/** A sentence's first moment (a complete file) and the PCM of its rest: ./espeak.job.ts. */
const SPEAK_FIRST_JOB: CpuJob<SpeakJobInput, FirstAudio> = {
  kind: SPEECH_KIND,
  module: JOB_MODULE,
  name: 'speakFirst',
  reviveError,
};

let sentences = 0;

/** Sentences synthesised for this process (tests and benchmarks watch it). */
export function espeakSentenceCount(): number {
  return sentences;
}

export function wordsPerMinute(speedPercent: number | undefined): number {
  const wpm = Math.round((NORMAL_WPM * (speedPercent ?? 100)) / 100);
  return Math.min(450, Math.max(80, wpm));
}

export function offlineVoiceOf(offlineVoice: string | undefined, languageCode: string | undefined): string {
  if (offlineVoice && /^[a-z]{2,3}(-[a-z0-9]+)?(\+[a-z0-9]+)?$/i.test(offlineVoice)) return offlineVoice;
  return languageCode?.toLowerCase().startsWith('ar') ? 'ar' : 'en-us';
}

/** Every format: the encoders make each at its own rate and bitrate (`mp3_44100_32` too). */
export const ESPEAK_FORMATS: readonly OutputFormat[] = OUTPUT_FORMATS;

export function createEspeakTts(pool: CpuPool): TextToSpeech {
  return {
    id: 'espeak-ng',
    formats: ESPEAK_FORMATS,
    splitsFirstPart: true,
    async *synthesize(request, signal) {
      let input: SpeakJobInput = {
        text: request.text,
        voice: offlineVoiceOf(request.voice.offlineVoice, request.languageCode),
        wordsPerMinute: wordsPerMinute(request.speed),
        format: request.format,
        ...(request.complete ? { complete: true } : {}),
      };
      const [first, ...others] = request.complete && request.firstPart ? splitSentences(request.text) : [];
      if (first) {
        // The first moment ahead of other jobs (a turn waiting for its first audio), then the rest.
        const head = await pool.run(SPEAK_FIRST_JOB, { ...input, text: first }, { signal, urgent: true });
        sentences++;
        yield Buffer.from(head.bytes.buffer, head.bytes.byteOffset, head.bytes.byteLength);
        const rest = head.restFrom === null ? others : [first, ...others];
        if (!rest.length) return;
        input = {
          ...input,
          text: rest.join(' '),
          sentences: rest,
          ...(head.restFrom !== null ? { skip: head.restFrom } : {}),
        };
      }
      const counted = (chunk: SpeakJobChunk) => void (chunk.sentence && sentences++);
      for await (const chunk of pool.stream(SPEAK_JOB, input, { signal, onChunk: counted })) {
        if (chunk.bytes.length) yield Buffer.from(chunk.bytes.buffer, chunk.bytes.byteOffset, chunk.bytes.byteLength);
      }
    },
  };
}
