import type { SessionLease } from '../domain/model.ts';
import type { ClaimedLease } from '../store/repositories/leases.ts';

// The two sides of the meeting between the sessions and the node's leases (ADR 0061): the
// supervisor runs a session only under a lease, and the lease keeper (cluster/lease-keeper.ts)
// claims, renews and hands over leases. Both interfaces live here, with the sessions, so that
// messaging/ depends on no cluster code and the cluster's keeper implements what it is asked.

/** The node's leases, as the session supervisor and the stale-write watch read and give them. */
export interface SessionLeases {
  readonly nodeId: string;
  /** How often leases are renewed: a client told to retry is told at most about this much more. */
  readonly renewIntervalMs: number;
  /** The node has begun to stop (or never started): it takes no number any more. */
  readonly stopping: boolean;
  /** Makes `host` the one that starts and stops sessions as leases come and go. */
  attach(host: SessionHost): void;
  /** This node's lease on the number, while it holds one and is not giving it up. */
  leaseOf(numberId: string): SessionLease | undefined;
  /** The node is giving the number up now, waiting for the work under way before it releases the lease. */
  givingUp(numberId: string): boolean;
  /** Runs a lease tick as soon as the one under way (if any) ends, rather than on the next interval. */
  tickSoon(): Promise<void>;
  /** Releases leases held in the database but not served here, so that any node may claim them. */
  giveBack(leases: ClaimedLease[]): Promise<void>;
  /** The lease was given up by this node itself (so a late write under it is not a stale one). */
  gaveUp(lease: SessionLease): boolean;
  /** A write under the lease was refused as stale: the lease is lost, and its session ends. */
  lost(lease: SessionLease): Promise<void>;
}

/** What the lease keeper asks of whoever runs sessions: the session supervisor. */
export interface SessionHost {
  /** Leases were claimed: start the numbers' sessions (soon; starts may be staggered). */
  leasesGained(leases: ClaimedLease[]): void;
  /** The lease is gone, or about to be given up: end the session, cleanly, before returning. */
  leaseLost(numberId: string): Promise<void>;
  /**
   * The numbers are being given up and no new work is let in for them (leaseOf hides them):
   * resolve once the work already under way on them has ended, or after `boundMs`.
   */
  drain(numberIds: readonly string[], boundMs: number): Promise<void>;
  /** Sessions gained and not yet started: a node with a backlog asks for no more numbers. */
  pendingStarts(): number;
}
