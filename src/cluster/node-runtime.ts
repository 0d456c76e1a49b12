import os from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Store } from '../store/database.ts';
import { listNodes, pruneClusterHistory, retireNode, type ClusterNode } from '../store/repositories/leases.ts';
import type { LeaseKeeper } from './lease-keeper.ts';
import type { KeyRevocationListener } from './key-revocations.ts';

/** The background work of a node, started and stopped in order by NodeRuntime. */
export interface NodeWork {
  keeper: LeaseKeeper;
  /** Resolves once the sessions of the leases claimed so far have started. */
  sessionsStarted(): Promise<void>;
  deliveryWorker: { start(): void; stop(): Promise<void> };
  /** Runs the send queues of the numbers the node owns. */
  queueRunner: { start(): void; stop(): Promise<void> };
  /** Fails sends a crash cut off, and purges what has expired; run at start and every period. */
  sweep(): Promise<void>;
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
  private sweeper: NodeJS.Timeout | undefined;
  private started = false;

  constructor(
    private readonly config: Config,
    private readonly store: Store,
    private readonly work: NodeWork,
    private readonly logger: Logger,
  ) {}

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
    await this.startSessions();
    await this.work.revocations.start();
    this.work.deliveryWorker.start();
    this.work.queueRunner.start();
    await this.sweepOnce();
    this.sweeper = setInterval(() => void this.sweepOnce(), this.config.interruptedSendAfterMs);
    this.sweeper.unref();
  }

  /** Reverse order: no new sweeps, linking ended, sessions stopped and leases released, then the worker. */
  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    // No message is released once the node has begun to hand its numbers over.
    await this.work.queueRunner.stop();
    await this.work.stopLinking();
    await this.work.keeper.stop();
    if (this.started) await this.work.revocations.stop();
    await this.work.deliveryWorker.stop();
  }

  /** One pass of the periodic sweep; the runtime runs it at start and every WAGW_INTERRUPTED_SEND_AFTER_MS. */
  async sweepOnce(): Promise<void> {
    await this.work.sweep().catch((error: unknown) => this.logger.error({ err: error }, 'periodic sweep failed'));
    await pruneClusterHistory(this.store.db, Date.now() - HISTORY_DAYS * 86_400_000).catch(() => {});
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
        this.logger.info({ node: node.id, pid: node.pid }, 'released the leases of a previous run of a node on this host that did not stop cleanly');
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
        node.id !== self.id && node.role === 'server' && node.stoppedAt === null && node.heartbeatAgeMs <= 2 * ttlMs &&
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
