/**
 * A local Whisper model through transformers.js, read from `modelsDir/<org>/<model>` or, when
 * allowed, downloaded from the model hub on first use. It reads WAV audio (wav.ts); other formats
 * need a provider that decodes them. The decoding and resampling run in the CPU pool (./wav.job.ts;
 * a full pool refuses at once with CpuBusyError, 503 and `Retry-After`). A model that cannot be
 * loaded makes every call fail with a clear SpeechError (tried again after `retryAfterMs`).
 */
import { cpuJobModule, type CpuJob, type CpuPool } from '../../lib/cpu-pool.js';
import { SpeechError, type SpeechFailure, type SpeechToText } from '../../ports/speech.js';
import { SPEECH_KIND } from '../espeak/espeak-tts.js';
import { pipelineLoader } from './pipeline-loader.js';
import type { DecodeWavInput } from './wav.job.js';
import { isWav } from './wav.js';

/** Decoding and resampling, in the pool's `speech` kind (its queue bounds them with synthesis). */
export const DECODE_WAV_JOB: CpuJob<DecodeWavInput, Float32Array> = {
  kind: SPEECH_KIND,
  module: cpuJobModule(import.meta.url, './wav.job'),
  name: 'decodeWavJob',
  reviveError: (failure) =>
    failure.name === 'SpeechError'
      ? new SpeechError(failure.message, failure.data.failure as SpeechFailure)
      : new SpeechError(`The WAV file could not be decoded: ${failure.message}`, 'audio'),
};

export interface LocalWhisperOptions {
  model: string;
  modelsDir: string;
  allowDownload: boolean;
  retryAfterMs?: number;
  now?: () => number;
}

type Recognizer = (
  audio: Float32Array,
  options: Record<string, unknown>,
) => Promise<{ text: string } | { text: string }[]>;

export function createLocalWhisper(options: LocalWhisperOptions, pool: CpuPool): SpeechToText {
  const recognizer = pipelineLoader<Recognizer>(
    { task: 'automatic-speech-recognition', ...options },
    (message) => new SpeechError(`Whisper model ${message}`, 'unavailable'),
  );
  return {
    id: `local:${options.model}`,
    async transcribe(audio, signal) {
      if (!isWav(audio.buffer)) {
        throw new SpeechError(
          'The local speech-to-text model reads WAV audio only: send a WAV file, or configure ElevenLabs or an OpenAI-compatible speech-to-text server for other formats',
          'format',
        );
      }
      // Copied to the worker (the Buffer may share its memory with others), the samples copied back.
      const samples = await pool.run(DECODE_WAV_JOB, { bytes: audio.buffer }, { signal });
      const recognize = await recognizer();
      signal.throwIfAborted();
      // Whisper hears 30 s at a time; longer audio is cut into overlapping windows.
      const result = await recognize(samples, { task: 'transcribe', chunk_length_s: 30, stride_length_s: 5 });
      const text = (Array.isArray(result) ? result.map((part) => part.text).join(' ') : result.text).trim();
      return { text, language: null };
    },
  };
}
