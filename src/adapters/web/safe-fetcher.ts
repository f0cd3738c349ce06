/**
 * Fetches web pages for the knowledge base without becoming a way into the private network:
 * only http(s); the resolved address of every hop (DNS answers included, checked at connect
 * time so a re-resolving name cannot slip through) must be public unless `allowPrivate`;
 * redirects are followed by hand and checked again; a time limit, a size cap and a
 * content-type check apply.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { FetchError, type FetchedPage, type WebFetcher } from '../../ports/web-fetcher.js';

export interface SafeFetcherOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
  userAgent?: string;
}

const ACCEPTED_TYPES = ['text/html', 'application/xhtml+xml', 'text/plain'];

/** Loopback, private, link-local (cloud metadata), CGNAT, multicast and reserved ranges. */
export const blockedAddresses = (() => {
  const list = new BlockList();
  for (const [net, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['224.0.0.0', 3],
  ] as const)
    list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of [
    ['::', 127],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
    ['64:ff9b::', 96],
  ] as const) {
    list.addSubnet(net, prefix, 'ipv6');
  }
  return list;
})();

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blockedAddresses.check(mapped[1]!, 'ipv4');
  return blockedAddresses.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const blocked = addresses.find((entry) => isBlockedAddress(entry.address));
    if (blocked) {
      return callback(
        Object.assign(new Error(`${hostname} resolves to a private or reserved address (${blocked.address})`), {
          code: 'EBLOCKED',
        }),
        '',
        0,
      );
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    return callback(null, first.address, first.family);
  });
};

export function createSafeFetcher(options: SafeFetcherOptions): WebFetcher & { close(): Promise<void> } {
  const agent = new Agent({
    connect: options.allowPrivate ? {} : { lookup: guardedLookup },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const maxRedirects = options.maxRedirects ?? 5;

  function checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new FetchError(`Not a valid URL: ${raw}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new FetchError(`Only http and https URLs can be fetched, got ${url.protocol}`);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!options.allowPrivate && isIP(host) && isBlockedAddress(host)) {
      throw new FetchError(`Refusing to fetch ${url.host}: a private or reserved address`);
    }
    if (!options.allowPrivate && /^(localhost|.*\.localhost|metadata\.google\.internal)$/i.test(host)) {
      throw new FetchError(`Refusing to fetch ${url.host}: a private or reserved address`);
    }
    return url;
  }

  async function fetchPage(raw: string, signal?: AbortSignal): Promise<FetchedPage> {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let url = checkUrl(raw);
    for (let hop = 0; ; hop++) {
      let response: Awaited<ReturnType<typeof request>>;
      try {
        response = await request(url, {
          dispatcher: agent,
          method: 'GET',
          headers: {
            'user-agent': options.userAgent ?? 'Switchboard knowledge fetcher',
            accept: 'text/html,application/xhtml+xml,text/plain;q=0.8',
          },
          signal: combined,
        });
      } catch (error) {
        if (timeout.aborted) throw new FetchError(`Fetching ${url.href} timed out after ${options.timeoutMs} ms`);
        const cause = (error as { cause?: Error }).cause ?? (error as Error);
        throw new FetchError(`Could not fetch ${url.href}: ${cause.message}`);
      }
      const { statusCode, headers, body } = response;
      if (statusCode >= 300 && statusCode < 400 && headers.location) {
        await body.dump();
        if (hop >= maxRedirects) throw new FetchError(`Too many redirects (more than ${maxRedirects}) from ${raw}`);
        url = checkUrl(new URL(String(headers.location), url).href);
        continue;
      }
      if (statusCode >= 400) {
        await body.dump();
        throw new FetchError(`The page returned HTTP ${statusCode}: ${url.href}`, statusCode);
      }
      const contentType = String(headers['content-type'] ?? '').toLowerCase();
      if (!ACCEPTED_TYPES.some((type) => contentType.startsWith(type))) {
        await body.dump();
        throw new FetchError(`The page is not HTML or text (content-type "${contentType || 'none'}")`, statusCode);
      }
      const declared = Number(headers['content-length'] ?? 0);
      if (declared > options.maxBytes) {
        await body.dump();
        throw new FetchError(`The page is larger than ${options.maxBytes} bytes`, statusCode);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of body) {
          size += (chunk as Buffer).length;
          if (size > options.maxBytes) {
            body.destroy();
            throw new FetchError(`The page is larger than ${options.maxBytes} bytes`, statusCode);
          }
          chunks.push(chunk as Buffer);
        }
      } catch (error) {
        if (error instanceof FetchError) throw error;
        if (timeout.aborted) throw new FetchError(`Fetching ${url.href} timed out after ${options.timeoutMs} ms`);
        throw new FetchError(`Could not read ${url.href}: ${(error as Error).message}`);
      }
      const charset = /charset=([\w-]+)/.exec(contentType)?.[1] ?? 'utf-8';
      let text: string;
      try {
        text = new TextDecoder(charset).decode(Buffer.concat(chunks));
      } catch {
        text = Buffer.concat(chunks).toString('utf8');
      }
      return { url: url.href, status: statusCode, contentType, body: text };
    }
  }

  return { fetchPage, close: () => agent.close() };
}
