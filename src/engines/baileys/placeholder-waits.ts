import type { WAMessage } from 'baileys';

/** The most placeholders one session waits for at once; past it the oldest is given up on (reported unavailable). */
const MAX_WAITING = 1_000;

/**
 * Messages that reached the session as placeholders (content absent), each waiting for the
 * copy Baileys asked the sender's phone for (ADR 0051). The copy settles its wait and is handled
 * as any message; a wait that runs out hands the placeholder to `giveUp`, so that the gateway
 * reports a message it could not read rather than nothing. One wait per message id: Baileys may
 * upsert the same placeholder again.
 */
export class PlaceholderWaits {
  private readonly waiting = new Map<string, { stub: WAMessage; timer: NodeJS.Timeout }>();

  constructor(
    private readonly waitMs: number,
    private readonly giveUp: (stub: WAMessage) => void,
  ) {}

  hold(id: string, stub: WAMessage): void {
    if (this.waiting.has(id)) return;
    if (this.waiting.size >= MAX_WAITING) this.expire(this.waiting.keys().next().value!);
    const timer = setTimeout(() => this.expire(id), this.waitMs);
    timer.unref();
    this.waiting.set(id, { stub, timer });
  }

  /** The message's content came: its wait, if any, ends. */
  settle(id: string | null | undefined): void {
    if (id === null || id === undefined) return;
    const entry = this.waiting.get(id);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.waiting.delete(id);
  }

  /** The session ends, and its socket can no longer receive the copies: the waits end, and their placeholders are answered. */
  endAll(): WAMessage[] {
    const stubs = [...this.waiting.values()].map((entry) => {
      clearTimeout(entry.timer);
      return entry.stub;
    });
    this.waiting.clear();
    return stubs;
  }

  private expire(id: string): void {
    const entry = this.waiting.get(id);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.waiting.delete(id);
    this.giveUp(entry.stub);
  }
}
