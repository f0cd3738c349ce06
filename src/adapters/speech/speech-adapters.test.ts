import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { speechFromConfig } from './speech-adapters.js';

const modelsDir = mkdtempSync(path.join(tmpdir(), 'models-'));
afterAll(() => rmSync(modelsDir, { recursive: true, force: true }));

describe('speechFromConfig', () => {
  it('serves a local Whisper model unasked only once its files are under MODELS_DIR', () => {
    const none = speechFromConfig(loadConfig({ MODELS_DIR: modelsDir }).speech);
    expect(none.stt).toBeNull();
    expect(none.reason).toBe(
      `Speech-to-text is not configured: set ELEVENLABS_API_KEY, or STT_URL (an OpenAI-compatible Whisper server), or put the Whisper model onnx-community/whisper-base under ${modelsDir}, to send audio`,
    );
    mkdirSync(path.join(modelsDir, 'onnx-community', 'whisper-base', 'onnx'), { recursive: true });
    expect(speechFromConfig(loadConfig({ MODELS_DIR: modelsDir }).speech).stt?.id).toBe(
      'local:onnx-community/whisper-base',
    );
  });

  it('names the engine of each provider', () => {
    expect(speechFromConfig(loadConfig({ ELEVENLABS_API_KEY: 'xi-1' }).speech).stt?.id).toBe('elevenlabs:scribe_v2');
    expect(speechFromConfig(loadConfig({ STT_URL: 'http://127.0.0.1:1/v1' }).speech).stt?.id).toBe('openai:whisper-1');
    expect(speechFromConfig(loadConfig({ STT_PROVIDER: 'local', MODELS_DIR: '/nowhere' }).speech).stt?.id).toBe(
      'local:onnx-community/whisper-base',
    );
    expect(speechFromConfig(loadConfig({ STT_PROVIDER: 'none' }).speech)).toEqual({
      stt: null,
      reason: 'Speech-to-text is not configured (STT_PROVIDER=none): audio cannot be sent',
    });
  });
});
