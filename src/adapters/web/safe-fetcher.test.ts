import { describe, expect, it } from 'vitest';
import { createSafeFetcher, isBlockedAddress } from './safe-fetcher.js';

describe('isBlockedAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
  ])('blocks %s', (address) => expect(isBlockedAddress(address)).toBe(true));
  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111'])('allows %s', (address) =>
    expect(isBlockedAddress(address)).toBe(false),
  );
});

describe('createSafeFetcher with the private network refused', () => {
  const fetcher = createSafeFetcher({ allowPrivate: false, timeoutMs: 2000, maxBytes: 1024 });

  it.each([
    ['http://127.0.0.1:1/', /private or reserved/],
    ['http://[::1]/', /private or reserved/],
    ['http://169.254.169.254/latest/meta-data/', /private or reserved/],
    ['http://localhost:8080/', /private or reserved/],
    ['ftp://example.com/file', /Only http and https/],
    ['file:///etc/passwd', /Only http and https/],
  ])('refuses %s', async (url, reason) => {
    await expect(fetcher.fetchPage(url)).rejects.toThrow(reason);
  });
});

describe('createSafeFetcher checks the address a name resolves to', () => {
  it('refuses a host name that resolves to loopback (checked at connect time)', async () => {
    const { hostname } = await import('node:os');
    const { lookup } = await import('node:dns/promises');
    const name = hostname();
    const resolved = await lookup(name).catch(() => null);
    if (!resolved || !isBlockedAddress(resolved.address)) return; // this machine's name is public: nothing to check
    const fetcher = createSafeFetcher({ allowPrivate: false, timeoutMs: 2000, maxBytes: 1024 });
    await expect(fetcher.fetchPage(`http://${name}:1/`)).rejects.toThrow(/resolves to a private or reserved address/);
  });
});
