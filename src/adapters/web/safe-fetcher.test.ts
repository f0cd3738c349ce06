import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressRange, createSafeFetcher, isBlockedAddress, type ResolveAll } from './safe-fetcher.js';

/** Every special range of both families, with the name the guard gives it. */
const REFUSED: [address: string, range: string][] = [
  // IPv4
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['10.1.2.3', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.1', 'private'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.169.254', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.254', 'carrierGradeNat'],
  ['192.0.0.8', 'reserved'],
  ['192.0.2.1', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['198.19.255.254', 'reserved'],
  ['198.51.100.1', 'reserved'],
  ['203.0.113.1', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['192.175.48.1', 'as112'],
  ['192.52.193.1', 'amt'],
  // IPv6
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['fe80::1', 'linkLocal'],
  ['fe80::1%eth0', 'linkLocal'],
  ['fc00::1', 'uniqueLocal'],
  ['fd00::1', 'uniqueLocal'],
  ['fec0::1', 'deprecatedSiteLocal'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'multicast'],
  ['100::1', 'discard'],
  ['2001:db8::1', 'reserved'],
  ['2001:100::1', 'reserved'],
  ['3fff::1', 'reserved'],
  ['5f00::1', 'segmentRouting'],
  ['2001:2::1', 'benchmarking'],
  ['2001:3::1', 'amt'],
  ['2001:4:112::1', 'as112v6'],
  ['2001:10::1', 'deprecatedOrchid'],
  ['2001:20::1', 'orchid2'],
  ['2001:30::1', 'droneRemoteIdProtocolEntityTags'],
  // IPv6 outside 2000::/3, which ipaddr.js would call unicast
  ['4000::1', 'reserved'],
  ['e000::1', 'reserved'],
  // IPv6 forms that embed an IPv4 address: refused whatever the embedded address
  ['::ffff:127.0.0.1', 'ipv4Mapped'],
  ['::ffff:7f00:1', 'ipv4Mapped'],
  ['::ffff:8.8.8.8', 'ipv4Mapped'],
  ['::7f00:1', 'ipv4Compatible'],
  ['::127.0.0.1', 'ipv4Compatible'],
  ['::8.8.8.8', 'ipv4Compatible'],
  ['::ffff:0:7f00:1', 'rfc6145'],
  ['::ffff:0:8.8.8.8', 'rfc6145'],
  ['2002:7f00:1::', '6to4'],
  ['2002:808:808::1', '6to4'],
  ['2001::1', 'teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
  ['64:ff9b::7f00:1', 'rfc6052'],
  ['64:ff9b::8.8.8.8', 'rfc6052'],
  ['64:ff9b:1::1', 'rfc6052'],
  // not an address at all
  ['example.com', 'invalid'],
  ['0x7f.1', 'invalid'],
  ['', 'invalid'],
];

const ALLOWED = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450::1'];

/** A resolver that answers from a table (several answers per name, in turn) and records its questions. */
function fakeResolver(answers: Record<string, (string | Error)[]>) {
  const asked: string[] = [];
  const resolve: ResolveAll = async (hostname) => {
    asked.push(hostname);
    const queue = answers[hostname];
    const answer = queue && queue.length > 1 ? queue.shift()! : queue?.[0];
    if (answer === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    if (answer instanceof Error) throw answer;
    return answer.split(',').map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked };
}

describe('addressRange', () => {
  it.each(REFUSED)('refuses %s as %s', (address, range) => {
    expect(addressRange(address)).toBe(range);
    expect(isBlockedAddress(address)).toBe(true);
  });
  it.each(ALLOWED)('allows the global unicast address %s', (address) => {
    expect(addressRange(address)).toBe('unicast');
    expect(isBlockedAddress(address)).toBe(false);
  });
});

describe('createSafeFetcher with the private network refused', () => {
  const { resolve, asked } = fakeResolver({});
  const fetcher = createSafeFetcher({ allowPrivate: false, timeoutMs: 2000, maxBytes: 1024, resolve });
  afterAll(() => fetcher.close());

  const literal = (address: string) => (address.includes(':') ? `[${address}]` : address);
  // A zone index cannot be written in a URL.
  const literals = REFUSED.filter(([address, range]) => range !== 'invalid' && !address.includes('%'));

  it.each(literals)('refuses the literal address %s (%s) before any connection', async (address, range) => {
    const url = `http://${literal(address)}:1/`;
    const reason = new RegExp(`private or reserved address \\(${range}\\)`);
    await expect(fetcher.fetchPage(url)).rejects.toThrow(reason);
    await expect(fetcher.checkUrl(url)).rejects.toThrow(reason);
  });

  it.each([
    ['http://localhost:8080/', /private or reserved/],
    ['http://LOCALHOST./', /private or reserved/],
    ['http://api.localhost/', /private or reserved/],
    ['http://metadata.google.internal/computeMetadata/v1/', /private or reserved/],
    ['http://0x7f.1/', /private or reserved/],
    ['http://2130706433/', /private or reserved/],
    ['http://user:secret@example.com/', /credentials/],
    ['http://user@example.com/', /credentials/],
    ['ftp://example.com/file', /Only http and https/],
    ['file:///etc/passwd', /Only http and https/],
    ['not a url', /Not a valid URL/],
  ])('refuses %s', async (url, reason) => {
    await expect(fetcher.fetchPage(url)).rejects.toThrow(reason);
    await expect(fetcher.checkUrl(url)).rejects.toThrow(reason);
  });

  it('never names the password of a URL it refuses', async () => {
    const error = (await fetcher.checkUrl('http://user:hunter2@example.com/').catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/credentials/);
    expect(error.message).not.toContain('hunter2');
  });

  it('asks no resolver about literal addresses or local names', () => {
    expect(asked).toEqual([]);
  });
});

describe('checkUrl resolves the name and checks every answer', () => {
  const refusedAnswers = REFUSED.filter(([, range]) => range !== 'invalid');
  const answers: Record<string, string[]> = {
    'public.test': ['93.184.216.34,2606:4700:4700::1111'],
    'mixed.test': ['93.184.216.34,10.0.0.7'],
  };
  refusedAnswers.forEach(([address], i) => (answers[`refused-${i}.test`] = [address.replace(/%.*/, '')]));
  const { resolve } = fakeResolver(answers);
  const fetcher = createSafeFetcher({ allowPrivate: false, timeoutMs: 2000, maxBytes: 1024, resolve });
  afterAll(() => fetcher.close());

  it.each(refusedAnswers.map(([address, range], i) => [`refused-${i}.test`, address, range]))(
    'refuses %s, which resolves to %s (%s)',
    async (name, address, range) => {
      const reason = new RegExp(`resolves to a private or reserved address \\(.*, ${range}\\)`);
      await expect(fetcher.checkUrl(`https://${name}/page`)).rejects.toThrow(reason);
    },
  );

  it('refuses a name when one of its answers is refused', async () => {
    await expect(fetcher.checkUrl('http://mixed.test/')).rejects.toThrow(/10\.0\.0\.7, private/);
  });

  it('accepts a name whose answers are all public', async () => {
    expect((await fetcher.checkUrl('https://public.test/a?b=1')).href).toBe('https://public.test/a?b=1');
  });

  it('refuses a name that does not resolve', async () => {
    await expect(fetcher.checkUrl('http://nowhere.test/')).rejects.toThrow(
      /nowhere\.test could not be resolved \(ENOTFOUND\)/,
    );
  });

  it('asks nothing when the private network is allowed', async () => {
    const lenient = fakeResolver({});
    const open = createSafeFetcher({ allowPrivate: true, timeoutMs: 2000, maxBytes: 1024, resolve: lenient.resolve });
    expect((await open.checkUrl('http://nowhere.test/')).hostname).toBe('nowhere.test');
    expect(lenient.asked).toEqual([]);
    await expect(open.checkUrl('http://user:pw@nowhere.test/')).rejects.toThrow(/credentials/);
    await open.close();
  });
});

describe('fetchPage checks the addresses it connects to', () => {
  let site: Server;
  let port: number;
  beforeAll(async () => {
    site = createServer((_, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('hello'));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    port = (site.address() as AddressInfo).port;
  });
  afterAll(async () => {
    site.closeAllConnections();
    await new Promise((resolve) => site.close(resolve));
  });

  it('connects through the configured resolver (the local site is reachable when allowed)', async () => {
    const { resolve, asked } = fakeResolver({ 'site.test': ['127.0.0.1'] });
    const open = createSafeFetcher({ allowPrivate: true, timeoutMs: 5000, maxBytes: 1024, resolve });
    expect((await open.fetchPage(`http://site.test:${port}/`)).body).toBe('hello');
    expect(asked).toContain('site.test');
    await open.close();
  });

  it.each(['127.0.0.1', '::ffff:127.0.0.1', '::7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::', '10.0.0.1,127.0.0.1'])(
    'refuses a name that resolves to %s at connect time',
    async (answer) => {
      const { resolve } = fakeResolver({ 'site.test': [answer] });
      const fetcher = createSafeFetcher({ allowPrivate: false, timeoutMs: 5000, maxBytes: 1024, resolve });
      await expect(fetcher.fetchPage(`http://site.test:${port}/`)).rejects.toThrow(
        /site\.test resolves to a private or reserved address/,
      );
      await fetcher.close();
    },
  );

  it('refuses a name that answers publicly at the check and privately at the fetch (DNS rebinding)', async () => {
    const { resolve } = fakeResolver({ 'rebind.test': ['93.184.216.34', '127.0.0.1'] });
    const fetcher = createSafeFetcher({ allowPrivate: false, timeoutMs: 5000, maxBytes: 1024, resolve });
    await expect(fetcher.checkUrl(`http://rebind.test:${port}/`)).resolves.toBeInstanceOf(URL);
    await expect(fetcher.fetchPage(`http://rebind.test:${port}/`)).rejects.toThrow(
      /rebind\.test resolves to a private or reserved address \(127\.0\.0\.1, loopback\)/,
    );
    await fetcher.close();
  });

  it('checks every redirect again (credentials in a Location are refused)', async () => {
    const redirecting = createServer((_, response) =>
      response.writeHead(302, { location: `http://user:pw@127.0.0.1:${port}/` }).end(),
    );
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const open = createSafeFetcher({ allowPrivate: true, timeoutMs: 5000, maxBytes: 1024 });
    const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/`;
    await expect(open.fetchPage(url)).rejects.toThrow(/credentials/);
    await open.close();
    redirecting.closeAllConnections();
    await new Promise((resolve) => redirecting.close(resolve));
  });
});

describe('createSafeFetcher with the system resolver', () => {
  it("refuses this machine's name when it resolves to loopback, at the check and at connect time", async () => {
    const { hostname } = await import('node:os');
    const { lookup } = await import('node:dns/promises');
    const name = hostname();
    const resolved = await lookup(name).catch(() => null);
    if (!resolved || !isBlockedAddress(resolved.address)) return; // this machine's name is public: nothing to check
    const fetcher = createSafeFetcher({ allowPrivate: false, timeoutMs: 2000, maxBytes: 1024 });
    await expect(fetcher.checkUrl(`http://${name}:1/`)).rejects.toThrow(/resolves to a private or reserved address/);
    await expect(fetcher.fetchPage(`http://${name}:1/`)).rejects.toThrow(/resolves to a private or reserved address/);
    await fetcher.close();
  });
});
