/**
 * Token buckets by key, in memory: each key may do `ratePerSecond` things a second on average,
 * with bursts of up to `burst`. The webhook worker keys them by destination host and the sandbox
 * by account. Being in memory, the bound is per gateway process (docs/adr/0015).
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; refilledAt: number }>();

  constructor(private readonly limits: { ratePerSecond: number; burst: number }) {}

  /** Takes one token for the key; false when the key must wait. */
  tryTake(key: string, now = Date.now()): boolean {
    const bucket = this.refill(key, now);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** When the key's next token will be there (now, if it has one). */
  nextTokenAt(key: string, now = Date.now()): number {
    const bucket = this.refill(key, now);
    return bucket.tokens >= 1 ? now : now + Math.ceil(((1 - bucket.tokens) / this.limits.ratePerSecond) * 1000);
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
