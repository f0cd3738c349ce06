import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('LLM_PROVIDERS and CHAT_* configuration', () => {
  it('reads providers with defaults and the chat settings', () => {
    const config = loadConfig({
      LLM_PROVIDERS: '[{"name":"openai","api_key":"sk-1","models":["gpt-4o-mini"]},{"name":"ollama","type":"openai-compatible","base_url":"http://127.0.0.1:11434/v1"}]',
      CHAT_HEARTBEAT_MS: '5000',
    });
    expect(config.chat.llmProviders).toEqual([
      { name: 'openai', type: 'openai', apiKey: 'sk-1', baseUrl: undefined, models: ['gpt-4o-mini'] },
      { name: 'ollama', type: 'openai-compatible', apiKey: undefined, baseUrl: 'http://127.0.0.1:11434/v1', models: [] },
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
