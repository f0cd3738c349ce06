/**
 * Fetches web pages for the knowledge base without becoming a way into the private network:
 * only http(s) and no credentials in the URL; the resolved address of every hop (DNS answers
 * included, checked at connect time so a re-resolving name cannot slip through) must be public
 * unless `allowPrivate`; redirects are followed by hand and checked again; a time limit, a size
 * cap and a content-type check apply. `checkUrl` applies the same policy before a URL is
 * accepted (the upload), resolving the name once; the fetch checks again when it connects.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';
import { startTimeLimit, type AbortLimit } from '../../lib/abort-limit.js';
import { FetchError, type FetchedPage, type FetchOptions, type WebFetcher } from '../../ports/web-fetcher.js';

/** Every address a name resolves to (the shape of `dns.lookup` with `all: true`). */
export type ResolveAll = (hostname: string, options: LookupAllOptions) => Promise<LookupAddress[]>;

export interface SafeFetcherOptions {
  allowPrivate: boolean;
  /**
   * Hosts (`name` or `name:port`) fetched even though they resolve to a private address: an
   * intranet documentation site. Every other private address stays refused, redirects included.
   */
  allowedHosts?: readonly string[];
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
  userAgent?: string;
  /** The resolver used at upload and at connect time (default: `dns.lookup`, the system's). */
  resolve?: ResolveAll;
}

const ACCEPTED_TYPES = {
  page: ['text/html', 'application/xhtml+xml', 'text/plain'],
  sitemap: ['application/xml', 'text/xml', 'text/plain'],
};
const ACCEPT_HEADERS = {
  page: 'text/html,application/xhtml+xml,text/plain;q=0.8',
  sitemap: 'application/xml,text/xml;q=0.9,text/plain;q=0.8',
};
const REFUSED_NAMES = /^(localhost|.*\.localhost|metadata\.google\.internal)\.?$/i;
/** IANA allocates global unicast IPv6 from 2000::/3 only; the rest is reserved or special. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

const systemResolve: ResolveAll = (hostname, options) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/**
 * The range an address belongs to, in ipaddr.js's names (`unicast`, `private`, `loopback`,
 * `linkLocal`, `uniqueLocal`, `ipv4Mapped`, `rfc6145`, `rfc6052`, `6to4`, `teredo`, `reserved`
 * …), plus `ipv4Compatible` for `::a.b.c.d` and `invalid` for what is not an IP address.
 * IPv6 forms that embed an IPv4 address keep their own name: they are refused, not unwrapped.
 */
export function addressRange(address: string): string {
  const family = isIP(address);
  if (family === 0) return 'invalid';
  const parsed = ipaddr.parse(family === 6 ? hexTail(address) : address);
  const range = parsed.range();
  if (range !== 'unicast' || parsed.kind() === 'ipv4') return range;
  // ipaddr.js calls every IPv6 address it has no name for unicast, `::7f00:1` among them.
  if (parsed.match(IPV4_COMPATIBLE)) return 'ipv4Compatible';
  return parsed.match(GLOBAL_UNICAST_V6) ? 'unicast' : 'reserved';
}

/**
 * An IPv6 address with its dotted IPv4 tail written as two hex groups: ipaddr.js reads `::a.b.c.d`
 * (how the system resolver prints an IPv4-compatible address) as `::ffff:a.b.c.d`.
 */
function hexTail(address: string): string {
  return address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((group) => group.toString(16)).join(':'),
  );
}

/** Only global unicast addresses may be fetched. */
export function isBlockedAddress(address: string): boolean {
  return addressRange(address) !== 'unicast';
}

function refusedAddress(hostname: string, addresses: readonly LookupAddress[]): FetchError | null {
  const blocked = addresses.find((entry) => isBlockedAddress(entry.address));
  if (!blocked) return null;
  return Object.assign(
    new FetchError(
      `${hostname} resolves to a private or reserved address (${blocked.address}, ${addressRange(blocked.address)})`,
    ),
    { code: 'EBLOCKED' },
  );
}

/**
 * `net.connect`'s lookup. When `guard`, every answer must be public, so the address checked is
 * the one connected to (a name that answers differently at upload and at fetch is still refused).
 */
function connectLookup(resolve: ResolveAll, guard: boolean, allowedNames: ReadonlySet<string>): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }).then(
      (addresses) => {
        const refused = guard && !allowedNames.has(hostname.toLowerCase()) ? refusedAddress(hostname, addresses) : null;
        if (refused) return callback(refused, '', 0);
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0];
        if (!first)
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}

/** The host of a URL without the brackets of an IPv6 literal. */
const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Settles with the promise, or rejects when the signal aborts first (a DNS lookup cannot be cancelled). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

