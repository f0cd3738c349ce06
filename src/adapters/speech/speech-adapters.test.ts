import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { createCpuPool } from '../../lib/cpu-pool.js';
import { withoutServerPaths } from '../transformers/pipeline-loader.js';
import { speechFromConfig } from './speech-adapters.js';

const modelsDir = mkdtempSync(path.join(tmpdir(), 'models-'));
const pool = createCpuPool({ threads: 1, kinds: { speech: { queue: 1 } } });
afterAll(async () => {
  rmSync(modelsDir, { recursive: true, force: true });
  await pool.close(0);
});

describe('speechFromConfig', () => {
  it('serves a local Whisper model unasked only once its files are under MODELS_DIR', () => {
    const none = speechFromConfig(loadConfig({ MODELS_DIR: modelsDir }).speech, pool);
    expect(none.stt).toBeNull();
    expect(none.reason).toBe(
      "Speech-to-text is not configured: set ELEVENLABS_API_KEY, or STT_URL (an OpenAI-compatible Whisper server), or install the Whisper model onnx-community/whisper-base in the server's models directory (MODELS_DIR), to send audio",
    );
    // Said to any member: no path of the server.
    expect(none.reason).not.toContain(modelsDir);
    mkdirSync(path.join(modelsDir, 'onnx-community', 'whisper-base', 'onnx'), { recursive: true });
    expect(speechFromConfig(loadConfig({ MODELS_DIR: modelsDir }).speech, pool).stt?.id).toBe(
      'local:onnx-community/whisper-base',
    );
  });

  it('names the engine of each provider', () => {
    expect(speechFromConfig(loadConfig({ ELEVENLABS_API_KEY: 'xi-1' }).speech, pool).stt?.id).toBe(
      'elevenlabs:scribe_v2',
    );
    expect(speechFromConfig(loadConfig({ STT_URL: 'http://127.0.0.1:1/v1' }).speech, pool).stt?.id).toBe(
      'openai:whisper-1',
    );
    expect(speechFromConfig(loadConfig({ STT_PROVIDER: 'local', MODELS_DIR: '/nowhere' }).speech, pool).stt?.id).toBe(
      'local:onnx-community/whisper-base',
    );
    expect(speechFromConfig(loadConfig({ STT_PROVIDER: 'none' }).speech, pool)).toEqual({
      stt: null,
      reason: 'Speech-to-text is not configured (STT_PROVIDER=none): audio cannot be sent',
    });
  });
});

describe('withoutServerPaths', () => {
  it('names the models directory by its setting and hides any other absolute path', () => {
    const message = `onnx-community/whisper-base could not be loaded from ${modelsDir}: Could not locate file: "${modelsDir}/onnx-community/whisper-base/onnx/encoder_model_quantized.onnx" (see /usr/lib/node/x.js; https://huggingface.co/onnx-community)`;
    const said = withoutServerPaths(message, modelsDir);
    expect(said).toBe(
      'onnx-community/whisper-base could not be loaded from MODELS_DIR: Could not locate file: "MODELS_DIR/onnx-community/whisper-base/onnx/encoder_model_quantized.onnx" (see <path>; https://huggingface.co/onnx-community)',
    );
    expect(withoutServerPaths('from ./models: no file ./models/a', './models')).toBe(
      'from MODELS_DIR: no file MODELS_DIR/a',
    );
  });
});
