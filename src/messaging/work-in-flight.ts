/**
 * The requests and queue releases running on each number this node serves, counted from the
 * moment they are let in until they end, so that a node giving a number up (a clean stop, a
 * handover, lost trust in its lease) can wait for them before it stops the session: a send
 * already with the engine is then recorded under the lease it was made with, and its client is
 * told the truth (docs/adr/0040-drain-before-release.md).
 */
export class WorkInFlight {
  private readonly counts = new Map<string, number>();
  /** Per number, the drains waiting for its count to reach zero. */
  private readonly waiters = new Map<string, Set<() => void>>();

  /** One more piece of work on the number; the returned function ends it (once, whatever happens). */
  enter(numberId: string): () => void {
    this.counts.set(numberId, (this.counts.get(numberId) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.leave(numberId);
    };
  }

  /** How much work runs on the number now. */
  count(numberId: string): number {
    return this.counts.get(numberId) ?? 0;
  }

  /**
   * Resolves once the work on the number has ended, or after `boundMs`, whichever comes first;
   * true when it ended. The caller stops letting new work in before it waits.
   */
  async ended(numberId: string, boundMs: number): Promise<boolean> {
    if (this.count(numberId) === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    let done: (() => void) | undefined;
    const idle = new Promise<boolean>((resolve) => {
      done = () => resolve(true);
      let waiting = this.waiters.get(numberId);
      if (waiting === undefined) {
        waiting = new Set();
        this.waiters.set(numberId, waiting);
      }
      waiting.add(done);
    });
    const bounded = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), boundMs);
    });
    try {
      return await Promise.race([idle, bounded]);
    } finally {
      clearTimeout(timer);
      const waiting = this.waiters.get(numberId);
      waiting?.delete(done!);
      if (waiting?.size === 0) this.waiters.delete(numberId);
    }
  }

  private leave(numberId: string): void {
    const left = (this.counts.get(numberId) ?? 1) - 1;
    if (left > 0) {
      this.counts.set(numberId, left);
      return;
    }
    this.counts.delete(numberId);
    for (const resolve of this.waiters.get(numberId) ?? []) resolve();
  }
}
