import os from 'node:os';
import type { SessionHost, SessionLeases } from '../messaging/session-leases.ts';
import type { Logger } from 'pino';
import { Scheduler, type ScheduledTask } from '../jobs/scheduler.ts';
import { newId } from '../domain/ids.ts';
import type { SessionLease } from '../domain/model.ts';
import type { Executor, Store } from '../store/database.ts';
import { findNumbersByIds } from '../store/repositories/numbers.ts';
import { signalNodes } from '../store/repositories/cluster-signals.ts';
import {
  claimLeases,
  ensureLeaseRows,
  listNodeLeases,
  markNodeStopped,
  registerNode,
  releaseLeases,
  renewNode,
  restartNodeLeases,
  reviveNodeTerm,
  setNodeUrl,
  type ClaimedLease,
} from '../store/repositories/leases.ts';
import {
  declineRequests,
  handOverLeases,
  listWantedLeases,
  readClusterView,
  withdrawRequests,
  type ClusterView,
} from '../store/repositories/lease-handovers.ts';
import { claimTarget, fairFloor } from './lease-plan.ts';
import { NumberRequests } from './number-requests.ts';
import { urgently } from '../store/urgent-lane.ts';

export interface LeaseSettings {
  /** How long a lease lasts unless renewed (WAGW_LEASE_TTL_MS). */
  ttlMs: number;
  /** The most sessions this node holds, whatever its fair share (WAGW_MAX_SESSIONS_PER_NODE); null for no cap. */
  maxSessions: number | null;
  nodeName: string;
  /** Where other nodes reach this one (WAGW_NODE_URL); null on a single node. */
  nodeUrl: string | null;
  /** The longest a number given up waits for the work already under way on it (WAGW_HANDOVER_DRAIN_MS). */
  drainMs: number;
  /** The most sessions of a real network this node starts a second (WAGW_SESSION_STARTS_PER_SECOND): also its pace in taking numbers over. */
  sessionStartsPerSecond: number;
}

/** The phones of leases known only by number id, for the record of changes of owner. */
async function withPhones(db: Executor, leases: ClaimedLease[]): Promise<ClaimedLease[]> {
  const missing = leases.filter((lease) => lease.phone === '');
  if (missing.length === 0) return leases;
  const phones = new Map(
    (
      await findNumbersByIds(
        db,
        missing.map((lease) => lease.numberId),
      )
    ).map((number) => [number.id, number.phone as string]),
  );
  return leases.map((lease) => (lease.phone === '' ? { ...lease, phone: phones.get(lease.numberId) ?? '' } : lease));
}

/** How long a lease given up of this node's own accord is remembered, to tell its late writes from stale ones. */
const RELINQUISHED_MEMORY_MS = 3_600_000;

/** Numbers claimed per statement. */
const CLAIM_BATCH = 1_000;

/**
 * The longest a node starting on PostgreSQL beside numbers nobody holds waits before claiming
 * them, so that nodes started together all register first and each claims its share, instead
 * of the first to tick taking everything and handing most of it over again (ADR 0041).
 */
const STARTUP_WINDOW_MS = 1_000;

/**
 * Holds this node's leases (docs/adr/0018-cluster-leases.md, 0041, 0054). Its renewal, one
 * write of its own row, runs on its own timer and ahead of the database's queue, never behind
 * the tick's other work. On every tick it claims free numbers up to its fair share, hands over
 * the numbers other nodes asked for, and, below its share, asks the most loaded nodes for
 * numbers at the pace it can start them. A watchdog stops every session once the last
 * successful renewal is too old for the leases to be trusted and the database does not confirm
 * them in time: a node that cannot reach the database fences itself before another node may
 * take its numbers.
 */
