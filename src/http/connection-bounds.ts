import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Logger } from 'pino';

export interface ConnectionBounds {
  /** Open sockets per IPv4 address, or per IPv6 /64 (the block one client usually holds). */
  perAddress: number;
  /** Open sockets per IPv6 /48, the block one site is usually given: many /64s of one client. */
  perIpv6Site: number;
}

/**
 * The groups a client address is counted in: its IPv4 address (IPv4-mapped IPv6 included), or
 * its IPv6 /64 and /48 with their bounds. Each group must be under its bound for a new socket.
 */
export function connectionGroups(address: string, bounds: ConnectionBounds): { key: string; limit: number }[] {
  if (!ipaddr.isValid(address)) return [{ key: `other:${address}`, limit: bounds.perAddress }];
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (parsed.kind() === 'ipv4') return [{ key: `v4:${parsed.toString()}`, limit: bounds.perAddress }];
  const parts = (parsed as ipaddr.IPv6).parts.map((part) => part.toString(16));
  return [
    { key: `v6:${parts.slice(0, 4).join(':')}::/64`, limit: bounds.perAddress },
    { key: `v6:${parts.slice(0, 3).join(':')}::/48`, limit: bounds.perIpv6Site },
  ];
}

/**
 * Destroys a new connection at once when any group of its address already holds its bound of
 * open ones, as the total bound does. The address is the socket's own: X-Forwarded-For is not
 * known until a request arrives, so behind a reverse proxy every client shares the proxy's count
 * (docs/operations.md).
 */
export function boundConnectionsPerAddress(server: Server, bounds: ConnectionBounds, logger: Logger): void {
  const open = new Map<string, number>();
  // Groups refused since they were last below the bound: one warning per episode, not per socket.
  const saturated = new Set<string>();
  server.on('connection', (socket: Socket) => {
    if (socket.remoteAddress === undefined) return; // already gone
    const groups = connectionGroups(socket.remoteAddress, bounds);
    const full = groups.find((group) => (open.get(group.key) ?? 0) >= group.limit);
    if (full !== undefined) {
      socket.destroy();
      if (!saturated.has(full.key))
        logger.warn({ address: full.key, bound: full.limit }, 'refusing connections from an address at its bound');
      saturated.add(full.key);
      return;
    }
    for (const group of groups) open.set(group.key, (open.get(group.key) ?? 0) + 1);
    socket.once('close', () => {
      for (const group of groups) {
        const left = (open.get(group.key) ?? 1) - 1;
        if (left === 0) open.delete(group.key);
        else open.set(group.key, left);
        saturated.delete(group.key);
      }
    });
  });
}
