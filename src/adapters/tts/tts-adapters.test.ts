import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { createCpuPool } from '../../lib/cpu-pool.js';
import { ttsFromConfig } from './tts-adapters.js';

const pool = createCpuPool({ threads: 1, kinds: { speech: { queue: 1 } } });
const engine = (env: Record<string, string>) => ttsFromConfig(loadConfig({ NODE_ENV: 'test', ...env }).tts, pool);

describe('ttsFromConfig', () => {
  it('prefers ElevenLabs, then the OpenAI speech protocol, then the offline engine', () => {
    expect(engine({ ELEVENLABS_API_KEY: 'xi-key', TTS_URL: 'http://127.0.0.1:1/v1' }).tts?.id).toBe(
      'elevenlabs:eleven_turbo_v2_5',
    );
    expect(engine({ TTS_URL: 'http://127.0.0.1:1/v1', TTS_MODEL: 'kokoro' }).tts?.id).toBe('openai:kokoro');
    // espeak-ng is installed here (optional dependency); without it, `reason` says what to configure.
    expect(engine({}).tts?.id).toBe('espeak-ng');
    expect(engine({ TTS_MAX_TEXT_CHARS: '200' }).maxTextChars).toBe(200);
  });
});
