import { declineUncarried } from '../engines/capability-declined.ts';
import type { StaleWrites } from './stale-writes.ts';
import type { Logger } from 'pino';
import type { EngineKind, SessionLease, SessionStatus, WhatsAppNumber } from '../domain/model.ts';
import { AppError } from '../domain/errors.ts';
import type {
  Engine,
  EngineSendFailure,
  EngineSession,
  LinkSession,
  OutgoingMessage,
  SentMessage,
  SessionLinker,
} from '../engines/engine.ts';
import { callOnNumber, forwardingObject } from '../engines/session-binding.ts';
import type { SessionStatusEvent } from '../engines/engine-events.ts';
import type { InboundSimulator } from '../engines/inbound-simulator.ts';
import { EngineSendError } from '../engines/engine.ts';
import type { EngineRegistry } from '../engines/registry.ts';
import type { Executor, Store } from '../store/database.ts';
import { refusedBySession } from './session-refusals.ts';
import { WorkInFlight } from './work-in-flight.ts';
import { sessionStatusPayload } from '../domain/event-payloads.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { assertLeaseHeld, findLeaseOwner, StaleLeaseError, type ClaimedLease } from '../store/repositories/leases.ts';
import { findNumberByPhone, findNumbersByIds, updateNumberStatus } from '../store/repositories/numbers.ts';
import { enqueueEvent, type DeliveryNotifier } from '../webhooks/outbox.ts';
import type { SessionHost, SessionLeases } from './session-leases.ts';

const RESTARTABLE: ReadonlySet<SessionStatus> = new Set(['failed', 'conflict', 'disconnected']);
/** Statuses only a new link ends: the phone let the device go, or nobody scanned in time. */
const NEEDS_LINKING: ReadonlySet<SessionStatus> = new Set(['logged_out', 'link_expired']);

export type SendFailureReason = EngineSendFailure | 'engine_error';

/** Hears how each send the supervisor routed went, per engine, and refused stale writes (the metrics listen here). */
export interface SendObserver {
  messageSent(engine: EngineKind): void;
  messageSendFailed(engine: EngineKind, reason: SendFailureReason): void;
  staleWriteRefused(): void;
}

/** Hears when this node starts and stops serving a number, to load and drop what it keeps of it (its pause). */
export interface ServedNumberObserver {
  sessionStarted(number: WhatsAppNumber, lease: SessionLease): Promise<void>;
  sessionStopped(numberId: string): void;
}

/**
 * Why no node serves a number now: this node is handing it over (it drains the work under way,
 * then releases the lease for another to claim), this node is stopping and has let it go, or
 * nobody holds a live lease (its node died, or it was just added).
 */
export type NoOwnerReason = 'handing_over' | 'stopping' | 'unowned';

/** Where a number's session runs, as far as this node can tell. */
export type SessionPlace =
  | { kind: 'here'; lease: SessionLease }
  | { kind: 'elsewhere'; nodeId: string; url: string | null }
  /** Nobody holds a live lease; `retryAfterMs` is when a takeover is due at the latest. */
  | { kind: 'nowhere'; retryAfterMs: number; reason: NoOwnerReason };

/** What a client is asked to wait while this node hands a number over: a drain, a release and a claim. */
const HANDOVER_RETRY_AFTER_MS = 1_000;

/**
 * How long a request for a number whose session is being started waits for that start, rather
 * than being refused in the moment between gaining the number and its session connecting.
 */
const SESSION_START_WAIT_MS = 5_000;

/**
 * The one place that knows which node and which engine serve a number. This node runs a
 * session only under a lease its LeaseKeeper holds, starts sessions as leases are gained
 * (staggered where an engine logs in to a real network) and stops them as leases are lost or
 * handed over. Owner-only writes (session status here, receipts and the `sent` transition
 * elsewhere) carry the lease.
 */
export class SessionSupervisor implements SessionHost {
  private starts: Promise<void> = Promise.resolve();
  private readonly running = new Map<string, { number: WhatsAppNumber; lease: SessionLease }>();
  /** Number id → the start of its session, from the lease's gain until the start has ended (see untilStarted). */
  private readonly starting = new Map<string, Promise<void>>();
  /** The requests and queue releases let in on each number, which a node giving it up waits for. */
  private readonly work = new WorkInFlight();
  constructor(
    private readonly store: Store,
    private readonly engines: EngineRegistry,
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
    private readonly logger: Logger,
    private readonly keeper: SessionLeases,
    private readonly staleWrites: StaleWrites,
    /** Told as this node starts and stops serving numbers (the pauses load theirs then). */
    private readonly servedNumberObservers: readonly ServedNumberObserver[],
    /** WAGW_SESSION_STARTS_PER_SECOND: the pace of starts of engines that log in to a real network (Baileys). */
    private readonly sessionStartsPerSecond: number,
    private readonly sendObserver?: SendObserver,
  ) {
    keeper.attach(this);
  }