export class LeaseKeeper implements SessionLeases {
  readonly nodeId = newId('node');
  private readonly held = new Map<string, ClaimedLease>();
  private host: SessionHost | undefined;
  private readonly renewal: ScheduledTask;
  private readonly leaseTick: ScheduledTask;
  private readonly trustCheck: ScheduledTask;
  /** The renewal under way, if any: whoever needs one meanwhile waits for it rather than queueing another. */
  private renewing: Promise<boolean> | undefined;
  /** Counts this node's terms on PostgreSQL: a claim answered after its term restarted is not kept (the restart gave it up). */
  private term = 0;
  private ticking: Promise<void> = Promise.resolve();
  private tickQueued = false;
  /** performance.now() when the last renewal that succeeded was sent. */
  private lastRenewalSentAt = 0;
  private running = false;
  private registered = false;
  /** Set for a CLI command that needs a few numbers' sessions (linking): only these are claimed. */
  private pinned: readonly string[] | undefined;
  /** Leases this node gave up of its own accord (`numberId:epoch`), with when, oldest first. */
  private readonly relinquished = new Map<string, number>();
  /** Numbers being given up: still held (their sends in flight are recorded under the lease), but no new work is let in. */
  private readonly leaving = new Set<string>();
  /** Set while the watchdog stands the node down, so that its overlapping passes do it once. */
  private distrusting = false;
  /** Numbers this node asked other nodes for. */
  private readonly requests: NumberRequests;
  /** Set by the scheduler's ticks: only these ask for numbers, so a node asks at its own pace, not at every signal. */
  private periodicDue = false;
  /** performance.now() until which this node claims nothing (its start-up window); undefined before its first tick. */
  private settlesAt: number | undefined;

  constructor(
    private readonly store: Store,
    private readonly settings: LeaseSettings,
    private readonly logger: Logger,
    scheduler = new Scheduler(logger),
  ) {
    this.requests = new NumberRequests(store, this.nodeId, settings.ttlMs, logger);
    this.renewal = scheduler.register({
      name: 'lease-renewal',
      intervalMs: this.renewIntervalMs,
      scope: 'every-node',
      run: () => this.renewNow(),
    });
    this.leaseTick = scheduler.register({
      name: 'lease-tick',
      intervalMs: this.renewIntervalMs,
      scope: 'every-node',
      run: () => {
        this.periodicDue = true;
        return this.tickSoon();
      },
    });
    this.trustCheck = scheduler.register({
      name: 'lease-trust-check',
      intervalMs: Math.max(50, Math.floor(this.renewIntervalMs / 4)),
      scope: 'every-node',
      run: () => this.checkTrust(),
    });
  }

  /** How often leases are renewed and claims made: a third of the TTL, so two renewals may fail in a row. */
  get renewIntervalMs(): number {
    return Math.max(100, Math.floor(this.settings.ttlMs / 3));
  }

  /**
   * How long after a renewal was sent this node still trusts its leases. The database dated the
   * lease from when it ran the statement, which is after it was sent, so stopping at this point
   * by the node's own clock always comes before the lease can end by the database's.
   */
  get trustMs(): number {
    return this.settings.ttlMs - Math.max(this.renewIntervalMs / 2, Math.floor(this.settings.ttlMs / 5));
  }

  attach(host: SessionHost): void {
    this.host = host;
  }

  /**
   * Holds only the given numbers, for as long as a CLI command needs their sessions. Claims
   * them at once if free; a number a live node holds stays with it.
   */
  async startPinned(numberIds: readonly string[]): Promise<void> {
    this.pinned = numberIds;
    await this.start();
  }

  /** Records this node in the cluster's table, once; start() does it if nobody did before. */
  async register(): Promise<void> {
    if (this.registered) return;
    await registerNode(
      this.store.db,
      this.store.dialect,
      {
        id: this.nodeId,
        name: this.settings.nodeName,
        url: this.settings.nodeUrl,
        role: this.pinned === undefined ? 'server' : 'command',
        hostname: os.hostname(),
        pid: process.pid,
      },
      this.settings.ttlMs,
    );
    this.lastRenewalSentAt = performance.now();
    this.registered = true;
  }

  /** How many sessions this node can start before its next tick: what it asks for at most. */
  private get startsPerTick(): number {
    return Math.max(1, Math.floor((this.settings.sessionStartsPerSecond * this.renewIntervalMs) / 1000));
  }

