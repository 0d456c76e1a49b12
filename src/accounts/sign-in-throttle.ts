import type { Store } from '../store/database.ts';
import { clearFailures, findFailureCounts, recordFailure } from '../store/repositories/sign-in-failures.ts';

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

export class SignInThrottle {
  constructor(private readonly store: Store) {}

  /** When the attempt may be made again, or undefined when it may be made now. */
  async blockedUntil(email: string, ip: string, now: Date): Promise<Date | undefined> {
    const cutoff = now.getTime() - SIGN_IN_LIMITS.windowMs;
    const counts = await findFailureCounts(this.store.db, [emailKey(email), addressKey(ip)]);
    const blocking = counts.filter((count) => {
      if (count.windowStartedAt.getTime() < cutoff) return false;
      const limit = count.throttleKey.startsWith('email:') ? SIGN_IN_LIMITS.failuresPerEmail : SIGN_IN_LIMITS.failuresPerAddress;
      return count.failures >= limit;
    });
    if (blocking.length === 0) return undefined;
    const latestWindowStart = Math.max(...blocking.map((count) => count.windowStartedAt.getTime()));
    return new Date(latestWindowStart + SIGN_IN_LIMITS.windowMs);
  }

  recordFailure(email: string, ip: string, now: Date): Promise<void> {
    return recordFailure(this.store.db, [emailKey(email), addressKey(ip)], now, new Date(now.getTime() - SIGN_IN_LIMITS.windowMs));
  }

  /** A correct password clears the email's count; the address keeps its count. */
  recordSuccess(email: string): Promise<void> {
    return clearFailures(this.store.db, emailKey(email));
  }
}

function emailKey(email: string): string {
  return `email:${email}`;
}

function addressKey(ip: string): string {
  return `ip:${ip}`;
}
