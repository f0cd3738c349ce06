/**
 * The network policy of connector calls, the same as website uploads': only global unicast
 * addresses (the classification of src/adapters/web/safe-fetcher.ts, reused), checked on the
 * addresses actually connected to, unless ALLOW_PRIVATE_URLS. HTTP connectors apply it through
 * the connection's `lookup`; SMTP resolves once, checks, and connects to the checked address.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isBlockedAddress } from '../web/safe-fetcher.js';

/** Every address a name resolves to (the shape of `dns.lookup` with `all: true`). */
export type ResolveAddresses = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolve: ResolveAddresses = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/** A refusal by the policy; `code` EBLOCKED so callers can tell it from a network error. */
export class BlockedAddressError extends Error {
  override readonly name = 'BlockedAddressError';
  readonly code = 'EBLOCKED';
}

/** Names refused before any lookup (they mean this machine or a cloud metadata service). */
const LOCAL_NAMES = /^(localhost|.*\.localhost|metadata\.google\.internal)\.?$/i;

/** Refuses a host that is a private literal or a local name, before the network is used. */
export function checkHostName(host: string, allowPrivate: boolean): void {
  if (allowPrivate) return;
  const bare = host.replace(/^\[|\]$/g, '');
  if (LOCAL_NAMES.test(bare) || (isIP(bare) !== 0 && isBlockedAddress(bare))) {
    throw new BlockedAddressError(`${bare} is a private or reserved address`);
  }
}

/** The first address of `hostname` after checking every address it resolves to. */
export async function resolveAllowed(
  hostname: string,
  options: { allowPrivate: boolean; resolve?: ResolveAddresses },
): Promise<LookupAddress> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  checkHostName(bare, options.allowPrivate);
  const family = isIP(bare);
  const addresses = family ? [{ address: bare, family }] : await (options.resolve ?? systemResolve)(bare);
  const blocked = options.allowPrivate ? undefined : addresses.find((entry) => isBlockedAddress(entry.address));
  if (blocked) throw new BlockedAddressError(`${bare} resolves to a private or reserved address (${blocked.address})`);
  const first = addresses[0];
  if (!first) throw Object.assign(new Error(`${bare} has no address`), { code: 'ENOTFOUND' });
  return first;
}

/** `net.connect`'s lookup with the policy applied to the answer connected to. */
export function guardedLookup(options: { allowPrivate: boolean; resolve?: ResolveAddresses }): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    const resolve = options.resolve ?? systemResolve;
    resolve(hostname).then(
      (addresses) => {
        const blocked = options.allowPrivate ? undefined : addresses.find((entry) => isBlockedAddress(entry.address));
        if (blocked) {
          const error = new BlockedAddressError(
            `${hostname} resolves to a private or reserved address (${blocked.address})`,
          );
          return callback(error, '', 0);
        }
        if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0];
        if (!first)
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
