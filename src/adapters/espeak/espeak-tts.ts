/**
 * The offline text-to-speech engine: espeak-ng synthesis and our encoders, run as a job of the
 * CPU pool (./espeak.job.ts) so that no sentence is synthesised or encoded on the event loop; the
 * job's chunks are yielded as they arrive. Voice: the catalog's `offlineVoice` (`en-us+f3`,
 * `ar+m1`), else `ar` for Arabic text, else `en-us`. `speed` (percent) scales espeak's 175 words
 * per minute, bounded to 80–450. Ignored: model, stability, similarity boost and style (espeak has
 * no such settings). A full pool refuses at once with CpuBusyError (503 and `Retry-After`).
 * Once speech is used, each of the pool's threads warms the engine up while idle (ESPEAK_WARM_UP).
 */
import { cpuJobModule, type CpuJob, type CpuJobFailure, type CpuPool, type CpuWarmUp } from '../../lib/cpu-pool.js';
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

/**
 * Each pool thread's warm-up (CpuPool.setWarmUp), once speech is used: the engine's start (its
 * data and instance, ~0.7 s) and a few sentences in the formats most asked for, after which V8
 * has optimised the engine's JavaScript (cold, a sentence costs 10–25× what it does warm). Each
 * step is one sentence, so a job that comes waits for one at most.
 */
export const ESPEAK_WARM_UP: CpuWarmUp = {
  module: JOB_MODULE,
  name: 'warmUp',
  inputs: [
    'Hello.',
    'Thank you for calling, how can I help you today?',
    'Your order shipped yesterday and should arrive within three business days.',
    'You can follow it with the tracking link we sent by e-mail.',
    'Is there anything else I can help you with?',
    'Have a good day, and thank you for your patience.',
  ].map((text) => ({ text, formats: ['mp3_44100_128', 'pcm_16000'] satisfies OutputFormat[] })),
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
  pool.setWarmUp(SPEECH_KIND, ESPEAK_WARM_UP);
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
