import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('LLM_PROVIDERS and CHAT_* configuration', () => {
  it('reads providers with defaults and the chat settings', () => {
    const config = loadConfig({
      LLM_PROVIDERS:
        '[{"name":"openai","api_key":"sk-1","models":["gpt-4o-mini"]},{"name":"ollama","type":"openai-compatible","base_url":"http://127.0.0.1:11434/v1"}]',
      CHAT_HEARTBEAT_MS: '5000',
    });
    expect(config.chat.llmProviders).toEqual([
      { name: 'openai', type: 'openai', apiKey: 'sk-1', baseUrl: undefined, models: ['gpt-4o-mini'] },
      {
        name: 'ollama',
        type: 'openai-compatible',
        apiKey: undefined,
        baseUrl: 'http://127.0.0.1:11434/v1',
        models: [],
      },
    ]);
    expect(config.chat).toMatchObject({ heartbeatMs: 5000, historyLimit: 20, retrievalTopK: 4 });
    expect(loadConfig({}).chat.llmProviders).toEqual([]);
  });

  it.each([
    ['not json', /JSON array/],
    ['{"name":"x"}', /must be a JSON array/],
    ['[{"name":"Bad Name","type":"openai"}]', /lowercase word/],
    ['[{"name":"builtin","type":"openai"}]', /other than "builtin"/],
    ['[{"name":"x","type":"gemini"}]', /type must be one of openai, anthropic, openai-compatible/],
    ['[{"name":"x","type":"openai-compatible"}]', /needs base_url/],
    ['[{"name":"x","type":"openai","base_url":"ftp://h"}]', /base_url must be an http/],
    ['[{"name":"x","type":"openai","base_url":"https://h/v1?key=1"}]', /without a query or fragment/],
    ['[{"name":"x","type":"openai","models":"gpt"}]', /models must be an array/],
    ['[{"name":"x","type":"openai"},{"name":"x","type":"anthropic"}]', /duplicate name "x"/],
  ])('refuses LLM_PROVIDERS=%s', (value, message) => {
    expect(() => loadConfig({ LLM_PROVIDERS: value })).toThrow(message);
    expect(() => loadConfig({ LLM_PROVIDERS: value })).toThrow(/LLM_PROVIDERS/);
  });

  it('refuses a heartbeat below 100 ms', () => {
    expect(() => loadConfig({ CHAT_HEARTBEAT_MS: '10' })).toThrow(/CHAT_HEARTBEAT_MS must be between 100/);
  });
});

describe('speech-to-text configuration', () => {
  it('chooses ElevenLabs with its key, else an OpenAI-compatible server at STT_URL, else a local model if present', () => {
    const eleven = loadConfig({ ELEVENLABS_API_KEY: 'xi-1' }).speech;
    expect(eleven).toMatchObject({
      provider: 'elevenlabs',
      explicit: false,
      elevenLabs: { apiKey: 'xi-1', baseUrl: 'https://api.elevenlabs.io', model: 'scribe_v2' },
      timeoutMs: 60_000,
    });
    const whisper = loadConfig({ STT_URL: 'http://127.0.0.1:9000/v1', STT_MODEL: 'large-v3' }).speech;
    expect(whisper).toMatchObject({
      provider: 'openai-compatible',
      openAi: { url: 'http://127.0.0.1:9000/v1', apiKey: undefined, model: 'large-v3' },
    });
    expect(loadConfig({}).speech).toMatchObject({
      provider: 'local',
      explicit: false,
      local: { model: 'onnx-community/whisper-base' },
    });
    expect(loadConfig({ STT_PROVIDER: 'local', STT_LOCAL_MODEL: 'Xenova/whisper-small' }).speech).toMatchObject({
      provider: 'local',
      explicit: true,
      local: { model: 'Xenova/whisper-small' },
    });
    expect(loadConfig({ ELEVENLABS_API_KEY: 'xi-1', STT_PROVIDER: 'none' }).speech.provider).toBe('none');
  });

  it.each([
    [{ STT_PROVIDER: 'whisper' }, /STT_PROVIDER must be one of elevenlabs, openai-compatible, local, none/],
    [{ STT_PROVIDER: 'elevenlabs' }, /ELEVENLABS_API_KEY is required when STT_PROVIDER is elevenlabs/],
    [{ STT_PROVIDER: 'openai-compatible' }, /STT_URL is required when STT_PROVIDER is openai-compatible/],
    [{ STT_URL: 'ftp://host' }, /STT_URL must use one of http:, https:/],
    [{ ELEVENLABS_BASE_URL: 'not a url' }, /ELEVENLABS_BASE_URL must be a URL/],
    [{ STT_TIMEOUT_MS: '5' }, /STT_TIMEOUT_MS must be between 100/],
  ])('refuses %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
