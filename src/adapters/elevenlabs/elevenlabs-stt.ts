/**
 * ElevenLabs speech to text (`POST {baseUrl}/v1/speech-to-text`, multipart `file` + `model_id`,
 * `xi-api-key` header) → `{ text, language_code, words, … }`.
 */
import type { SpeechToText } from '../../ports/speech.js';
import { postTranscription, transcriptOf } from '../speech/http-transcription.js';

export interface ElevenLabsSttOptions {
  apiKey: string;
  baseUrl: string;
  model: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

export function createElevenLabsStt(options: ElevenLabsSttOptions): SpeechToText {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/v1/speech-to-text`;
  return {
    id: `elevenlabs:${options.model}`,
    async transcribe(audio, signal) {
      const body = await postTranscription({
        provider: 'ElevenLabs',
        endpoint,
        headers: { 'xi-api-key': options.apiKey },
        // Audio events such as "(laughter)" are not part of what the user asked.
        fields: { model_id: options.model, tag_audio_events: 'false' },
        audio,
        timeoutMs: options.timeoutMs,
        signal,
        fetch: options.fetch,
      });
      return transcriptOf('ElevenLabs', body, 'language_code');
    },
  };
}