  get nodeId(): string {
    return this.keeper.nodeId;
  }

  leasesGained(leases: ClaimedLease[]): void {
    // The numbers are this node's from now on, but their sessions start one after another: a
    // request for one meanwhile waits for its start (untilStarted) instead of finding it down.
    const ended = new Map<string, () => void>();
    for (const lease of leases) {
      const start = new Promise<void>((resolve) => ended.set(lease.numberId, resolve));
      this.starting.set(lease.numberId, start);
      void start.then(() => {
        if (this.starting.get(lease.numberId) === start) this.starting.delete(lease.numberId);
      });
    }
    const endStart = (numberId: string) => ended.get(numberId)?.();
    const starts = this.starts.then(async () => {
      const numbers = await findNumbersByIds(
        this.store.db,
        leases.map((lease) => lease.numberId),
      ).catch((error: unknown) => {
        this.logger.error({ err: error }, 'could not read the numbers whose leases this node gained');
        return [];
      });
      const byId = new Map(numbers.map((number) => [number.id, number]));
      for (const lease of leases) {
        const number = byId.get(lease.numberId);
        if (number !== undefined) await this.startUnderLease(number, lease);
        endStart(lease.numberId);
      }
    });
    // A start that failed or never came ends the wait all the same.
    this.starts = starts.finally(() => {
      for (const lease of leases) endStart(lease.numberId);
    });
  }

