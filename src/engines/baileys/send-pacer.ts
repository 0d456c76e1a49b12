export interface PacingOptions {
  /** The least time between two sends from one number; 0 turns pacing off. */
  minimumGapMs: number;
  /** Up to this much more, at random, so the rhythm does not look machine-made. */
  jitterMs: number;
}

/**
 * Spaces sends from each number, as a guard against bans: a number that fires messages at a
 * machine's pace is what WhatsApp flags. Off by default; an operator turns it on.
 */
export class SendPacer {
  private readonly nextSlotAt = new Map<string, number>();

  constructor(
    private readonly options: PacingOptions,
    private readonly random: () => number = Math.random,
  ) {}

  /** Resolves when this number may send; each caller reserves its own slot, so bursts queue. */
  async waitTurn(numberId: string, now = Date.now()): Promise<void> {
    if (this.options.minimumGapMs <= 0) return;
    const slot = Math.max(now, this.nextSlotAt.get(numberId) ?? 0);
    this.nextSlotAt.set(numberId, slot + this.options.minimumGapMs + Math.round(this.random() * this.options.jitterMs));
    const waitMs = slot - now;
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}
