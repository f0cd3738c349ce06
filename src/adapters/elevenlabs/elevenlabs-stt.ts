/**
 * ElevenLabs speech to text (`POST {baseUrl}/v1/speech-to-text`, multipart `file` + `model_id`,
 * `xi-api-key` header) → `{ text, language_code, words, … }`.
 */
import type { SpeechToText } from '../../ports/speech.js';
import { createHttpTranscriber } from '../speech/http-transcription.js';

export interface ElevenLabsSttOptions {
  apiKey: string;
  baseUrl: string;
  model: string;
  timeoutMs: number;
}

export function createElevenLabsStt(options: ElevenLabsSttOptions): SpeechToText {
  return createHttpTranscriber({
    id: `elevenlabs:${options.model}`,
    provider: 'ElevenLabs',
    endpoint: `${options.baseUrl.replace(/\/+$/, '')}/v1/speech-to-text`,
    headers: { 'xi-api-key': options.apiKey },
    // Audio events such as "(laughter)" are not part of what the user asked.
    fields: { model_id: options.model, tag_audio_events: 'false' },
    languageField: 'language_code',
    timeoutMs: options.timeoutMs,
  });
}