  /** Marks a registered node that will not start after all (a refused second server) as stopped. */
  async withdraw(): Promise<void> {
    if (this.registered && !this.running) await markNodeStopped(this.store.db, this.store.dialect, this.nodeId);
  }

  async start(): Promise<void> {
    await this.register();
    this.running = true;
    await this.renewal.start({ runNow: true });
    await this.leaseTick.start({ runNow: true });
    await this.trustCheck.start();
    // A node in its start-up window claims at its end, before start() returns, so that a single
    // node still has its numbers' sessions under way before it listens.
    const waitMs = (this.settlesAt ?? 0) - performance.now();
    if (waitMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      await this.tickSoon();
    }
  }

  /**
   * Records where other nodes reach this one, once the server listens: on a single host (and
   * for the CLI) the listening address is enough when WAGW_NODE_URL is not set.
   */
  async announceUrl(url: string): Promise<void> {
    await setNodeUrl(this.store.db, this.nodeId, url);
  }

  /** Runs a tick as soon as the one under way (if any) ends; ticks never overlap. */
  tickSoon(): Promise<void> {
    if (!this.running) return Promise.resolve();
    if (this.tickQueued) return this.ticking;
    this.tickQueued = true;
    this.ticking = this.ticking.then(() => {
      this.tickQueued = false;
      return this.tick();
    });
    return this.ticking;
  }

  /** The lease this node holds on the number, if it holds one it still trusts and is not giving up. */
  leaseOf(numberId: string): SessionLease | undefined {
    return this.leaving.has(numberId) ? undefined : this.held.get(numberId);
  }

  /** Whether this node is giving the number up now: it waits for the work under way before it releases the lease. */
  givingUp(numberId: string): boolean {
    return this.leaving.has(numberId);
  }

  /** Whether this node has begun to stop (or never started): it takes no number any more. */
  get stopping(): boolean {
    return !this.running;
  }

  heldCount(): number {
    return this.held.size;
  }

  /**
   * Whether this node gave the lease up itself, in a clean stop or a handover. Its sessions'
   * last events (a status, a receipt, a message that was on its way) may still be written after
   * the release and be refused: that is expected, not the sign of a paused or cut-off node that
   * the stale-write alarm is for.
   */
  gaveUp(lease: SessionLease): boolean {
    return lease.nodeId === this.nodeId && this.relinquished.has(`${lease.numberId}:${lease.epoch}`);
  }

  private relinquish(leases: readonly SessionLease[]): void {
    const now = Date.now();
    // Late writes come within moments of the release; an hour of memory is ample and bounded.
    for (const [key, at] of this.relinquished) {
      if (now - at < RELINQUISHED_MEMORY_MS) break;
      this.relinquished.delete(key);
    }
    for (const lease of leases) this.relinquished.set(`${lease.numberId}:${lease.epoch}`, now);
  }

  /** A write under the lease was refused: another node owns the number now. */
  async lost(lease: SessionLease): Promise<void> {
    const held = this.held.get(lease.numberId);
    if (held === undefined || held.epoch !== lease.epoch) return;
    this.held.delete(lease.numberId);
    this.leaving.delete(lease.numberId);
    this.logger.warn({ numberId: lease.numberId, epoch: lease.epoch }, 'another node owns this number now; stopping its session here');
    await this.host?.leaseLost(lease.numberId);
  }

  /**
   * Releases leases this node holds in the database but does not serve (after stopping their
   * sessions, if any), so that any node may claim them at its next tick.
   */
  async giveBack(leases: ClaimedLease[]): Promise<void> {
    for (const lease of leases) {
      if (this.held.get(lease.numberId)?.epoch === lease.epoch) {
        this.held.delete(lease.numberId);
        this.leaving.delete(lease.numberId);
      }
      await this.host?.leaseLost(lease.numberId);
    }
    try {
      await this.store.db.transaction().execute(async (trx) => {
        await releaseLeases(trx, this.store.dialect, await withPhones(trx, leases), 'released');
        await signalNodes(trx, this.store.dialect, 'leases');
      });
    } catch (error) {
      this.logger.error({ err: error }, 'could not give leases back; they end with their TTL');
    }
  }

