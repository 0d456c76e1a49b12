export interface EndpointSlotLimits {
  /** Requests in flight overall, not counting those that have turned slow. */
  maxInFlight: number;
  maxInFlightPerEndpoint: number;
  /** How long a request may go unanswered before it stops counting against `maxInFlight`. */
  slowAfterMs: number;
}

const MAX_PROBING_WEBHOOKS = 10_000;

/** How an attempt ended, as far as the endpoint's share of the worker is concerned. */
export type SlotOutcome = 'answered' | 'timed_out' | 'failed';

/**
 * The delivery worker's in-flight accounting, which is what keeps endpoints from delaying each
 * other. Three rules bound what a slow or hanging endpoint can hold:
 * - each endpoint has at most `maxInFlightPerEndpoint` requests in flight;
 * - a request unanswered after `slowAfterMs` moves off the overall limit onto a second budget of
 *   the same size, so endpoints that hang cannot use up the overall limit however many there are,
 *   while the sockets they hold stay bounded (twice the overall limit at most);
 * - an endpoint whose request timed out gets one request at a time until it answers again, so a
 *   dead endpoint holds one slot, not all of its share, and does not burn through the attempts of
 *   its whole backlog at once.
 * The accounting is memory only: after a restart every endpoint starts with its full share.
 */
export class EndpointSlots {
  private readonly busyByWebhook = new Map<string, number>();
  private readonly probing = new Set<string>();
  /** Requests in flight past `slowAfterMs`, per endpoint. */
  private readonly slowByWebhook = new Map<string, number>();
  private countedInFlight = 0;
  private slowInFlight = 0;

  constructor(
    private readonly limits: EndpointSlotLimits,
    /**
     * Called whenever a slot frees up, so the worker can start more work: with the endpoint's
     * id when one of its own slots freed, without when a slow request left the overall limit.
     */
    private readonly slotFreed: (webhookId?: string) => void,
  ) {}

  /** How many more requests may start now. */
  room(): number {
    return this.limits.maxInFlight - this.countedInFlight;
  }

  /**
   * Every endpoint whose share is not the full one, with how many more requests it may start
   * now (0: none). Endpoints not listed may start `maxInFlightPerEndpoint`.
   */
  freeSlotsByWebhook(): Map<string, number> {
    const free = new Map<string, number>();
    for (const webhookId of this.probing) free.set(webhookId, 1);
    for (const [webhookId, busy] of this.busyByWebhook) free.set(webhookId, Math.max(0, this.limitFor(webhookId) - busy));
    return free;
  }

  /** How many more requests this endpoint may start now, overall room permitting. */
  freeFor(webhookId: string): number {
    return Math.max(0, this.limitFor(webhookId) - (this.busyByWebhook.get(webhookId) ?? 0));
  }

  /**
   * Whether the endpoint is answering: it has not timed out since its last answer, and none of
   * its requests has gone unanswered past `slowAfterMs`. Work is queued ahead only for these.
   */
  isAnswering(webhookId: string): boolean {
    return !this.probing.has(webhookId) && !this.slowByWebhook.has(webhookId);
  }

  /** Takes a slot for one request; the function returned gives it back, with how it ended. */
  take(webhookId: string): (outcome: SlotOutcome) => void {
    this.countedInFlight += 1;
    this.busyByWebhook.set(webhookId, (this.busyByWebhook.get(webhookId) ?? 0) + 1);
    let slow = false;
    const slowTimer = setTimeout(() => {
      // With the second budget full, the request keeps counting against the overall limit.
      if (this.slowInFlight >= this.limits.maxInFlight) return;
      slow = true;
      this.countedInFlight -= 1;
      this.slowInFlight += 1;
      this.slowByWebhook.set(webhookId, (this.slowByWebhook.get(webhookId) ?? 0) + 1);
      this.slotFreed();
    }, this.limits.slowAfterMs);
    let released = false;
    return (outcome) => {
      if (released) return;
      released = true;
      clearTimeout(slowTimer);
      if (slow) {
        this.slowInFlight -= 1;
        const stillSlow = (this.slowByWebhook.get(webhookId) ?? 1) - 1;
        if (stillSlow === 0) this.slowByWebhook.delete(webhookId);
        else this.slowByWebhook.set(webhookId, stillSlow);
      } else {
        this.countedInFlight -= 1;
      }
      const remaining = (this.busyByWebhook.get(webhookId) ?? 1) - 1;
      if (remaining === 0) this.busyByWebhook.delete(webhookId);
      else this.busyByWebhook.set(webhookId, remaining);
      // Webhooks deleted while probing would otherwise stay listed for the life of the process.
      if (outcome === 'timed_out' && this.probing.size >= MAX_PROBING_WEBHOOKS) this.probing.clear();
      if (outcome === 'timed_out') this.probing.add(webhookId);
      else if (outcome === 'answered') this.probing.delete(webhookId);
      this.slotFreed(webhookId);
    };
  }

  private limitFor(webhookId: string): number {
    return this.probing.has(webhookId) ? 1 : this.limits.maxInFlightPerEndpoint;
  }
}
