import { AppError } from '../domain/errors.ts';
import { planNames, type PlanAmounts, type PlanName } from '../domain/plans.ts';
import { TokenBuckets } from '../domain/token-buckets.ts';

/**
 * A transfer must find at least this much of its budget left to start, so that an account at
 * the end of its budget is refused before any byte moves rather than a few bytes in.
 */
const LEAST_TO_START_BYTES = 64 * 1024;

/** Counts a transfer's bytes against its account's budget as they arrive. */
export type ByteMeter = (bytes: number) => void;

/**
 * Bytes an account may move in a window, by plan: uploads through POST /media, or the files the
 * gateway fetches for media.url. A token bucket per account, whose burst is the whole window's
 * allowance; in memory, so the bound is per gateway process (docs/adr/0015), like the sandbox's.
 */
export class ByteBudgets {
  private readonly buckets: Record<PlanName, TokenBuckets>;

  constructor(
    private readonly perWindow: PlanAmounts,
    private readonly windowMs: number,
    private readonly refusal: 'upload_rate_exceeded' | 'media_fetch_budget_exceeded',
  ) {
    this.buckets = Object.fromEntries(
      planNames.map((plan) => [plan, new TokenBuckets({ ratePerSecond: (perWindow[plan] * 1000) / windowMs, burst: perWindow[plan] })]),
    ) as Record<PlanName, TokenBuckets>;
  }

  /**
   * Admits a transfer of `declaredBytes` (when the size is announced) or refuses it with a 429
   * before it starts; the meter then takes each chunk, and refuses once the budget is spent.
   */
  start(accountId: string, plan: PlanName, declaredBytes?: number): ByteMeter {
    const buckets = this.buckets[plan];
    const limit = this.perWindow[plan];
    const needed = Math.min(limit, Math.max(declaredBytes ?? 0, LEAST_TO_START_BYTES));
    const now = Date.now();
    if (buckets.nextTokenAt(accountId, now, needed) > now) throw this.refuse(accountId, plan, needed);
    let taken = 0;
    return (bytes) => {
      // Bytes that arrived were moved, refused or not: they empty the budget as far as it goes.
      const took = buckets.takeUpTo(accountId, bytes);
      taken += took;
      if (took < bytes) throw this.refuse(accountId, plan, Math.min(limit, taken + bytes - took));
    };
  }

  /** A 429 saying when the account's budget will hold what this transfer needed. */
  private refuse(accountId: string, plan: PlanName, neededBytes: number): AppError {
    const now = Date.now();
    const retryAfterSeconds = Math.max(1, Math.ceil((this.buckets[plan].nextTokenAt(accountId, now, neededBytes) - now) / 1000));
    const limitBytes = this.perWindow[plan];
    const windowSeconds = Math.round(this.windowMs / 1000);
    const what = this.refusal === 'upload_rate_exceeded' ? 'upload' : 'have fetched (media.url files and link previews)';
    return new AppError(
      this.refusal,
      `Your account may ${what} ${limitBytes} bytes every ${windowSeconds} s on the ${plan} plan; try again in ${retryAfterSeconds} s.`,
      {
        plan,
        limit_bytes: limitBytes,
        window_seconds: windowSeconds,
        retry_after_seconds: retryAfterSeconds,
      },
    );
  }
}
