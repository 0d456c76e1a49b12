import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

const GLOBAL_UNICAST_IPV6 = ipaddr.parseCIDR('2000::/3');

/**
 * The SSRF guard: webhook URLs are customer input, so the worker must never be steered at the
 * gateway's own network. Only global unicast is allowed, by allow-list rather than deny-list:
 * IPv4 outside every special-purpose range (loopback, private, link-local and cloud metadata,
 * CGNAT, multicast, broadcast, reserved, documentation, benchmarking), and IPv6 inside 2000::/3
 * outside its special blocks. So all of ::/8 is refused, IPv4-compatible forms such as
 * ::7f00:1 included, as is any range defined after this was written outside 2000::/3.
 * IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it maps; other IPv6 forms
 * that embed an IPv4 address (NAT64, 6to4, Teredo) are refused outright, since where they lead
 * depends on gateways we cannot see.
 */
export function isBlockedAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (parsed === undefined) return true;
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  return !(parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_IPV6) || parsed.range() !== 'unicast';
}

/** An address as ipaddr.js reads it, URL brackets and zone dropped, IPv4-mapped IPv6 unwrapped. */
function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return undefined;
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) return (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed;
}

/** One `host:port` of WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: an address or a name, and a port. */
interface AllowedPrivateHost {
  host: string;
  port: number;
}

/**
 * Which blocked addresses webhooks may reach anyway. `everything` is the old
 * WAGW_WEBHOOK_ALLOW_PRIVATE=true; `hosts` is the explicit allow-list, which opens exactly one
 * port of one host each, so that a receiver on the operator's own network does not open every
 * other service beside it to every tenant.
 */
export interface AddressPolicy {
  everything: boolean;
  hosts: readonly AllowedPrivateHost[];
}

export const STRICT_ADDRESS_POLICY: AddressPolicy = Object.freeze({ everything: false, hosts: [] });

/**
 * Whether a connection to `address` on `port`, for a URL whose host is `urlHost`, may be made.
 * An allow-list entry that names an address matches the address dialled; one that names a host
 * matches the URL's host, since the operator who listed the name vouches for what it resolves to.
 */
export function mayConnect(policy: AddressPolicy, address: string, port: number, urlHost: string): boolean {
  if (policy.everything || !isBlockedAddress(address)) return true;
  const dialled = parseAddress(address)?.toNormalizedString();
  const host = urlHost.replace(/^\[|\]$/g, '').toLowerCase();
  return policy.hosts.some((entry) => {
    if (entry.port !== port) return false;
    const listed = parseAddress(entry.host);
    return listed === undefined ? entry.host.toLowerCase() === host : listed.toNormalizedString() === dialled;
  });
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'amqp:': 5672, 'amqps:': 5671 };

/** The port a URL connects to, written or implied by its scheme. */
export function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return DEFAULT_PORTS[url.protocol] ?? 80;
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
 * The addresses `hostname` resolves to that the policy lets a URL on `urlHost` and `port` dial;
 * fails with BlockedAddressError when there are none. An address literal is judged as it is.
 */
export async function allowedAddresses(policy: AddressPolicy, hostname: string, port: number, urlHost: string): Promise<LookupAddress[]> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  const addresses = family === 0 ? await dns.promises.lookup(bare, { all: true }) : [{ address: bare, family }];
  const allowed = addresses.filter((entry) => mayConnect(policy, entry.address, port, urlHost));
  if (allowed.length === 0)
    throw new BlockedAddressError(
      hostname,
      addresses.map((entry) => entry.address),
    );
  return allowed;
}

/**
 * A `lookup` for one http.request that drops the addresses the policy does not allow after DNS
 * resolution, so the check applies to the address actually dialled and a rebinding DNS answer
 * cannot slip past it. It is made per request because the port and the URL's host matter.
 */
export function guardedLookup(policy: AddressPolicy, port: number, urlHost: string) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    allowedAddresses(policy, hostname, port, urlHost).then(
      (allowed) => {
        if (options.all) callback(null, allowed);
        else callback(null, allowed[0]!.address, allowed[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}

/** Resolves a host to every address it has, for checking a URL when a webhook is saved. */
export async function resolveHost(host: string): Promise<string[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(bare)) return [bare];
  const addresses = await dns.promises.lookup(bare, { all: true });
  return addresses.map((entry) => entry.address);
}
