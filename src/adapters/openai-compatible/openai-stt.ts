/**
 * Speech to text over the OpenAI transcriptions protocol (`POST {baseUrl}/audio/transcriptions`,
 * multipart `file` + `model` → `{ text }`): OpenAI itself, and the Whisper servers that speak it
 * (whisper.cpp's server, faster-whisper / Speaches, vLLM, LocalAI).
 */
import type { SpeechToText } from '../../ports/speech.js';
import { createHttpTranscriber } from '../speech/http-transcription.js';

export interface OpenAiSttOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

export function createOpenAiStt(options: OpenAiSttOptions): SpeechToText {
  return createHttpTranscriber({
    id: `openai:${options.model}`,
    provider: 'The speech-to-text provider',
    endpoint: `${options.baseUrl.replace(/\/+$/, '')}/audio/transcriptions`,
    headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
    // json is the format every model and server of the protocol answers in (no language in it).
    fields: { model: options.model, response_format: 'json' },
    languageField: 'language',
    timeoutMs: options.timeoutMs,
  });
}
