import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSecretBox, isSealed, loadSecretKey, SecretBoxError } from './secret-box.js';

describe('secret box', () => {
  const box = createSecretBox(randomBytes(32));

  it('seals to an enc:v1 value that opens only with the same key and context', () => {
    const sealed = box.seal('xoxb-secret', 'integration:a:b:bot_token');
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain('xoxb');
    expect(box.open(sealed, 'integration:a:b:bot_token')).toBe('xoxb-secret');
    expect(box.seal('xoxb-secret', 'x')).not.toBe(box.seal('xoxb-secret', 'x'));
    expect(() => box.open(sealed, 'integration:a:c:bot_token')).toThrow(SecretBoxError);
    expect(() => createSecretBox(randomBytes(32)).open(sealed, 'integration:a:b:bot_token')).toThrow(SecretBoxError);
  });

  it('refuses altered and truncated values', () => {
    const sealed = box.seal('value', 'c');
    const body = Buffer.from(sealed.slice('enc:v1:'.length), 'base64url');
    body[body.length - 1]! ^= 1;
    expect(() => box.open(`enc:v1:${body.toString('base64url')}`, 'c')).toThrow(SecretBoxError);
    expect(() => box.open('enc:v1:AAAA', 'c')).toThrow(SecretBoxError);
    expect(() => box.open('plain', 'c')).toThrow(SecretBoxError);
  });
});

describe('loadSecretKey', () => {
  it('uses SECRET_KEY when given, else creates DATA_DIR/secret.key once (mode 0600) and reuses it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'switchboard-key-'));
    try {
      const configured = randomBytes(32);
      expect(loadSecretKey({ configuredHex: configured.toString('hex'), dataDir: dir }).equals(configured)).toBe(true);
      const generated: string[] = [];
      const first = loadSecretKey({
        configuredHex: undefined,
        dataDir: path.join(dir, 'data'),
        onGenerated: (file) => generated.push(file),
      });
      const file = path.join(dir, 'data', 'secret.key');
      expect(generated).toEqual([file]);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await readFile(file, 'utf8')).trim()).toBe(first.toString('hex'));
      const again = loadSecretKey({
        configuredHex: undefined,
        dataDir: path.join(dir, 'data'),
        onGenerated: (f) => generated.push(f),
      });
      expect(again.equals(first)).toBe(true);
      expect(generated).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
