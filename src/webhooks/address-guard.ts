import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * The SSRF guard: webhook URLs are customer input, so the worker must never be steered at the
 * gateway's own network. Only globally routable unicast addresses are allowed; loopback,
 * private, link-local (cloud metadata), CGNAT, multicast, broadcast, reserved and documentation
 * ranges are refused. IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it
 * maps; other IPv6 forms that embed an IPv4 address (NAT64, 6to4, Teredo) are refused outright,
 * since where they lead depends on gateways we cannot see.
 */
export function isBlockedAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return true;
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() !== 'unicast';
}

export class BlockedAddressError extends Error {
  readonly code = 'WAGW_BLOCKED_ADDRESS';
  constructor(host: string, addresses: string[]) {
    super(`${host} resolves only to addresses webhooks may not reach (${addresses.join(', ') || 'none'}).`);
    this.name = 'BlockedAddressError';
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that drops blocked addresses after DNS resolution, so the check
 * applies to the address actually dialled and a rebinding DNS answer cannot slip past it.
 */
export function guardedLookup(allowPrivateAddresses: boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, []);
        return;
      }
      const allowed = allowPrivateAddresses ? addresses : addresses.filter((entry) => !isBlockedAddress(entry.address));
      if (allowed.length === 0) {
        callback(new BlockedAddressError(hostname, addresses.map((entry) => entry.address)), []);
        return;
      }
      if (options.all) callback(null, allowed);
      else callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/** Resolves a host to every address it has, for checking a URL when a webhook is saved. */
export async function resolveHost(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(bare)) return [bare];
  const addresses = await dns.promises.lookup(bare, { all: true });
  return addresses.map((entry) => entry.address);
}
