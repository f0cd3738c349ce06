/**
 * Speech to text over the OpenAI transcriptions protocol (`POST {baseUrl}/audio/transcriptions`,
 * multipart `file` + `model` → `{ text }`): OpenAI itself, and the Whisper servers that speak it
 * (whisper.cpp's server, faster-whisper / Speaches, vLLM, LocalAI).
 */
import type { SpeechToText } from '../../ports/speech.js';
import { postTranscription, transcriptOf } from '../speech/http-transcription.js';

export interface OpenAiSttOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

export function createOpenAiStt(options: OpenAiSttOptions): SpeechToText {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/audio/transcriptions`;
  return {
    id: `openai:${options.model}`,
    async transcribe(audio, signal) {
      const body = await postTranscription({
        provider: 'The speech-to-text provider',
        endpoint,
        headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
        // json is the format every model and server of the protocol answers in.
        fields: { model: options.model, response_format: 'json' },
        audio,
        timeoutMs: options.timeoutMs,
        signal,
        fetch: options.fetch,
      });
      return transcriptOf('The speech-to-text provider', body, 'language');
    },
  };
}
