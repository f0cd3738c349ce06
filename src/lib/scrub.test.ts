import { describe, expect, it } from 'vitest';
import { createScrubber, scrubShapes } from './scrub.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('createScrubber', () => {
  const password = 'p@ss w/rd+&=?é9Z';
  const scrub = createScrubber([`admin-user:${password}`]);

  it('masks the secret in every encoding it travels in', () => {
    const forms = [
      password,
      `admin-user:${password}`,
      b64(`admin-user:${password}`),
      b64(password),
      Buffer.from(password).toString('base64url'),
      encodeURIComponent(password),
      encodeURIComponent(password).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
      new URLSearchParams({ p: password }).toString().slice(2),
      JSON.stringify(password).slice(1, -1),
      b64('admin-user'),
    ];
    for (const form of forms) {
      const text = `before ${form} after`;
      expect(scrub(text), form).not.toContain(form);
      expect(scrub(text)).toMatch(/^before .*•••• ?.*after$/);
    }
  });

  it('finds the password inside any longer base64 text, whatever precedes it', () => {
    for (const prefix of ['a', 'ab', 'abc', '\u0000someone\u0000', 'agent@acme.test/token:']) {
      const encoded = b64(`${prefix}${password}`);
      const scrubbed = scrub(`x ${encoded} y`);
      // What remains of the base64 text no longer decodes to the password.
      expect(scrubbed).not.toContain(encoded);
      expect(Buffer.from(scrubbed.slice(2, -2).replace(/•+/g, ''), 'base64').toString('latin1')).not.toContain('ss w/');
    }
  });

  it('leaves text without secrets alone', () => {
    expect(scrub('Ticket #12 opened for admin.')).toBe('Ticket #12 opened for admin.');
  });
});

describe('scrubShapes', () => {
  it('masks credentials by their shape', () => {
    expect(scrubShapes('got Authorization: Bearer abc123def456 and basic dXNlcjpwYXNzd29yZA==')).toBe(
      'got Authorization: Bearer •••• and basic ••••',
    );
    expect(scrubShapes('see https://bob:s3cret@api.example.com/x')).toBe('see https://bob:••••@api.example.com/x');
    expect(scrubShapes('GET /x?access_token=abc&page=2&api_key=zzz')).toBe(
      'GET /x?access_token=••••&page=2&api_key=••••',
    );
    expect(scrubShapes('jwt eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlX2hlcmU end')).toBe('jwt •••• end');
    expect(scrubShapes('k -----BEGIN PRIVATE KEY-----\nMIIEvQ==\n-----END PRIVATE KEY----- z')).toBe(
      'k -----BEGIN PRIVATE KEY-----•••• z',
    );
  });

  it('keeps ordinary words that follow a scheme name', () => {
    expect(scrubShapes('Basic authentication failed; Bearer token missing')).toBe(
      'Basic authentication failed; Bearer token missing',
    );
  });
});
