/** Speech to text chosen from config (DESIGN §9), or why there is none. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { SpeechConfig } from '../../config.js';
import type { CpuPool } from '../../lib/cpu-pool.js';
import type { SpeechToText } from '../../ports/speech.js';
import { createElevenLabsStt } from '../elevenlabs/elevenlabs-stt.js';
import { createOpenAiStt } from '../openai-compatible/openai-stt.js';
import { createLocalWhisper } from '../transformers/local-whisper.js';

export interface SpeechAdapters {
  stt: SpeechToText | null;
  /** Why `stt` is null: what to configure. */
  reason: string | null;
}

/** `cpu`: the pool where the local engine decodes and resamples its audio. */
export function speechFromConfig(config: SpeechConfig, cpu: CpuPool): SpeechAdapters {
  const { elevenLabs, openAi, local, timeoutMs } = config;
  switch (config.provider) {
    case 'elevenlabs':
      return {
        stt: createElevenLabsStt({
          apiKey: elevenLabs.apiKey!,
          baseUrl: elevenLabs.baseUrl,
          model: elevenLabs.model,
          timeoutMs,
        }),
        reason: null,
      };
    case 'openai-compatible':
      return {
        stt: createOpenAiStt({ baseUrl: openAi.url!, apiKey: openAi.apiKey, model: openAi.model, timeoutMs }),
        reason: null,
      };
    case 'local': {
      const modelDir = path.join(local.modelsDir, local.model);
      // Unnamed, the local engine serves only when its model is already on disk.
      if (!config.explicit && !existsSync(path.join(modelDir, 'onnx'))) {
        return {
          stt: null,
          // Said to any member: what to configure, never where the server keeps its files.
          reason: `Speech-to-text is not configured: set ELEVENLABS_API_KEY, or STT_URL (an OpenAI-compatible Whisper server), or install the Whisper model ${local.model} in the server's models directory (MODELS_DIR), to send audio`,
        };
      }
      return { stt: createLocalWhisper(local, cpu), reason: null };
    }
    case 'none':
      return { stt: null, reason: 'Speech-to-text is not configured (STT_PROVIDER=none): audio cannot be sent' };
  }
}
