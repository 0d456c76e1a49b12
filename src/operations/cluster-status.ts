import type { Store } from '../store/database.ts';
import { listLeasedNumbers, listNodes, listRecentLeaseChanges, type LeaseChange } from '../store/repositories/leases.ts';

export type NodeState = 'live' | 'stopped' | 'dead';

export interface NodeStatus {
  id: string;
  name: string;
  url: string | null;
  hostname: string;
  pid: number;
  startedAt: Date;
  heartbeatAgeMs: number;
  /** live: heartbeating; stopped: stopped cleanly; dead: its heartbeat ended without a stop. */
  state: NodeState;
  phones: string[];
}

export interface ClusterStatus {
  nodes: NodeStatus[];
  /** Numbers no live lease covers right now (between an owner's end and the takeover). */
  unownedPhones: string[];
  recentChanges: LeaseChange[];
}

/** The operator's view of the cluster: nodes, what each owns, and the latest changes of owner. */
export async function readClusterStatus(store: Store, leaseTtlMs: number, changes = 20): Promise<ClusterStatus> {
  const [nodes, numbers, recentChanges] = await Promise.all([
    listNodes(store.db, store.dialect),
    listLeasedNumbers(store.db, store.dialect),
    listRecentLeaseChanges(store.db, changes),
  ]);
  const phonesByNode = new Map<string, string[]>();
  const unownedPhones: string[] = [];
  for (const number of numbers) {
    if (number.nodeId === null || number.remainingMs <= 0) unownedPhones.push(number.phone);
    else phonesByNode.set(number.nodeId, [...(phonesByNode.get(number.nodeId) ?? []), number.phone]);
  }
  return {
    nodes: nodes
      .map((node) => ({
        id: node.id,
        name: node.name,
        url: node.url,
        hostname: node.hostname,
        pid: node.pid,
        startedAt: new Date(node.startedAt),
        heartbeatAgeMs: node.heartbeatAgeMs,
        state: (node.stoppedAt !== null ? 'stopped' : node.heartbeatAgeMs <= leaseTtlMs ? 'live' : 'dead') as NodeState,
        phones: phonesByNode.get(node.id) ?? [],
      }))
      // The nodes that matter now come first; long-gone ones only fill the history.
      .filter((node, index) => node.state === 'live' || node.phones.length > 0 || index < 20),
    unownedPhones,
    recentChanges,
  };
}
