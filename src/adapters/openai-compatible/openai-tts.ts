/**
 * Text to speech over OpenAI's speech protocol (`POST {baseUrl}/audio/speech`, bearer key,
 * `{ model, input, voice, response_format, speed }`, audio streamed back): OpenAI, Kokoro-FastAPI,
 * LocalAI, openedai-speech. The protocol's formats do not name a rate or a bitrate, so this engine
 * serves the formats it can honour: `mp3_*` as the server's MP3 (its own rate and bitrate),
 * `pcm_24000` (the protocol's raw PCM is 24 kHz 16-bit mono) and `wav_24000` (that PCM in our
 * streamed WAV header). Other formats are refused with the list. `speed` (percent) is the
 * protocol's factor, bounded to 0.25–4; stability, similarity boost and style are ignored.
 */
import type { OutputFormat, TextToSpeech } from '../../ports/text-to-speech.js';
import { wavHeader } from '../tts/encoders.js';
import { streamSpeech } from '../tts/http-speech.js';

export interface OpenAiTtsOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

const FORMATS: readonly OutputFormat[] = [
  'mp3_22050_32',
  'mp3_44100_64',
  'mp3_44100_96',
  'mp3_44100_128',
  'mp3_44100_192',
  'pcm_24000',
  'wav_24000',
];

export function createOpenAiTts(options: OpenAiTtsOptions): TextToSpeech {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/audio/speech`;
  return {
    id: `openai:${options.model}`,
    formats: FORMATS,
    async *synthesize(request, signal) {
      const mp3 = request.format.startsWith('mp3_');
      const body = {
        model: request.modelId ?? options.model,
        input: request.text,
        voice: request.voice.voiceId,
        response_format: mp3 ? 'mp3' : 'pcm',
        ...(request.speed !== undefined ? { speed: Math.min(4, Math.max(0.25, request.speed / 100)) } : {}),
      };
      const headers: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
      let first = request.format === 'wav_24000';
      const post = { provider: 'The text-to-speech provider', endpoint, headers, body, timeoutMs: options.timeoutMs };
      for await (const chunk of streamSpeech(post, signal)) {
        if (first) {
          first = false;
          yield wavHeader(24_000);
        }
        yield chunk;
      }
    },
  };
}
