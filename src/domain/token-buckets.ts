/**
 * Token buckets by key, in memory: each key may do `ratePerSecond` things a second on average,
 * with bursts of up to `burst`. The webhook worker keys them by destination host and the sandbox
 * by account. Being in memory, the bound is per gateway process (docs/adr/0015).
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; refilledAt: number }>();

  constructor(private readonly limits: { ratePerSecond: number; burst: number }) {}

  /** Takes `count` tokens (one by default) for the key, all or none; false when the key must wait. */
  tryTake(key: string, now = Date.now(), count = 1): boolean {
    const bucket = this.refill(key, now);
    if (bucket.tokens < count) return false;
    bucket.tokens -= count;
    return true;
  }

  /** Takes `count` tokens, or all the key has if fewer; answers how many it took. */
  takeUpTo(key: string, count: number, now = Date.now()): number {
    const bucket = this.refill(key, now);
    const taken = Math.min(count, Math.max(0, bucket.tokens));
    bucket.tokens -= taken;
    return taken;
  }

  /** When the key will have `count` tokens (now, if it has them). */
  nextTokenAt(key: string, now = Date.now(), count = 1): number {
    const bucket = this.refill(key, now);
    return bucket.tokens >= count ? now : now + Math.ceil(((count - bucket.tokens) / this.limits.ratePerSecond) * 1000);
  }

  private refill(key: string, now: number): { tokens: number; refilledAt: number } {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      // Keys seen once long ago should not pile up for the life of the process; a cleared key
      // starts full again, which errs on the side of letting work through.
      if (this.buckets.size >= 100_000) this.buckets.clear();
      bucket = { tokens: this.limits.burst, refilledAt: now };
      this.buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(this.limits.burst, bucket.tokens + ((now - bucket.refilledAt) / 1000) * this.limits.ratePerSecond);
    bucket.refilledAt = now;
    return bucket;
  }
}
