import type { ClusterView } from '../store/repositories/lease-handovers.ts';

/**
 * How many numbers a node should hold: its fair share (numbers ÷ live servers, rounded up),
 * within its own cap. Live servers include nodes still in their start-up window, which claim
 * nothing yet: a node never takes the share of a node it has seen start.
 */
export function claimTarget(view: ClusterView, cap: number | null): number {
  const share = Math.ceil(view.total / Math.max(1, view.liveServers.length));
  return cap === null ? share : Math.min(share, cap);
}

/** The least a node holds once the spread is even: numbers ÷ live servers, rounded down. */
export function fairFloor(view: ClusterView): number {
  return Math.floor(view.total / Math.max(1, view.liveServers.length));
}

export interface Requester {
  nodeId: string;
  /** Leases it holds now. */
  held: number;
  /** Numbers it asked for and has not yet been given. */
  outstanding: number;
  /** The most it may ask for now: what it can start before its next tick. */
  budget: number;
  cap: number | null;
}

/**
 * Which numbers a node below its share asks for, and from whom: one at a time from the most
 * loaded live server, and only where the move is one the even spread needs (the giver is
 * above the share the asker's position calls for, and holds at least two more than the
 * asker). So the moves after a join are exactly the surplus above the fair share, never a
 * number moved and moved back.
 */
export function planRequests(view: ClusterView, asker: Requester): Map<string, number> {
  const floor = fairFloor(view);
  const target = claimTarget(view, asker.cap);
  const remaining = new Map(
    view.liveServers
      .filter((id) => id !== asker.nodeId)
      .map((id) => [id, (view.heldBy.get(id) ?? 0) - (view.wantedFrom.get(id) ?? 0)] as const),
  );
  const plan = new Map<string, number>();
  let mine = asker.held + asker.outstanding;
  for (let asked = 0; asked < asker.budget && mine < target; asked++) {
    // Below the floor, take from anyone above it; at the floor, only from nodes above the ceiling.
    const threshold = mine < Math.min(floor, target) ? floor : Math.ceil(view.total / Math.max(1, view.liveServers.length));
    let giver: string | undefined;
    for (const [id, count] of remaining) {
      if (count > threshold && count - mine >= 2 && (giver === undefined || count > remaining.get(giver)!)) giver = id;
    }
    if (giver === undefined) break;
    remaining.set(giver, remaining.get(giver)! - 1);
    plan.set(giver, (plan.get(giver) ?? 0) + 1);
    mine++;
  }
  return plan;
}
