import { describe, expect, it } from 'vitest';
import { maskSecret, mergeConfig } from './integrations.secrets.js';

describe('maskSecret', () => {
  it('shows the last four characters of long secrets only', () => {
    expect(maskSecret('xoxb-1234-5678-abcdefghijklmnop')).toBe('••••mnop');
    expect(maskSecret('hunter2')).toBe('••••');
    expect(maskSecret({ private_key_id: '0123456789abcdef0123', private_key: 'k' })).toBe('••••0123');
    expect(maskSecret({ private_key: 'k' })).toBe('••••');
  });
});

describe('mergeConfig', () => {
  const current = { bot_token: 'xoxb-1234-5678-abcdefghijklmnop', channel: '#support', base_url: 'https://x.test' };
  const secrets = ['bot_token'];

  it('puts sent keys on the stored ones, removes null ones, and keeps a secret sent back masked', () => {
    expect(mergeConfig(current, { channel: '#ops', base_url: null, bot_token: '••••mnop' }, secrets)).toEqual({
      config: { bot_token: current.bot_token, channel: '#ops' },
    });
    expect(mergeConfig(current, { bot_token: 'xoxb-new' }, secrets)).toEqual({
      config: { ...current, bot_token: 'xoxb-new' },
    });
  });

  it('refuses a mask that is not the stored secret', () => {
    expect(mergeConfig(current, { bot_token: '••••zzzz' }, secrets)).toMatchObject({ key: 'bot_token' });
    expect(mergeConfig({ channel: '#a' }, { bot_token: '••••' }, secrets)).toMatchObject({ key: 'bot_token' });
  });
});
