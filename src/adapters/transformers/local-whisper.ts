/**
 * A local Whisper model through transformers.js, read from `modelsDir/<org>/<model>` or, when
 * allowed, downloaded from the model hub on first use. It reads WAV audio (wav.ts); other formats
 * need a provider that decodes them. A model that cannot be loaded makes every call fail with a
 * clear SpeechError (tried again after `retryAfterMs`).
 */
import { SpeechError, type SpeechToText } from '../../ports/speech.js';
import { decodeWav, isWav } from './wav.js';

export interface LocalWhisperOptions {
  model: string;
  modelsDir: string;
  allowDownload: boolean;
  retryAfterMs?: number;
  now?: () => number;
}

type Recognizer = (audio: Float32Array, options: Record<string, unknown>) => Promise<{ text: string } | { text: string }[]>;

export function createLocalWhisper(options: LocalWhisperOptions): SpeechToText {
  const now = options.now ?? Date.now;
  const retryAfterMs = options.retryAfterMs ?? 5 * 60_000;
  let loading: Promise<Recognizer> | null = null;
  let failedAt = 0;

  async function load(): Promise<Recognizer> {
    try {
      const { env, pipeline } = await import('@huggingface/transformers');
      env.localModelPath = options.modelsDir;
      env.allowLocalModels = true;
      env.allowRemoteModels = options.allowDownload;
      return (await pipeline('automatic-speech-recognition', options.model, { dtype: 'q8' })) as unknown as Recognizer;
    } catch (error) {
      const where = options.allowDownload ? `${options.modelsDir} or the model hub` : options.modelsDir;
      throw new SpeechError(`Whisper model ${options.model} could not be loaded from ${where}: ${(error as Error).message}`, 'unavailable');
    }
  }

  function recognizer(): Promise<Recognizer> {
    if (loading && failedAt > 0 && now() - failedAt > retryAfterMs) loading = null;
    if (!loading) {
      failedAt = 0;
      loading = load();
      loading.catch(() => {
        failedAt = now();
      });
    }
    return loading;
  }

  return {
    id: `local:${options.model}`,
    async transcribe(audio, signal) {
      if (!isWav(audio.buffer)) {
        throw new SpeechError('The local speech-to-text model reads WAV audio only: send a WAV file, or configure ElevenLabs or an OpenAI-compatible speech-to-text server for other formats', 'format');
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
