/**
 * A local Whisper model through transformers.js, read from `modelsDir/<org>/<model>` or, when
 * allowed, downloaded from the model hub on first use. It reads WAV audio (wav.ts); other formats
 * need a provider that decodes them. A model that cannot be loaded makes every call fail with a
 * clear SpeechError (tried again after `retryAfterMs`).
 */
import path from 'node:path';
import { SpeechError, type SpeechToText } from '../../ports/speech.js';
import { pipelineLoader } from './pipeline-loader.js';
import { decodeWav, isWav } from './wav.js';

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

/**
 * The loader's words as a member may read them (the 503 of speech to text): the models directory
 * named by its setting, MODELS_DIR, and no other absolute path of the server.
 */
export function withoutServerPaths(message: string, modelsDir: string): string {
  let text = message;
  for (const dir of new Set([path.resolve(modelsDir), modelsDir]).values())
    if (dir.length > 1) text = text.split(dir).join('MODELS_DIR');
  return text.replace(/(?<![\w./])\/(?:[^\s/"'`:;,()]+\/)*[^\s/"'`:;,()]+/g, '<path>');
}

export function createLocalWhisper(options: LocalWhisperOptions): SpeechToText {
  const recognizer = pipelineLoader<Recognizer>(
    { task: 'automatic-speech-recognition', ...options },
    (message) => new SpeechError(`Whisper model ${withoutServerPaths(message, options.modelsDir)}`, 'unavailable'),
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
      const samples = decodeWav(audio.buffer);
      const recognize = await recognizer();
      signal.throwIfAborted();
      // Whisper hears 30 s at a time; longer audio is cut into overlapping windows.
      const result = await recognize(samples, { task: 'transcribe', chunk_length_s: 30, stride_length_s: 5 });
      const text = (Array.isArray(result) ? result.map((part) => part.text).join(' ') : result.text).trim();
      return { text, language: null };
    },
  };
}
