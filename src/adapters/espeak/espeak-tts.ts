/**
 * The offline text-to-speech engine: espeak-ng (./espeak-wasm.ts) sentence by sentence, each
 * sentence's PCM encoded as it comes (../tts/encoders.ts), so the first bytes leave after the first
 * sentence. Voice: the catalog's `offlineVoice` (`en-us+f3`, `ar+m1`), else `ar` for Arabic text,
 * else `en-us`. `speed` (percent) scales espeak's 175 words per minute, bounded to 80–450.
 * Ignored: model, stability, similarity boost and style (espeak has no such settings).
 */
import { OUTPUT_FORMATS, type TextToSpeech } from '../../ports/text-to-speech.js';
import { createEncoder } from '../tts/encoders.js';
import { splitSentences } from '../tts/sentences.js';
import { espeakEngine } from './espeak-wasm.js';

const NORMAL_WPM = 175;

export function wordsPerMinute(speedPercent: number | undefined): number {
  const wpm = Math.round((NORMAL_WPM * (speedPercent ?? 100)) / 100);
  return Math.min(450, Math.max(80, wpm));
}

export function offlineVoiceOf(offlineVoice: string | undefined, languageCode: string | undefined): string {
  if (offlineVoice && /^[a-z]{2,3}(-[a-z0-9]+)?(\+[a-z0-9]+)?$/i.test(offlineVoice)) return offlineVoice;
  return languageCode?.toLowerCase().startsWith('ar') ? 'ar' : 'en-us';
}

/** Lets other work (and the client's disconnect) in between two sentences. */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createEspeakTts(): TextToSpeech {
  return {
    id: 'espeak-ng',
    formats: OUTPUT_FORMATS,
    async *synthesize(request, signal) {
      const engine = await espeakEngine();
      const voice = offlineVoiceOf(request.voice.offlineVoice, request.languageCode);
      const rate = wordsPerMinute(request.speed);
      let encoder: ReturnType<typeof createEncoder> | null = null;
      for (const sentence of splitSentences(request.text)) {
        signal.throwIfAborted();
        const pcm = engine.speak(voice, rate, sentence);
        encoder ??= createEncoder(request.format, pcm.sampleRate);
        const bytes = encoder.push(pcm.samples);
        if (bytes.length) yield bytes;
        await yieldToLoop();
      }
      signal.throwIfAborted();
      const rest = (encoder ?? createEncoder(request.format, 22_050)).end();
      if (rest.length) yield rest;
    },
  };
}
