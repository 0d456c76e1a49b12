/**
 * Deliveries this node claimed in the write that queued them, waiting in memory for a free slot
 * of their endpoint. The bounds are on what is offered a claim (`hasRoom`), not on what is
 * handed over: a delivery claimed inside a transaction is already promised to this node when its
 * commit returns, so it is always accepted, and the bounds can be overshot by one group commit.
 *
 * Nothing here is the only record of anything: every entry is a committed, claimed row. A crash
 * loses only the order of the queue; the claims lapse and the deliveries are claimed again.
 */
export class HandoffQueues<Delivery extends { webhookId: string }> {
  private readonly byWebhook = new Map<string, Delivery[]>();
  private total = 0;

  constructor(
    /** How many may wait for one endpoint. */
    readonly perWebhook: number,
    private readonly overall: number,
  ) {}

  get size(): number {
    return this.total;
  }

  hasRoom(webhookId: string): boolean {
    return this.room() > 0 && this.roomFor(webhookId) > 0;
  }

  /** How many more may wait overall. */
  room(): number {
    return Math.max(0, this.overall - this.total);
  }

  /** How many more may wait for this endpoint, the overall room aside. */
  roomFor(webhookId: string): number {
    return Math.max(0, this.perWebhook - (this.byWebhook.get(webhookId)?.length ?? 0));
  }

  push(delivery: Delivery): void {
    const queue = this.byWebhook.get(delivery.webhookId);
    if (queue === undefined) this.byWebhook.set(delivery.webhookId, [delivery]);
    else queue.push(delivery);
    this.total += 1;
  }

  /** The endpoint's oldest waiting delivery. */
  shift(webhookId: string): Delivery | undefined {
    const queue = this.byWebhook.get(webhookId);
    const delivery = queue?.shift();
    if (delivery === undefined) return undefined;
    this.total -= 1;
    if (queue!.length === 0) this.byWebhook.delete(webhookId);
    return delivery;
  }

  /** Everything waiting for one endpoint, removed. */
  takeAll(webhookId: string): Delivery[] {
    const queue = this.byWebhook.get(webhookId) ?? [];
    this.byWebhook.delete(webhookId);
    this.total -= queue.length;
    return queue;
  }

  /** The endpoints with deliveries waiting, in the order their queues were started. */
  waitingWebhooks(): string[] {
    return [...this.byWebhook.keys()];
  }

  /** Everything waiting, removed: for a stop, which hands it back to the outbox. */
  clear(): Delivery[] {
    const all = [...this.byWebhook.values()].flat();
    this.byWebhook.clear();
    this.total = 0;
    return all;
  }
}
