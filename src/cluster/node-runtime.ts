import os from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Store } from '../store/database.ts';
import { listNodes, pruneClusterHistory, retireNode, type ClusterNode } from '../store/repositories/leases.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import type { KeyRevocationListener } from './key-revocations.ts';
import type { ScheduledTask, Scheduler } from '../jobs/scheduler.ts';

/** The background work of a node, started and stopped in order by NodeRuntime. */
export interface NodeWork {
  keeper: LeaseKeeper;
  /** Resolves once the sessions of the leases claimed so far have started. */
  sessionsStarted(): Promise<void>;
  deliveryWorker: { start(): void; stop(): Promise<void> };
  /** Closes the event streams' connections, telling each client to come back to any node. */
  eventStreams: { stop(): Promise<void> };
  /** Fail sends a crash cut off and purge what has expired (src/cluster/sweeps.ts); run at start, in order, then each on its interval. */
  sweeps: readonly ScheduledTask[];
  /** Runs the send queues of the numbers the node owns. */
  queueRunner: { start(): void; stop(): Promise<void> };
  /** Ends linking attempts under way before the sessions stop. */
  stopLinking(): Promise<void>;
  revocations: KeyRevocationListener;
}

/** A second server on one SQLite file, refused with the reason and the way out. */
export class SingleNodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SingleNodeError';
  }
}

const HISTORY_DAYS = 7;

/**
 * Everything a node does besides answering HTTP: the lease keeper (which starts and stops the
 * sessions through the supervisor), the webhook delivery worker, the periodic sweeps and, on
 * PostgreSQL, the listener that drops revoked keys from the cache. Built by the composition
 * root; `wagw serve` starts it before the HTTP server listens, and on stopping stops it before the
 * server drains its requests, so that a slow request cannot hold back the handover.
 */
export class NodeRuntime {
  private started = false;
  /** Set as the node begins to stop: its /health then tells load balancers to send no more. */
  stopping = false;
  private readonly historyPrune: ScheduledTask;

  constructor(
    private readonly config: Config,
    private readonly store: Store,
    private readonly work: NodeWork,
    private readonly logger: Logger,
    scheduler: Scheduler,
  ) {
    this.historyPrune = scheduler.register({
      name: 'cluster-history-prune',
      intervalMs: config.interruptedSendAfterMs,
      scope: 'every-node',
      run: () => pruneClusterHistory(this.store.db, Date.now() - HISTORY_DAYS * 86_400_000),
    });
  }

  /** The periodic work the runtime starts and stops, in the order it first runs it. */
  private get periodic(): ScheduledTask[] {
    return [...this.work.sweeps, this.historyPrune];
  }

  /** Only the lease keeper and its sessions: what a test gateway without the rest needs. */
  async startSessions(): Promise<void> {
    await this.retireDeadPredecessors();
    await this.work.keeper.register();
    await this.refuseIfAnotherServerCameFirst();
    await this.work.keeper.start();
    // The numbers claimed at start are connected before the node takes requests for them.
    await this.work.sessionsStarted();
  }

  async start(): Promise<void> {
    this.started = true;
    // A node listens before it is counted: a number handed to it, or released for it, is heard at once (ADR 0041).
    await this.work.revocations.start();
    try {
      await this.startSessions();
    } catch (error) {
      await this.work.revocations.stop();
      throw error;
    }
    this.work.deliveryWorker.start();
    this.work.queueRunner.start();
    for (const task of this.periodic) await task.start({ runNow: true });
  }

  /** Reverse order: no new sweeps, linking ended, sessions stopped and leases released, then the worker. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const task of this.periodic) task.stop();
    // No message is released once the node has begun to hand its numbers over.
    await this.work.queueRunner.stop();
    await this.work.stopLinking();
    await this.work.keeper.stop();
    if (this.started) await this.work.revocations.stop();
    await this.work.eventStreams.stop();
    await this.work.deliveryWorker.stop();
  }

  /** One pass of every sweep, in order, as at start (each failure is logged and counted by the scheduler). */
  async sweepOnce(): Promise<void> {
    for (const task of this.periodic) await task.runNow();
  }

  /**
   * A node on this host whose process is gone died without releasing its leases; they end now
   * rather than after their TTL. On SQLite, one that is still alive is another server on the
   * same file, which SQLite cannot share safely: this start is refused.
   */
  private async retireDeadPredecessors(): Promise<void> {
    const ttlMs = this.config.cluster.leaseTtlMs;
    for (const node of await listNodes(this.store.db, this.store.dialect)) {
      if (node.stoppedAt !== null || node.heartbeatAgeMs > 2 * ttlMs || node.id === this.work.keeper.nodeId) continue;
      const sameHost = node.hostname === os.hostname();
      if (sameHost && !processAlive(node.pid)) {
        await retireNode(this.store.db, this.store.dialect, node.id);
        this.logger.info(
          { node: node.id, pid: node.pid },
          'released the leases of a previous run of a node on this host that did not stop cleanly',
        );
      } else if (this.store.dialect === 'sqlite' && node.role === 'server') {
        throw secondServer(node);
      }
    }
  }

  /**
   * Two servers started on one SQLite file at the same moment both pass the check above before
   * either is registered. Once registered, each looks again, and the one registered later (by
   * start time, then id) stands down before it claims any number: the file's write lock orders
   * the registrations, so exactly one of them serves.
   */
  private async refuseIfAnotherServerCameFirst(): Promise<void> {
    if (this.store.dialect !== 'sqlite') return;
    const nodes = await listNodes(this.store.db, this.store.dialect);
    const self = nodes.find((node) => node.id === this.work.keeper.nodeId);
    if (self === undefined) return;
    const ttlMs = this.config.cluster.leaseTtlMs;
    const earlier = nodes.find(
      (node) =>
        node.id !== self.id &&
        node.role === 'server' &&
        node.stoppedAt === null &&
        node.heartbeatAgeMs <= 2 * ttlMs &&
        (node.startedAt < self.startedAt || (node.startedAt === self.startedAt && node.id < self.id)) &&
        (node.hostname !== os.hostname() || processAlive(node.pid)),
    );
    if (earlier === undefined) return;
    await this.work.keeper.withdraw();
    throw secondServer(earlier);
  }
}

function secondServer(node: ClusterNode): SingleNodeError {
  return new SingleNodeError(
    `Another wa-gateway server (node ${node.name}, pid ${node.pid} on ${node.hostname}) is running on this SQLite database. ` +
      'SQLite serves one node: stop that server first, or run several nodes on PostgreSQL (docs/cluster.md).',
  );
}

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