  /** Stops every session cleanly, then gives the leases up so that other nodes take over at once. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.renewal.stop();
    this.leaseTick.stop();
    this.trustCheck.stop();
    await this.renewing?.catch(() => undefined);
    // A tick logs its own failures (tick() catches them), so this only waits for it to end.
    await this.ticking;
    const asked = this.requests.outstanding > 0;
    this.requests.forget();
    const leases = [...this.held.values()];
    await this.drain(leases, this.drainBoundMs());
    this.relinquish(leases);
    await Promise.allSettled(leases.map((lease) => this.host?.leaseLost(lease.numberId)));
    this.held.clear();
    this.leaving.clear();
    try {
      await this.store.db.transaction().execute(async (trx) => {
        if (asked) await withdrawRequests(trx, this.nodeId);
        await releaseLeases(trx, this.store.dialect, leases, 'released');
        await markNodeStopped(trx, this.store.dialect, this.nodeId);
        // The other nodes claim the numbers now, not at their next tick.
        if (leases.length > 0) await signalNodes(trx, this.store.dialect, 'leases');
      });
    } catch (error) {
      this.logger.error({ err: error }, 'could not release the leases at shutdown; other nodes take the numbers once they expire');
    }
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    const periodic = this.periodicDue;
    this.periodicDue = false;
    try {
      await this.adoptHandedOver();
      await ensureLeaseRows(this.store.db);
      const view = await readClusterView(this.store.db, this.store.dialect);
      // A number deleted, or a lease this node holds in the database without serving it: compared in full only when the counts differ.
      if ((view.heldBy.get(this.nodeId) ?? 0) !== this.held.size) await this.reconcile();
      if (this.pinned === undefined && (view.wantedFrom.get(this.nodeId) ?? 0) > 0) await this.handOver(view);
      this.settlesAt ??= performance.now() + this.startupWindowMs(view);
      if (performance.now() < this.settlesAt) return;
      const claimed = await this.claim(view);
      if (periodic && this.pinned === undefined && view.claimable - claimed <= 0) await this.askForNumbers(view);
    } catch (error) {
      this.logger.error({ err: error }, 'lease tick failed');
    }
  }

  /**
   * A start-up window only where it matters: on PostgreSQL (SQLite has one node), for a server,
   * with numbers nobody holds. A node joining a cluster whose numbers are all held, or starting
   * on an empty database, claims at once.
   */
  private startupWindowMs(view: ClusterView): number {
    if (this.store.dialect !== 'postgres' || this.pinned !== undefined || view.claimable === 0) return 0;
    return Math.min(STARTUP_WINDOW_MS, this.renewIntervalMs);
  }

