import { AppError } from '../domain/errors.ts';
import { TokenBuckets } from '../domain/token-buckets.ts';
import type { ByteMeter } from './byte-budgets.ts';

/** Who pays for a preview: the account that sends, and the number it sends from. */
export interface PreviewPayer {
  accountId: string;
  fromPhone: string;
}

/** One preview's costs as they happen: a fetch (the page, then its image), and every byte read. */
export interface PreviewMeter {
  /** Takes one of the number's fetches; false when it has none left (the image is then left out). */
  mayFetch(): boolean;
  bytes: ByteMeter;
}

/**
 * What link previews may cost (ADR 0055): each number a number of fetches per window (a page and
 * its image are two), and each account its bytes from the same fetch budget as `media.url`. A
 * preview whose page the budgets cannot pay for is refused with 429 before anything is fetched;
 * one that runs out part-way is sent as far as it was paid for (no image, or no preview), since a
 * preview is a courtesy. In memory, so the bound is per gateway process, like the byte budgets.
 */
export class PreviewBudgets {
  private readonly perNumber: TokenBuckets;

  constructor(
    private readonly accountBytes: { startFetch(accountId: string): Promise<ByteMeter> },
    private readonly fetchesPerNumber: number,
    private readonly windowMs: number,
  ) {
    this.perNumber = new TokenBuckets({ ratePerSecond: (fetchesPerNumber * 1000) / windowMs, burst: fetchesPerNumber });
  }

  /** The meter of one preview, with its page's fetch taken; a 429 when the number or the account cannot pay for it. */
  async start(payer: PreviewPayer): Promise<PreviewMeter> {
    const now = Date.now();
    if (this.perNumber.nextTokenAt(payer.fromPhone, now) > now) throw this.refuse(payer.fromPhone, now);
    const bytes = await this.accountBytes.startFetch(payer.accountId);
    if (!this.perNumber.tryTake(payer.fromPhone, Date.now())) throw this.refuse(payer.fromPhone, Date.now());
    return { mayFetch: () => this.perNumber.tryTake(payer.fromPhone), bytes };
  }

  private refuse(fromPhone: string, now: number): AppError {
    const retryAfterSeconds = Math.max(1, Math.ceil((this.perNumber.nextTokenAt(fromPhone, now) - now) / 1000));
    const windowSeconds = Math.round(this.windowMs / 1000);
    return new AppError(
      'media_fetch_budget_exceeded',
      `${fromPhone} may have ${this.fetchesPerNumber} link-preview fetches made every ${windowSeconds} s (a page and its image are ` +
        `two); try again in ${retryAfterSeconds} s, or give the preview as an object.`,
      {
        field: 'link_preview',
        limit_fetches: this.fetchesPerNumber,
        window_seconds: windowSeconds,
        retry_after_seconds: retryAfterSeconds,
      },
    );
  }
}
