import ipaddr from 'ipaddr.js';
import type { Store } from '../store/database.ts';
import { clearAttempts, countAttempt, uncountAttempt } from '../store/repositories/sign-in-failures.ts';

/**
 * Failed sign-ins allowed per window before further attempts are refused without checking the
 * password. The email limit stops guessing one user's password; the address limit stops one
 * client from spraying many users. Counts live in the database, so a restart or a second
 * process does not reset them.
 */
export const SIGN_IN_LIMITS = {
  windowMs: 15 * 60_000,
  failuresPerEmail: 5,
  failuresPerAddress: 20,
} as const;

/**
 * Every attempt is counted before its password is checked, and refused once the count passes
 * the limit. Counting first is what makes the limit hold against parallel guesses: checking
 * first and counting after the slow password hash would let a burst through. A success then
 * takes its count back.
 */
export class SignInThrottle {
  constructor(private readonly store: Store) {}

  /** Counts the attempt; returns when it may be retried if it is over a limit, else undefined. */
  async admit(email: string, ip: string, now: Date): Promise<Date | undefined> {
    const cutoff = new Date(now.getTime() - SIGN_IN_LIMITS.windowMs);
    const byEmail = await countAttempt(this.store.db, emailKey(email), now, cutoff);
    const byAddress = await countAttempt(this.store.db, addressKey(ip), now, cutoff);
    const over = [
      byEmail.attempts > SIGN_IN_LIMITS.failuresPerEmail ? byEmail : undefined,
      byAddress.attempts > SIGN_IN_LIMITS.failuresPerAddress ? byAddress : undefined,
    ].filter((count) => count !== undefined);
    if (over.length === 0) return undefined;
    return new Date(Math.max(...over.map((count) => count.windowStartedAt.getTime())) + SIGN_IN_LIMITS.windowMs);
  }

  /** A correct password clears the email's count and takes this attempt off the address's. */
  async succeeded(email: string, ip: string): Promise<void> {
    await clearAttempts(this.store.db, emailKey(email));
    await uncountAttempt(this.store.db, addressKey(ip));
  }
}

function emailKey(email: string): string {
  return `email:${email}`;
}

/**
 * One key per IPv4 address, and per /64 for IPv6: a single client usually holds a whole /64, so
 * counting each of its addresses apart would give it billions of tries.
 */
export function addressKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return `ip:${ip}`;
  let address = ipaddr.parse(ip);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address();
  if (address.kind() === 'ipv4') return `ip:${address.toString()}`;
  const prefix = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':');
  return `ip:${prefix}::/64`;
}
