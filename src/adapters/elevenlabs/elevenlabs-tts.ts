/**
 * ElevenLabs text to speech: `POST {baseUrl}/v1/text-to-speech/{voice_id}/stream?output_format=…`,
 * header `xi-api-key`, body `{ text, model_id, language_code?, voice_settings }`; the audio is
 * streamed through as it comes. Every output format is the provider's own. `speed` (percent) is
 * sent as voice_settings.speed, a factor bounded to the provider's 0.7–1.2.
 */
import { OUTPUT_FORMATS, type TextToSpeech } from '../../ports/text-to-speech.js';
import { streamSpeech } from '../tts/http-speech.js';

export interface ElevenLabsTtsOptions {
  apiKey: string;
  baseUrl: string;
  /** The default model (a fast turbo one) when the request names none. */
  model: string;
  timeoutMs: number;
}

export function createElevenLabsTts(options: ElevenLabsTtsOptions): TextToSpeech {
  const base = options.baseUrl.replace(/\/+$/, '');
  return {
    id: `elevenlabs:${options.model}`,
    formats: OUTPUT_FORMATS,
    synthesize(request, signal) {
      const settings = {
        stability: request.stability ?? 0.5,
        similarity_boost: request.similarityBoost ?? 0.75,
        style: request.style ?? 0,
        use_speaker_boost: true,
        ...(request.speed !== undefined ? { speed: Math.min(1.2, Math.max(0.7, request.speed / 100)) } : {}),
      };
      const voice = encodeURIComponent(request.voice.voiceId);
      return streamSpeech(
        {
          provider: 'ElevenLabs',
          endpoint: `${base}/v1/text-to-speech/${voice}/stream?output_format=${request.format}`,
          headers: { 'xi-api-key': options.apiKey, accept: 'audio/*' },
          body: {
            text: request.text,
            model_id: request.modelId ?? options.model,
            ...(request.languageCode ? { language_code: request.languageCode } : {}),
            voice_settings: settings,
          },
          timeoutMs: options.timeoutMs,
        },
        signal,
      );
    },
  };
}
