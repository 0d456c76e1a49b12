import type { Logger } from 'pino';
import type { Store } from '../store/database.ts';
import { signalNodes } from '../store/repositories/cluster-signals.ts';
import { findRequestedLeases, requestLeases, withdrawRequests, type ClusterView } from '../store/repositories/lease-handovers.ts';
import type { ClaimedLease } from '../store/repositories/leases.ts';
import { planRequests } from './lease-plan.ts';

/**
 * The asking side of a handover (ADR 0041): a node below its share asks the most loaded nodes
 * for numbers, no more than it can start before its next tick, and takes up those handed to it.
 * The holder's side, which drains and hands over, is the lease keeper's.
 */
export class NumberRequests {
  /** Numbers asked for and not yet handed over, with when (performance.now()). */
  private readonly pending = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly nodeId: string,
    /** A request unanswered for this long (a TTL) is withdrawn: its holder may be stuck. */
    private readonly unansweredAfterMs: number,
    private readonly logger: Logger,
  ) {}

  get outstanding(): number {
    return this.pending.size;
  }

  has(numberId: string): boolean {
    return this.pending.has(numberId);
  }

  /** Forgets every request, as a node's term ends (the database drops them with its leases). */
  forget(): void {
    this.pending.clear();
  }

  /** Asks for what planRequests picks, within `budget`, and signals the holders. */
  async ask(view: ClusterView, held: number, budget: number, cap: number | null): Promise<void> {
    if (budget - this.pending.size <= 0) return;
    const plan = planRequests(view, { nodeId: this.nodeId, held, outstanding: this.pending.size, budget: budget - this.pending.size, cap });
    if (plan.size === 0) return;
    const asked = await this.store.db.transaction().execute(async (trx) => {
      const ids: string[] = [];
      for (const [from, count] of plan) ids.push(...(await requestLeases(trx, this.store.dialect, this.nodeId, from, count)));
      if (ids.length > 0) await signalNodes(trx, this.store.dialect, 'leases');
      return ids;
    });
    const now = performance.now();
    for (const id of asked) this.pending.set(id, now);
    if (asked.length > 0) this.logger.info({ asked: asked.length, held }, 'asked more loaded nodes for numbers');
  }

  /**
   * The leases handed to this node since the last look (`isHeld` tells those it has already
   * taken up); forgets requests that were declined or went elsewhere, and withdraws those left
   * unanswered.
   */
  async handedOver(isHeld: (numberId: string, epoch: number) => boolean): Promise<ClaimedLease[]> {
    if (this.pending.size === 0) return [];
    const rows = await findRequestedLeases(this.store.db, [...this.pending.keys()]);
    const byId = new Map(rows.map((row) => [row.numberId, row]));
    const gained: ClaimedLease[] = [];
    const unanswered: string[] = [];
    for (const [numberId, askedAt] of this.pending) {
      const row = byId.get(numberId);
      if (row?.nodeId === this.nodeId) {
        this.pending.delete(numberId);
        if (!isHeld(numberId, row.epoch)) gained.push({ numberId, nodeId: this.nodeId, epoch: row.epoch, phone: row.phone });
      } else if (row?.wantedBy !== this.nodeId) {
        this.pending.delete(numberId);
      } else if (performance.now() - askedAt > this.unansweredAfterMs) {
        unanswered.push(numberId);
      }
    }
    if (unanswered.length > 0) {
      await withdrawRequests(this.store.db, this.nodeId, unanswered);
      for (const numberId of unanswered) this.pending.delete(numberId);
    }
    return gained;
  }
}