export function createSafeFetcher(options: SafeFetcherOptions): WebFetcher & { close(): Promise<void> } {
  const resolve = options.resolve ?? systemResolve;
  const allowedHosts = new Set((options.allowedHosts ?? []).map((host) => host.toLowerCase()));
  // A name allowed with any port, or with the port of the URL (checked by checkHop first).
  const allowedNames = new Set([...allowedHosts].map((host) => host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')));
  const isAllowedHost = (url: URL) =>
    allowedHosts.has(url.hostname.toLowerCase()) ||
    allowedHosts.has(`${url.hostname.toLowerCase()}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`);
  const agent = new Agent({
    connect: { lookup: connectLookup(resolve, !options.allowPrivate, allowedNames) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const maxRedirects = options.maxRedirects ?? 5;

  /** What can be decided without the network: scheme, credentials, literal addresses, local names. */
  function checkHop(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new FetchError(`Not a valid URL: ${raw}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new FetchError(`Only http and https URLs can be fetched, got ${url.protocol}`);
    if (url.username || url.password)
      throw new FetchError(`URLs with credentials (user:password@) are not fetched: ${url.host}`);
    if (options.allowPrivate || isAllowedHost(url)) return url;
    const host = hostOf(url);
    if (isIP(host) && isBlockedAddress(host)) {
      throw new FetchError(`Refusing to fetch ${url.host}: a private or reserved address (${addressRange(host)})`);
    }
    if (REFUSED_NAMES.test(host)) throw new FetchError(`Refusing to fetch ${url.host}: a private or reserved address`);
    return url;
  }

  async function checkUrl(raw: string, signal?: AbortSignal): Promise<URL> {
    const url = checkHop(raw);
    const host = hostOf(url);
    if (options.allowPrivate || isIP(host) || isAllowedHost(url)) return url;
    const limit = startTimeLimit(signal, options.timeoutMs);
    let addresses: LookupAddress[];
    try {
      addresses = await untilAborted(resolve(host, { all: true }), limit.signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      if (limit.timedOut) throw new FetchError(`${host} could not be resolved within ${options.timeoutMs} ms`);
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new FetchError(`${host} could not be resolved (${reason})`);
    } finally {
      limit.release();
    }
    if (addresses.length === 0) throw new FetchError(`${host} could not be resolved (no address)`);
    const refused = refusedAddress(host, addresses);
    if (refused) throw refused;
    return url;
  }

  async function fetchPage(raw: string, fetchOptions: FetchOptions = {}): Promise<FetchedPage> {
    const limit = startTimeLimit(fetchOptions.signal, options.timeoutMs);
    try {
      return await fetchWithin(raw, fetchOptions, limit);
    } finally {
      limit.release();
    }
  }

  /** The page at `raw`, its redirects followed, all of it within `limit`. */
  async function fetchWithin(raw: string, fetchOptions: FetchOptions, limit: AbortLimit): Promise<FetchedPage> {
    const accept = fetchOptions.accept ?? 'page';
    const conditional: Record<string, string> = {};
    if (fetchOptions.etag) conditional['if-none-match'] = fetchOptions.etag;
    if (fetchOptions.lastModified) conditional['if-modified-since'] = fetchOptions.lastModified;
    let url = checkHop(raw);
    for (let hop = 0; ; hop++) {
      let response: Awaited<ReturnType<typeof request>>;
      try {
        response = await request(url, {
          dispatcher: agent,
          method: 'GET',
          headers: {
            'user-agent': options.userAgent ?? 'Switchboard knowledge fetcher',
            accept: ACCEPT_HEADERS[accept],
            ...conditional,
          },
          signal: limit.signal,
        });
      } catch (error) {
        if (limit.timedOut) throw new FetchError(`Fetching ${url.href} timed out after ${options.timeoutMs} ms`);
        const cause = (error as { cause?: Error }).cause ?? (error as Error);
        throw new FetchError(`Could not fetch ${url.href}: ${cause.message}`);
      }
      const { statusCode, headers, body } = response;
      const validators = {
        etag: typeof headers.etag === 'string' ? headers.etag : null,
        lastModified: typeof headers['last-modified'] === 'string' ? headers['last-modified'] : null,
      };
      if (statusCode === 304) {
        await body.dump();
        return { url: url.href, status: 304, contentType: '', body: '', ...validators };
      }
      if (statusCode >= 300 && statusCode < 400 && headers.location) {
        await body.dump();
        if (hop >= maxRedirects) throw new FetchError(`Too many redirects (more than ${maxRedirects}) from ${raw}`);
        url = checkHop(new URL(String(headers.location), url).href);
        continue;
      }
      if (statusCode >= 400) {
        await body.dump();
        throw new FetchError(`The page returned HTTP ${statusCode}: ${url.href}`, statusCode);
      }
      const contentType = String(headers['content-type'] ?? '').toLowerCase();
      if (!ACCEPTED_TYPES[accept].some((type) => contentType.startsWith(type))) {
        await body.dump();
        throw new FetchError(
          `The ${accept === 'page' ? 'page is not HTML or text' : 'sitemap is not XML or text'} (content-type "${contentType || 'none'}")`,
          statusCode,
        );
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
        if (limit.timedOut) throw new FetchError(`Fetching ${url.href} timed out after ${options.timeoutMs} ms`);
        throw new FetchError(`Could not read ${url.href}: ${(error as Error).message}`);
      }
      const charset = /charset=([\w-]+)/.exec(contentType)?.[1] ?? 'utf-8';
      let text: string;
      try {
        text = new TextDecoder(charset).decode(Buffer.concat(chunks));
      } catch {
        text = Buffer.concat(chunks).toString('utf8');
      }
      return { url: url.href, status: statusCode, contentType, body: text, ...validators };
    }
  }

  return { checkUrl, fetchPage, close: () => agent.close() };
}
