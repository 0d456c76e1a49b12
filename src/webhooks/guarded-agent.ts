import type { LookupAddress } from 'node:dns';
import type { Socket } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { allowedAddresses, BlockedAddressError, mayConnect, type AddressPolicy } from './address-guard.ts';

/**
 * How long a host's checked addresses are reused. Short, so that a DNS change reaches the next
 * connection soon; the check itself cannot go stale in a way that matters, since the address
 * dialled is the one that was checked.
 */
const ADDRESS_CHECK_TTL_MS = 5_000;
/** Enough hosts for every endpoint of a busy node; past it the oldest answers are dropped first. */
const ADDRESS_CHECK_ENTRIES = 10_000;

export interface GuardedAgentOptions {
  addressPolicy: AddressPolicy;
  /** How long a TCP (and TLS) connection may take to be made. */
  connectTimeoutMs: number;
  /** How long an idle pooled connection is kept for the origin's next request. */
  keepAliveTimeoutMs?: number;
  /** Idle waits on a response's headers and between its body's chunks; off (0) unless given. */
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
}

/**
 * An undici Agent, one connection pool per origin, whose every connection passes the SSRF guard:
 * the host is resolved here, the addresses the policy refuses are dropped, and the socket is
 * dialled to the checked address itself (TLS still verifies the URL's name), so a rebinding DNS
 * answer cannot steer it elsewhere. A host's check is reused for a few seconds per host and port,
 * which spares a DNS lookup per connection.
 */
export function createGuardedAgent(options: GuardedAgentOptions): Agent {
  const policy = options.addressPolicy;
  const dial = buildConnector({ timeout: options.connectTimeoutMs });
  const checks = new AddressCheckCache(policy);
  return new Agent({
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 4_000,
    headersTimeout: options.headersTimeoutMs ?? 0,
    bodyTimeout: options.bodyTimeoutMs ?? 0,
    connect: (connectOptions, callback) => {
      const port = Number(connectOptions.port) || (connectOptions.protocol === 'https:' ? 443 : 80);
      const hostname = connectOptions.hostname;
      checks.allowed(hostname, port).then(
        (addresses) => {
          dial({ ...connectOptions, hostname: addresses[0]!.address }, (error, socket) => {
            if (error !== null) return callback(error, null);
            // Defence in depth: the peer the kernel connected to, judged once more.
            const remote = (socket as Socket).remoteAddress;
            if (!policy.everything && remote !== undefined && !mayConnect(policy, remote, port, hostname)) {
              socket!.destroy();
              return callback(new BlockedAddressError(hostname, [remote]), null);
            }
            callback(null, socket!);
          });
        },
        (error: Error) => callback(error, null),
      );
    },
  });
}

/** The guard's answer per host and port, kept for a few seconds; DNS failures are not kept. */
class AddressCheckCache {
  private readonly entries = new Map<string, { expiresAt: number; answer: Promise<LookupAddress[]> }>();

  constructor(private readonly policy: AddressPolicy) {}

  allowed(hostname: string, port: number): Promise<LookupAddress[]> {
    const key = `${hostname}:${port}`;
    const now = Date.now();
    const cached = this.entries.get(key);
    if (cached !== undefined && cached.expiresAt > now) return cached.answer;
    const answer = allowedAddresses(this.policy, hostname, port, hostname);
    this.remember(key, { expiresAt: now + ADDRESS_CHECK_TTL_MS, answer });
    answer.catch((error: unknown) => {
      if (!(error instanceof BlockedAddressError) && this.entries.get(key)?.answer === answer) this.entries.delete(key);
    });
    return answer;
  }

  private remember(key: string, entry: { expiresAt: number; answer: Promise<LookupAddress[]> }): void {
    this.entries.delete(key);
    if (this.entries.size >= ADDRESS_CHECK_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, entry);
  }
}