  /**
   * Renews this node's term, unless a renewal is under way already (then it waits for that one).
   * Resolves whether the leases it holds are still its own: false when its term had ended and
   * it gave them up.
   */
  renewNow(): Promise<boolean> {
    if (!this.running) return Promise.resolve(false);
    this.renewing ??= this.renew().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async renew(): Promise<boolean> {
    const sentAt = performance.now();
    // A renewal never waits for the requests queued for the database (urgent-lane.ts): under
    // load that queue is seconds long, and the node would stop trusting its own leases.
    if (await urgently(() => renewNode(this.store.db, this.store.dialect, this.nodeId, this.settings.ttlMs))) {
      this.noteLateness(sentAt);
      this.lastRenewalSentAt = sentAt;
      return true;
    }
    if (this.store.dialect === 'sqlite' && (await this.reviveTerm(sentAt))) return true;
    // The node's leases ran out before it renewed them (it was paused, or cut off): any of them
    // may be another node's by now. Its sessions stop, what still names it is given up, and it
    // starts a new term with nothing, to claim again like any node.
    this.term++;
    const leases = [...this.held.values()];
    this.held.clear();
    this.leaving.clear();
    this.requests.forget();
    if (leases.length > 0) {
      this.logger.warn({ numbers: leases.length }, "this node's leases ran out before it could renew them; stopping their sessions");
    }
    await Promise.allSettled(leases.map((lease) => this.host?.leaseLost(lease.numberId)));
    await urgently(() =>
      this.store.db.transaction().execute(async (trx) => {
        const released = await restartNodeLeases(trx, this.store.dialect, this.nodeId, this.settings.ttlMs);
        if (released.length > 0) await signalNodes(trx, this.store.dialect, 'leases');
      }),
    );
    this.lastRenewalSentAt = sentAt;
    return false;
  }

  /**
   * SQLite: takes the ended term up again with every lease nobody took meanwhile, so that a
   * node whose event loop stalled past its TTL loses none of its numbers (reviveNodeTerm says
   * why this is safe there). A lease taken meanwhile (by a CLI command) is lost as usual.
   */
  private async reviveTerm(sentAt: number): Promise<boolean> {
    const kept = await urgently(() => this.store.db.transaction().execute((trx) => reviveNodeTerm(trx, this.nodeId, this.settings.ttlMs)));
    if (kept === undefined) return false;
    this.lastRenewalSentAt = sentAt;
    const epochs = new Map(kept.map((lease) => [lease.numberId, lease.epoch]));
    const taken = [...this.held.values()].filter((lease) => epochs.get(lease.numberId) !== lease.epoch);
    this.logger.warn(
      { kept: this.held.size - taken.length, lost: taken.length },
      "this node's term ended before it could renew it (its event loop or its database was slow); took it up again with the leases nobody took",
    );
    for (const lease of taken) await this.lost(lease);
    return true;
  }

  /** Says when a renewal comes later than planned: the first sign of a node whose leases are at risk. */
  private noteLateness(sentAt: number): void {
    const lateMs = Math.round(sentAt - this.lastRenewalSentAt - this.renewIntervalMs);
    if (lateMs > this.renewIntervalMs / 2) {
      this.logger.warn(
        { lateMs, renewIntervalMs: this.renewIntervalMs, trustMs: this.trustMs },
        'a lease renewal ran late: the event loop or the database is slow',
      );
    }
  }

  /**
   * Compares the leases the database names this node for with those it holds: one it holds that
   * is gone (the number was deleted) is lost; one it does not serve (it fenced itself, or a start
   * failed) is given back, or nobody would serve that number while this node kept renewing it.
   */
  private async reconcile(): Promise<void> {
    const rows = await listNodeLeases(this.store.db, this.nodeId);
    const inDatabase = new Map(rows.map((lease) => [lease.numberId, lease.epoch]));
    for (const lease of [...this.held.values()]) {
      if (inDatabase.get(lease.numberId) !== lease.epoch) await this.lost(lease);
    }
    const orphans = rows.filter((lease) => this.held.get(lease.numberId)?.epoch !== lease.epoch && !this.requests.has(lease.numberId));
    if (orphans.length > 0) await this.giveBack(orphans.map((lease) => ({ ...lease, phone: '' })));
  }

  /** Claims numbers nobody holds, up to the fair share; returns how many. */
  private async claim(view: ClusterView): Promise<number> {
    const target =
      this.pinned === undefined ? claimTarget(view, this.settings.maxSessions) - this.requests.outstanding : this.pinned.length;
    if (this.held.size >= target || (view.claimable === 0 && this.pinned === undefined)) return 0;
    // In batches, each its own transaction: a statement's parameters are bounded (SQLite's and
    // PostgreSQL's limits), and a node taking over thousands of numbers starts the first ones early.
    let claimedNow = 0;
    const term = this.term;
    while (this.held.size < target) {
      const claimed = await this.store.db
        .transaction()
        .execute((trx) => claimLeases(trx, this.store.dialect, this.nodeId, Math.min(CLAIM_BATCH, target - this.held.size), this.pinned));
      // The renewal found the term ended meanwhile and gave up whatever named this node: what
      // this claim took may be gone; reconcile gives back what is not.
      if (term !== this.term) break;
      for (const lease of claimed) this.held.set(lease.numberId, lease);
      if (claimed.length > 0) this.host?.leasesGained(claimed);
      claimedNow += claimed.length;
      if (claimed.length < CLAIM_BATCH) break;
    }
    if (claimedNow > 0) this.logger.info({ claimed: claimedNow, held: this.held.size, target }, 'claimed numbers');
    return claimedNow;
  }

  /** Below its share, asks the most loaded nodes for numbers, no more than it can start before its next tick. */
  private async askForNumbers(view: ClusterView): Promise<void> {
    const budget = this.startsPerTick - (this.host?.pendingStarts() ?? 0);
    await this.requests.ask(view, this.held.size, budget, this.settings.maxSessions);
  }

  /** Takes up the numbers handed to this node since its last tick. */
  private async adoptHandedOver(): Promise<void> {
    const term = this.term;
    const gained = await this.requests.handedOver((numberId, epoch) => this.held.get(numberId)?.epoch === epoch);
    if (gained.length === 0 || term !== this.term) return;
    for (const lease of gained) this.held.set(lease.numberId, lease);
    this.host?.leasesGained(gained);
    this.logger.info({ gained: gained.length, held: this.held.size }, 'took over numbers handed to this node');
  }

  /**
   * Hands over the numbers other nodes asked for, as long as this node keeps its floor of the
   * fair share: each is drained and its session stopped cleanly first, then its lease goes to the asker under
   * the next epoch in one transaction, so the number is never without an owner.
   */
  private async handOver(view: ClusterView): Promise<void> {
    const wanted = await listWantedLeases(this.store.db, this.nodeId);
    const floor = fairFloor(view);
    let keeping = this.held.size;
    const given = wanted.filter((lease) => {
      if (this.held.get(lease.numberId)?.epoch !== lease.epoch || keeping - 1 < floor) return false;
      keeping--;
      return true;
    });
    const givenIds = new Set(given.map((lease) => lease.numberId));
    await declineRequests(
      this.store.db,
      this.nodeId,
      wanted.filter((lease) => !givenIds.has(lease.numberId)).map((lease) => lease.numberId),
    );
    if (given.length === 0) return;
    // Renewals go on meanwhile (they do not wait for the tick); the drain still ends before the
    // leases would stop being trusted, should they stop being renewed.
    await this.drain(given, this.drainBoundMs());
    for (const lease of given) {
      this.held.delete(lease.numberId);
      this.leaving.delete(lease.numberId);
    }
    this.relinquish(given);
    await Promise.allSettled(given.map((lease) => this.host?.leaseLost(lease.numberId)));
    // If this fails, the leases still name this node without its serving them: reconcile gives them back.
    await this.store.db.transaction().execute(async (trx) => {
      await handOverLeases(trx, this.store.dialect, given);
      await signalNodes(trx, this.store.dialect, 'leases');
    });
    this.logger.info({ numbers: given.length, held: this.held.size }, 'handed numbers over to nodes that asked for them');
  }

  /**
   * The watchdog. A bound before the last renewal grows older than the trust window, no new work
   * is let in and the database is asked (a renewal, ahead of its queue) whether the leases are
   * still this node's. If it says so in time, nothing is lost: the node was slow, not cut off.
   * Otherwise the work under way ends, the sessions stop and the leases are given back, at the
   * latest a bound after the trust window: all before a lease can end by the database's clock,
   * at the same moments as before the question was asked (ADR 0054).
   */
  private async checkTrust(): Promise<void> {
    if (!this.running || this.held.size === 0 || this.distrusting || !this.doubtful()) return;
    // Timers run before I/O callbacks: after a stall of the event loop, a renewal the database
    // has already answered is still unread. Let it be read before judging.
    await new Promise((resolve) => setImmediate(resolve));
    if (!this.running || this.distrusting || !this.doubtful()) return;
    this.distrusting = true;
    try {
      const leases = [...this.held.values()];
      const trustEndsAt = this.lastRenewalSentAt + this.trustMs;
      const now = performance.now();
      // Asked in time, the database has until the trust window ends. Asked only after (the event
      // loop stalled past it), it has a bound, taken from the drain: what matters then is the
      // answer, since the work under way had the stall to run.
      const answerMs = now < trustEndsAt ? trustEndsAt - now : this.stopBoundMs;
      const stopBy = Math.max(trustEndsAt, now) + this.stopBoundMs;
      for (const lease of leases) this.leaving.add(lease.numberId);
      const answer = await this.confirm(answerMs);
      if (answer !== 'unanswered') {
        // Renewed: the node was slow, not cut off, and keeps everything. Restarted: the renewal
        // found the term ended and has stopped the sessions and given the leases up itself.
        for (const lease of leases) this.leaving.delete(lease.numberId);
        return;
      }
      this.logger.error(
        { numbers: leases.length, trustMs: this.trustMs },
        'leases could not be renewed in time; stopping every session before another node may take them over',
      );
      await this.drain(leases, Math.max(0, Math.floor(stopBy - performance.now())));
      for (const lease of leases) {
        if (this.held.get(lease.numberId)?.epoch === lease.epoch) this.held.delete(lease.numberId);
        this.leaving.delete(lease.numberId);
      }
      await Promise.allSettled(leases.map((lease) => this.host?.leaseLost(lease.numberId)));
      // If the database answers again, the leases go back at once rather than at their TTL.
      await this.giveBack(leases);
    } finally {
      this.distrusting = false;
    }
  }

  /**
   * How long past the trust window the work under way may run on, or the database answer after
   * a stall: half of what is left before a lease can end by the database's clock (ttlMs - trustMs
   * from the last renewal sent), the other half being the sessions' stop's margin.
   */
  private get stopBoundMs(): number {
    return Math.min(this.settings.drainMs, Math.floor((this.settings.ttlMs - this.trustMs) / 2));
  }

  /** Whether the last renewal is old enough for the watchdog to ask the database: a bound before it stops being trusted. */
  private doubtful(): boolean {
    return performance.now() - this.lastRenewalSentAt > this.trustMs - this.stopBoundMs;
  }

  /** Whether the last renewal is recent enough for this node's leases to be trusted. */
  private trusted(): boolean {
    return performance.now() - this.lastRenewalSentAt <= this.trustMs;
  }

  /** What a renewal (the one under way, or a new one) says within `boundMs`. */
  private async confirm(boundMs: number): Promise<'renewed' | 'restarted' | 'unanswered'> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'unanswered'>((resolve) => {
      timer = setTimeout(() => resolve('unanswered'), boundMs);
    });
    try {
      const renewed = this.renewNow().then(
        (held) => (!held ? 'restarted' : this.trusted() ? 'renewed' : 'unanswered'),
        () => 'unanswered' as const,
      );
      return await Promise.race([renewed, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * How long a drain may last: WAGW_HANDOVER_DRAIN_MS, but never past the moment the leases stop
   * being trusted as of now, since a session must not outlive its lease.
   */
  private drainBoundMs(): number {
    const trustedForMs = this.lastRenewalSentAt + this.trustMs - performance.now();
    return Math.max(0, Math.min(this.settings.drainMs, Math.floor(trustedForMs)));
  }

  /**
   * The first step of giving numbers up: no new work is let in for them (leaseOf hides them, so
   * requests wait for, or are forwarded to, the next owner), and the work already under way is
   * waited for, at most `boundMs`, while the session still runs and the lease is still held.
   */
  private async drain(leases: readonly SessionLease[], boundMs: number): Promise<void> {
    if (leases.length === 0) return;
    for (const lease of leases) this.leaving.add(lease.numberId);
    try {
      await this.host?.drain(
        leases.map((lease) => lease.numberId),
        boundMs,
      );
    } catch (error) {
      this.logger.error({ err: error }, 'could not wait for the work under way on numbers being given up');
    }
  }
}
