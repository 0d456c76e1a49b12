import type { Store } from '../store/database.ts';
import { listLeasedNumbers, listNodes, listRecentLeaseChanges, type LeaseChange } from '../store/repositories/leases.ts';
import { TASKS_PATH, type NodeClient } from '../cluster/node-client.ts';
import type { Scheduler, TaskSnapshot } from '../jobs/scheduler.ts';

type NodeState = 'live' | 'stopped' | 'dead';

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

/** A task as another node reported it: its times as ISO strings. */
export type ReportedTask = Omit<TaskSnapshot, 'lastRunAt'> & { lastRunAt: string | null };

/** Where the periodic tasks of each node are read from: this node's own scheduler, or a call to the node. */
export interface TaskSources {
  thisNodeId: string;
  scheduler: Scheduler;
  nodeClient: NodeClient;
}

/** A node that does not list its tasks within this is shown without them, so that a frozen node cannot hold the status up. */
const TASKS_ANSWER_MS = 3_000;

/**
 * Each live node's periodic tasks and when each last ran (src/jobs/scheduler.ts), keyed by node
 * id. The counts live in each node's memory, so other nodes are asked (signed, bounded in time);
 * a node that is not live, has no address or does not answer maps to null.
 */
export async function readNodeTasks(nodes: readonly NodeStatus[], sources: TaskSources): Promise<Map<string, ReportedTask[] | null>> {
  const entries = await Promise.all(
    nodes.map(async (node): Promise<[string, ReportedTask[] | null]> => {
      if (node.id === sources.thisNodeId) return [node.id, sources.scheduler.list().map(reported)];
      if (node.state !== 'live' || node.url === null) return [node.id, null];
      try {
        const answer = await sources.nodeClient.call(
          { nodeId: node.id, url: node.url },
          'GET',
          TASKS_PATH,
          undefined,
          undefined,
          TASKS_ANSWER_MS,
        );
        const tasks = (answer.body as { tasks?: ReportedTask[] } | null)?.tasks;
        return [node.id, answer.status === 200 && Array.isArray(tasks) ? tasks : null];
      } catch {
        // Unreachable or silent: the status says so with null rather than failing as a whole.
        return [node.id, null];
      }
    }),
  );
  return new Map(entries);
}

/** A task as the node reports it over the wire. */
export function reported(task: TaskSnapshot): ReportedTask {
  return { ...task, lastRunAt: task.lastRunAt?.toISOString() ?? null };
}
