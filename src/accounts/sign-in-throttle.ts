import { createHmac } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { Store } from '../store/database.ts';
import { clearAttempts, countAttempt, countDelayedAttempt, pruneAttempts, uncountAttempt } from '../store/repositories/sign-in-failures.ts';

const MINUTE_MS = 60_000;

/**
 * How sign-in attempts are limited (docs/adr/0013-sign-in-throttling.md).
 * - One address may fail `failuresPerAddress` times per `addressWindowMs`, whichever emails it
 *   tries: this stops one client spraying many users, and is checked first, so a throttled
 *   address writes nothing more.
 * - One (email, address) pair gets `pairDelaysMs`: a few free failures, then a growing wait
 *   after each. This is what stops guessing one user's password, and it holds only the guesser:
 *   the same email from an address that has not failed signs in at once.
 * - One email may fail `failuresPerEmail` times per `emailWindowMs` from all addresses together:
 *   a much higher ceiling, against guessing spread over many addresses.
 */
export const SIGN_IN_LIMITS = {
  addressWindowMs: 15 * MINUTE_MS,
  failuresPerAddress: 20,
  pairWindowMs: 60 * MINUTE_MS,
  /** The wait after the 1st, 2nd, … failure of a pair; the last entry repeats. */
  pairDelaysMs: [0, 0, 0, 0, 30_000, 60_000, 2 * MINUTE_MS, 4 * MINUTE_MS, 8 * MINUTE_MS, 15 * MINUTE_MS],
  emailWindowMs: 60 * MINUTE_MS,
  failuresPerEmail: 100,
} as const;

/** Failures a pair may make before its first wait. */
export const FREE_FAILURES_PER_PAIR = SIGN_IN_LIMITS.pairDelaysMs.findIndex((delayMs) => delayMs > 0) + 1;

/** What a throttle counts, by purpose, so that sign-ins and invite submissions keep separate counts. */
export type ThrottledAction = 'sign-in' | 'invite';

/**
 * Every attempt is counted before its password is checked, and refused once it is over a
 * limit. Counting first is what makes the limits hold against parallel guesses: checking first
 * and counting after the slow password hash would let a burst through. A success then takes its
 * counts back. Counts live in the database, so a restart or a second process does not reset
 * them; their keys are keyed digests (HMAC), so the table never holds an email or an address.
 */
export class SignInThrottle {
  constructor(
    private readonly store: Store,
    /** Keys the digests; derived from the gateway's secret key. */
    private readonly digestKey: Buffer,
  ) {}

  /** Counts a sign-in attempt; returns when it may be retried if it is over a limit, else undefined. */
  async admit(email: string, ip: string, now: Date): Promise<Date | undefined> {
    const byAddress = await this.admitAddress('sign-in', ip, now);
    if (byAddress !== undefined) return byAddress;
    const pair = await countDelayedAttempt(
      this.store.db,
      this.key('pair', email, addressKey(ip)),
      now,
      before(now, SIGN_IN_LIMITS.pairWindowMs),
      SIGN_IN_LIMITS.pairDelaysMs,
    );
    if (pair.refusedUntil !== undefined) return pair.refusedUntil;
    const byEmail = await countAttempt(this.store.db, this.key('email', email), now, before(now, SIGN_IN_LIMITS.emailWindowMs));
    if (byEmail.attempts > SIGN_IN_LIMITS.failuresPerEmail)
      return new Date(byEmail.windowStartedAt.getTime() + SIGN_IN_LIMITS.emailWindowMs);
    return undefined;
  }

  /**
   * Counts an attempt of `action` against its address alone (invite submissions use this, with
   * counts of their own); returns when it may be retried if over the limit.
   */
  async admitAddress(action: ThrottledAction, ip: string, now: Date): Promise<Date | undefined> {
    const count = await countAttempt(
      this.store.db,
      this.key(`${action}:address`, addressKey(ip)),
      now,
      before(now, SIGN_IN_LIMITS.addressWindowMs),
    );
    if (count.attempts <= SIGN_IN_LIMITS.failuresPerAddress) return undefined;
    return new Date(count.windowStartedAt.getTime() + SIGN_IN_LIMITS.addressWindowMs);
  }

  /** A correct password clears the pair, and takes this attempt off the email's and the address's counts. */
  async succeeded(email: string, ip: string): Promise<void> {
    await clearAttempts(this.store.db, this.key('pair', email, addressKey(ip)));
    await uncountAttempt(this.store.db, this.key('email', email));
    await uncountAttempt(this.store.db, this.key('sign-in:address', addressKey(ip)));
  }

  /** Deletes counters that can no longer refuse anything; the server's periodic sweep calls this. */
  prune(now: Date): Promise<number> {
    const longestWindowMs = Math.max(SIGN_IN_LIMITS.addressWindowMs, SIGN_IN_LIMITS.pairWindowMs, SIGN_IN_LIMITS.emailWindowMs);
    return pruneAttempts(this.store.db, before(now, longestWindowMs), now);
  }

  private key(kind: string, ...parts: string[]): string {
    return createHmac('sha256', this.digestKey)
      .update([kind, ...parts].join('\u0000'))
      .digest('base64url');
  }
}

function before(now: Date, ms: number): Date {
  return new Date(now.getTime() - ms);
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
  const prefix = (address as ipaddr.IPv6).parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':');
  return `ip:${prefix}::/64`;
}
