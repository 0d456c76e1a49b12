/** What a trigger does with a delivery whose signature it has verified. */
export type Admission = 'first' | 'repeat' | 'full';

/** How many deliveries one trigger remembers at most: far more than one workflow can run in five minutes. */
export const MAX_REMEMBERED_DELIVERIES = 100_000;

/**
 * The webhook-ids of the deliveries one trigger has accepted, so that a replay of a genuine
 * delivery inside the signature's timestamp window starts nothing. An id is kept until the newest
 * timestamp it was signed with leaves the window; from then on the signature check alone refuses
 * the request, so forgetting it is safe.
 *
 * It lives in memory, in the n8n process, rather than in the workflow's static data: n8n loads a
 * production webhook's workflow, static data included, from its database for each request and
 * writes it back afterwards, so two deliveries arriving together would each write back a set
 * missing the other's id; here checking and recording an id is one synchronous step. A restart
 * of n8n forgets the ids, leaving at most five minutes in which a captured delivery could be
 * replayed once more.
 */
export class DeliveryMemory {
  /** Each id's expiry (unix seconds), in the order they were last admitted, so the oldest come first. */
  private readonly expiresAtSeconds = new Map<string, number>();

  constructor(
    private readonly windowSeconds: number,
    private readonly capacity = MAX_REMEMBERED_DELIVERIES,
  ) {}

  /**
   * Records a delivery: 'first' the first time its id is seen, 'repeat' after that (a replay, or
   * the gateway's retry of a delivery whose answer it did not get), 'full' when the trigger
   * cannot remember one more without forgetting one that could still be replayed.
   */
  admit(deliveryId: string, timestampSeconds: number, nowSeconds: number): Admission {
    this.forgetExpired(nowSeconds);
    const expiresAt = timestampSeconds + this.windowSeconds;
    const known = this.expiresAtSeconds.get(deliveryId);
    if (known !== undefined) {
      // A repeat signed later can itself be replayed until its own timestamp leaves the window.
      this.expiresAtSeconds.delete(deliveryId);
      this.expiresAtSeconds.set(deliveryId, Math.max(known, expiresAt));
      return 'repeat';
    }
    if (this.expiresAtSeconds.size >= this.capacity) this.forgetAllExpired(nowSeconds);
    if (this.expiresAtSeconds.size >= this.capacity) return 'full';
    this.expiresAtSeconds.set(deliveryId, expiresAt);
    return 'first';
  }

  get size(): number {
    return this.expiresAtSeconds.size;
  }

  private forgetExpired(nowSeconds: number): void {
    // Timestamps are close to the time of admission, so the oldest entries expire first; one
    // signed far ahead only keeps those behind it a little longer, never shorter.
    for (const [id, expiresAt] of this.expiresAtSeconds) {
      if (expiresAt >= nowSeconds) return;
      this.expiresAtSeconds.delete(id);
    }
  }

  /**
   * Every expired id, wherever it stands: before answering 'full', so that one delivery signed
   * ahead (a sender's clock running fast) cannot hold the expired ones behind it in the way.
   */
  private forgetAllExpired(nowSeconds: number): void {
    for (const [id, expiresAt] of this.expiresAtSeconds) {
      if (expiresAt < nowSeconds) this.expiresAtSeconds.delete(id);
    }
  }
}
