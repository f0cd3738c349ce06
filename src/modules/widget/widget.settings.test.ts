import { describe, expect, it } from 'vitest';
import { checkOrigin, directionOf, originAllowed, parseSettings, SettingsProblem } from './widget.settings.js';

describe('widget settings', () => {
  it.each([
    ['https://shop.example.com', 'https://shop.example.com'],
    ['https://shop.example.com/', 'https://shop.example.com'],
    ['HTTP://LOCALHOST:3000', 'http://localhost:3000'],
  ])('accepts the origin %s as %s', (raw, origin) => {
    expect(checkOrigin(raw, false)).toBe(origin);
  });

  it.each([
    'https://shop.example.com/shop',
    'https://shop.example.com?x=1',
    'https://user@shop.example.com',
    'https://shop.example.com:443',
    'https://*.example.com',
    'shop.example.com',
    'javascript:alert(1)',
    '*',
  ])('refuses %s', (raw) => {
    expect(() => checkOrigin(raw, false)).toThrow(SettingsProblem);
  });

  it('accepts * only when the instance allows any origin', () => {
    expect(checkOrigin('*', true)).toBe('*');
    expect(originAllowed({ allowed_origins: ['*'] }, 'https://a.example')).toBe(true);
    expect(originAllowed({ allowed_origins: [] }, 'https://a.example')).toBe(false);
  });

  it.each([
    ['ar', 'rtl'],
    ['ar-SA', 'rtl'],
    ['he', 'rtl'],
    ['fa', 'rtl'],
    ['ur', 'rtl'],
    ['pa-Arab', 'rtl'],
    ['en', 'ltr'],
    ['fr-CA', 'ltr'],
  ])('writes %s %s', (language, direction) => {
    expect(directionOf(language)).toBe(direction);
  });

  it('fills the defaults and tells what to do with the identity secret', () => {
    expect(parseSettings({}, false)).toMatchObject({
      settings: { title: 'Chat with us', position: 'bottom-right', allowed_origins: [] },
      secret: { kind: 'keep' },
    });
    expect(parseSettings({ identity_secret: null }, false).secret.kind).toBe('remove');
    expect(parseSettings({ identity_secret: 'x'.repeat(16) }, false).secret).toEqual({
      kind: 'set',
      plain: 'x'.repeat(16),
    });
  });
});