  /**
   * Resolves once the start of the number's session under way here has ended, or after
   * SESSION_START_WAIT_MS; at once when none is under way. A send or a simulated message that
   * arrives as the node takes the number on is answered by the session it was about to get.
   */
  async untilStarted(number: WhatsAppNumber): Promise<void> {
    const start = this.starting.get(number.id);
    if (start === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SESSION_START_WAIT_MS);
    });
    await Promise.race([start, waited]);
    clearTimeout(timer);
  }

  /** Sessions gained and not yet started (the lease keeper asks for no more numbers while there are many). */
  pendingStarts(): number {
    return this.starting.size;
  }

  /** Resolves once every session start asked for so far has been made. */
  async sessionsStarted(): Promise<void> {
    await this.starts;
  }

  /**
   * Lets one request or queue release run on the number here, if this node serves it and is not
   * giving it up: returns what ends it, which the caller must call. Undefined when the number is
   * not (or no longer) this node's to serve: the caller routes the work again.
   */
  admit(numberId: string): (() => void) | undefined {
    if (this.keeper.leaseOf(numberId) === undefined) return undefined;
    return this.work.enter(numberId);
  }

  /**
   * The lease keeper gives the numbers up: it lets no new work in for them, and this waits for
   * the work already let in (sends with the engine among it) to end, at most `boundMs`, while
   * their sessions still run and their leases are still held, so that a send the engine took is
   * recorded under its lease and answered 200.
   */
  async drain(numberIds: readonly string[], boundMs: number): Promise<void> {
    const ended = await Promise.all(numberIds.map((numberId) => this.work.ended(numberId, boundMs)));
    const cut = numberIds.filter((_, index) => !ended[index]);
    if (cut.length > 0)
      this.logger.warn(
        { numbers: cut.length, drainMs: boundMs },
        'work on numbers being given up was still under way when the drain ended; their sessions stop now',
      );
  }

  async leaseLost(numberId: string): Promise<void> {
    const running = this.running.get(numberId);
    if (running === undefined) return;
    this.running.delete(numberId);
    for (const observer of this.servedNumberObservers) observer.sessionStopped(numberId);
    await this.engineFor(running.number)
      ?.stop(running.number)
      .catch((error: unknown) => this.logger.error({ err: error, phone: running.number.phone }, 'could not stop the session of a number'));
  }

  /**
   * Starts the number's session again under this node's lease, as after it was linked by a
   * command that has since given the number back: the engine picks up what is stored now.
   */
  async resume(number: WhatsAppNumber): Promise<void> {
    const lease = this.requireLease(number);
    await this.serve(number, lease);
    await this.engineFor(number)?.start(number, lease);
  }

  /**
   * A number was added or found without an owner: claim now, if this node takes numbers and has
   * room in its share, and wait until the sessions of what it claimed run.
   */
  async numberAdded(): Promise<void> {
    await this.keeper.tickSoon();
    await this.sessionsStarted();
  }

  private async startUnderLease(number: WhatsAppNumber, lease: ClaimedLease): Promise<void> {
    if (this.keeper.leaseOf(lease.numberId)?.epoch !== lease.epoch) return;
    const engine = this.engineFor(number);
    if (engine === undefined) return;
    try {
      await this.serve(number, lease);
      await engine.start(number, lease);
      // Lost while starting: the stop that came meanwhile found nothing yet to stop.
      if (this.keeper.leaseOf(number.id)?.epoch !== lease.epoch) await engine.stop(number);
    } catch (error) {
      this.logger.error({ err: error, phone: number.phone }, 'could not start the session of a number; giving its lease back');
      // Held without a session, the number would be served by nobody; given back, any node may try.
      await this.keeper.giveBack([lease]);
    }
    // Starts are one after another, so this bounds them per second: a takeover or a cold start of many numbers is no burst of logins.
    if (engine.capabilities.staggeredStart) await new Promise((resolve) => setTimeout(resolve, 1000 / this.sessionStartsPerSecond));
  }

  /** Tracks the number as served here, with what the observer keeps of it loaded before its session runs. */
  private async serve(number: WhatsAppNumber, lease: SessionLease): Promise<void> {
    this.track(number, lease);
    for (const observer of this.servedNumberObservers) await observer.sessionStarted(number, lease);
  }

  private track(number: WhatsAppNumber, lease: SessionLease): void {
    this.running.set(number.id, { number, lease });
  }

  /** Where the number's session runs: here, on another live node, or (for now) nowhere. */
  async placeOf(number: WhatsAppNumber): Promise<SessionPlace> {
    const lease = this.keeper.leaseOf(number.id);
    if (lease !== undefined) return { kind: 'here', lease };
    if (this.keeper.givingUp(number.id)) return { kind: 'nowhere', retryAfterMs: HANDOVER_RETRY_AFTER_MS, reason: 'handing_over' };
    const owner = await findLeaseOwner(this.store.db, this.store.dialect, number.id);
    if (owner?.nodeId != null && owner.nodeId !== this.keeper.nodeId && owner.remainingMs > 0) {
      return { kind: 'elsewhere', nodeId: owner.nodeId, url: owner.url };
    }
    const reason: NoOwnerReason = this.keeper.stopping ? 'stopping' : 'unowned';
    // Still this node's in the database: its release is a moment away, not the lease's end.
    if (owner?.nodeId === this.keeper.nodeId) return { kind: 'nowhere', retryAfterMs: HANDOVER_RETRY_AFTER_MS, reason };
    return { kind: 'nowhere', retryAfterMs: Math.max(0, owner?.remainingMs ?? 0) + this.keeper.renewIntervalMs, reason };
  }

  /**
   * Ends the number's session and starts it again, on every engine: how an operator retries a
   * number that gave up (`failed`), was replaced by another device (`conflict`) or is waiting out
   * a backoff (`disconnected`). Other statuses need linking (`logged_out`, `link_expired`) or nothing.
   * Only the owner can do it; other nodes forward the request (cluster/internal-client.ts).
   */
  async restart(number: WhatsAppNumber): Promise<void> {
    const engine = this.engineFor(number);
    if (engine === undefined) {
      throw new AppError('invalid_argument', `${number.phone} runs on the ${number.engine} engine, which does not run in this gateway.`);
    }
    // The stored status, or the live one: a sandbox number whose stored status is the operator's may be in conflict all the same.
    // A stored status that needs linking wins: an engine without a session for the number calls it
    // disconnected (Baileys after a logout), and restarting that would start nothing and answer 200.
    const restartable = RESTARTABLE.has(number.status) || RESTARTABLE.has(engine.sessionStatus(number));
    if (NEEDS_LINKING.has(number.status) || !restartable) {
      throw new AppError(
        'invalid_argument',
        `${number.phone} is ${number.status.replace(/_/g, ' ')}; only a failed, conflicting or disconnected session is restarted. Link ` +
          `it instead.`,
      );
    }
    const lease = this.requireLease(number);
    await engine.stop(number);
    await this.serve(number, lease);
    await engine.start(number, lease);
  }

  /**
   * After the number's proxy changed (ADR 0063): a session that is up, or failed or waiting to
   * retry, connects again now, through the new proxy. Any other (linking, logged out) reads it
   * when it next connects, so it is left alone. Says whether it reconnected.
   */
  async reconnect(number: WhatsAppNumber): Promise<boolean> {
    const engine = this.engineFor(number);
    const status = engine?.sessionStatus(number);
    if (engine === undefined || status === undefined || !this.links(number) || (status !== 'connected' && !RESTARTABLE.has(status)))
      return false;
    const lease = this.requireLease(number);
    await engine.stop(number);
    await this.serve(number, lease);
    await engine.start(number, lease);
    return true;
  }

  /** Whether `restart` would act on the number as it stands. */
  restartable(number: WhatsAppNumber): boolean {
    return this.links(number) && RESTARTABLE.has(number.status);
  }

  /** Declines a message whose content the number's engine cannot carry (422 capability_not_supported naming the engine). */
  declineUncarried(number: WhatsAppNumber, structured: object | undefined): void {
    const engine = this.engineFor(number);
    if (engine !== undefined) declineUncarried(engine.kind, engine.capabilities.uncarried, structured);
  }

  /** Whether the number is linked to a phone (QR or pairing code) before it connects. */
  links(number: WhatsAppNumber): boolean {
    return this.engineFor(number)?.capabilities.linking === true;
  }

  /** Stops every session this node runs; the lease keeper's stop does this before releasing. */
  async stopAll(): Promise<void> {
    await Promise.allSettled([...this.running.keys()].map((numberId) => this.leaseLost(numberId)));
  }

  sessionStatus(number: WhatsAppNumber): SessionStatus {
    return this.engineFor(number)?.sessionStatus(number) ?? 'disconnected';
  }

  sendMessage(number: WhatsAppNumber, request: OutgoingMessage): Promise<SentMessage> {
    const engine = this.engineFor(number);
    if (engine === undefined) {
      this.sendObserver?.messageSendFailed(number.engine, 'not_connected');
      return Promise.reject(new EngineSendError('not_connected', `No ${number.engine} engine runs in this gateway.`, 'disconnected'));
    }
    return engine.sendMessage(number, request).then(
      (sent) => {
        this.sendObserver?.messageSent(number.engine);
        return sent;
      },
      (error: unknown) => {
        this.sendObserver?.messageSendFailed(number.engine, error instanceof EngineSendError ? error.failure : 'engine_error');
        throw error;
      },
    );
  }

  /** The numbers whose sessions run on this node now, under a lease it holds. */
  servedNumbers(): WhatsAppNumber[] {
    return [...this.running.values()].filter((entry) => this.keeper.leaseOf(entry.number.id) !== undefined).map((entry) => entry.number);
  }

  /** Fetches an incoming file again, through the engine of the number's session here. */
  downloadAgain(number: WhatsAppNumber, retryToken: string): Promise<AsyncIterable<Buffer>> {
    return this.onEngine(number, (engine) => engine.downloadAgain(number, retryToken));
  }

  /**
   * The number's session here, as API requests act through it: every capability of the port
   * (engine.ts's EngineSession), run on the number's engine once its session has started, its
   * refusals (down, rate-limited) answered as the API answers them.
   */
  sessionFor(number: WhatsAppNumber): EngineSession {
    return forwardingObject<EngineSession>((name, args) =>
      this.throughSession(number, async (engine) => callOnNumber(engine, name, number, args)),
    );
  }

  /**
   * Runs an API request's act on the number's session, with the session's refusals (down,
   * rate-limited) answered as the API answers them; any other engine error passes unchanged.
   */
  private async throughSession<T>(number: WhatsAppNumber, use: (engine: Engine) => Promise<T>): Promise<T> {
    await this.untilStarted(number);
    return this.onEngine(number, use).catch((error: unknown) => refusedBySession(number, error));
  }

  /** Runs `use` on the number's engine; a gateway that runs no such engine refuses as WhatsApp does a session that is down. */
  private onEngine<T>(number: WhatsAppNumber, use: (engine: Engine) => Promise<T>): Promise<T> {
    const engine = this.engineFor(number);
    if (engine === undefined)
      return Promise.reject(new EngineSendError('not_connected', `No ${number.engine} engine runs in this gateway.`, 'disconnected'));
    return use(engine);
  }

  /**
   * Starts linking a number to a phone, on the node that owns it, on engines that link. The
   * sandbox, whose numbers connect without linking, links only as a rehearsal (`rehearsal`, the
   * operator API's; sandbox-linker.ts): the console and the CLI keep telling it has nothing to link.
   */
  async link(number: WhatsAppNumber, rehearsal = false): Promise<LinkSession> {
    const linker = this.linkerFor(number, rehearsal);
    const lease = this.requireLease(number);
    await this.serve(number, lease);
    return linker.link(number, lease);
  }

  /** Logs the number's phone out, on the node that owns it: its session ends as logged_out. */
  async logout(number: WhatsAppNumber): Promise<void> {
    await this.linkerFor(number, true).logout(number, this.requireLease(number));
  }

  private linkerFor(number: WhatsAppNumber, rehearsal: boolean): SessionLinker {
    const engine = this.engineFor(number);
    if (engine?.linker === undefined || (!engine.capabilities.linking && !rehearsal)) {
      throw new AppError('invalid_argument', `${number.phone} runs on the ${number.engine} engine, which connects without linking.`);
    }
    return engine.linker;
  }

  simulatorFor(number: WhatsAppNumber): InboundSimulator | undefined {
    const engine = this.engineFor(number);
    return engine?.capabilities.simulatedInbound ? engine.simulator : undefined;
  }

  initialStatusFor(engineKind: WhatsAppNumber['engine']): SessionStatus | undefined {
    return this.engines.get(engineKind)?.initialStatus;
  }

  allowsSimulatedStatus(number: WhatsAppNumber): boolean {
    return this.engineFor(number)?.capabilities.simulatedSessionStatus ?? false;
  }

  /**
   * Records a session's new status, so that every node sees it, and tells the account's
   * `session.status` subscribers in the same commit. The write carries the session's lease: a
   * session this node no longer owns is refused, and stopped.
   */
  async recordSessionStatus(event: SessionStatusEvent): Promise<void> {
    try {
      await this.writeStatus(event.phone, event.status, event.reason, event.lease);
    } catch (error) {
      if (!(error instanceof StaleLeaseError)) throw error;
      this.staleWriteRefused(error);
    }
  }

  /**
   * A status the operator sets by hand, to rehearse an outage: any node may write it. `alongside`
   * (the audit row) commits with the change, and only if there is one; true when the status changed.
   */
  async recordSimulatedStatus(
    number: WhatsAppNumber,
    status: SessionStatus,
    alongside: (trx: Executor) => Promise<unknown>,
  ): Promise<boolean> {
    return this.writeStatus(number.phone, status, 'set by the operator', undefined, alongside);
  }

  /** An owner-only write the database refused under a stale lease (see StaleWrites). */
  staleWriteRefused(error: StaleLeaseError): void {
    this.staleWrites.refused(error);
  }

  private async writeStatus(
    phone: WhatsAppNumber['phone'],
    status: SessionStatus,
    reason: string | null,
    lease: SessionLease | undefined,
    alongside?: (trx: Executor) => Promise<unknown>,
  ): Promise<boolean> {
    const number = await findNumberByPhone(this.store.db, phone);
    if (number === undefined || number.status === status) return false;
    const at = new Date();
    const queued = await this.committer.run(async (trx) => {
      if (lease !== undefined) await assertLeaseHeld(trx, this.store.dialect, lease);
      await updateNumberStatus(trx, number.id, status, reason, at);
      await alongside?.(trx);
      return enqueueEvent(trx, this.notifier, number.accountId, sessionStatusPayload(number.phone, status, reason, at), at);
    });
    this.notifier.deliveriesQueued(queued);
    // The send path reads numbers through the lookup cache: a status it holds must not outlive the change.
    await this.store.lookups.numbersChanged();
    return true;
  }

  private requireLease(number: WhatsAppNumber): SessionLease {
    const lease = this.keeper.leaseOf(number.id);
    if (lease === undefined) {
      throw new AppError('number_not_connected', `${number.phone} is not served by this node; ask the node that owns it.`, {
        from_phone: number.phone,
        status: 'elsewhere',
      });
    }
    return lease;
  }

  private engineFor(number: WhatsAppNumber): Engine | undefined {
    return this.engines.get(number.engine);
  }
}
