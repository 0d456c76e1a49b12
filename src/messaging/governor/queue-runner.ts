import type { Logger } from 'pino';
import type { LeaseView, Message, SessionLease, WhatsAppNumber } from '../../domain/model.ts';
import type { Store } from '../../store/database.ts';
import { findMessagesByIds } from '../../store/repositories/messages.ts';
import { settleUnsent } from './unsent-leaving.ts';
import { findNumbersByIds } from '../../store/repositories/numbers.ts';
import { forgetFinishedClears, markClearing } from '../../store/repositories/queue-clears.ts';
import { findSendPoliciesOf } from '../../store/repositories/send-policies.ts';
import { listDueOnNode, listExpiredOnNode, nextDueOnNode, type WaitingMessage } from '../../store/repositories/waiting-messages.ts';
import type { SendMessageService } from '../send-message.ts';
import type { SessionSupervisor } from '../session-supervisor.ts';
import { decide, typingDurationMs } from './decision.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { isGroupId } from '../../domain/groups.ts';
import type { E164 } from '../../domain/phone.ts';
import type { TypingService } from '../typing.ts';
import { NO_LIMITS, type SendGovernor } from './send-governor.ts';
import type { SendHold } from '../../domain/number-pauses.ts';

export interface QueueRunnerOptions {
  /**
   * The longest the timer sleeps without looking (WAGW_SEND_QUEUE_CHECK_MS): what bounds how late
   * a new owner starts a queue after a failover, and a held or disconnected number is asked again.
   */
  idleCheckMs: number;
  /** Due messages read per pass. */
  batchSize: number;
}

/** Counts what leaves the queue, for the metrics. */
export interface QueueObserver {
  released(waitMs: number): void;
}

/** What one pass read for all its numbers. */
interface PassBatch {
  numbers: Map<string, WhatsAppNumber>;
  policies: Map<string, { number: string | null; account: string | null }>;
  /** The due messages' rows, which the engine is handed. */
  messages: Map<string, Message>;
}
const STILL_DUE_REST_MS = 250;
/**
 * The least time between the starts of two passes. A pass's own reads cost a few index probes
 * per number the node holds, whatever is due; with many numbers and a steady trickle of due
 * messages, passes back to back would spend the node on those reads and release one message
 * each. Spaced like this, each pass releases what fell due meanwhile, at most this much later.
 */
const PASS_INTERVAL_MS = 200;
/**
 * How long a clear stays on record once all it took is marked (ADR 0066): far longer than a
 * group commit's batch, so that a send admitted before the clear and written after it is taken.
 */
const CLEAR_KEPT_MS = 60_000;

/**
 * Runs the send queues of the numbers this node owns (ADR 0029): one timer for the node, set to
 * the earliest time anything is due on its numbers (a release or an expiry), never a poll of
 * each number. A message queued here moves the timer earlier; a new owner finds its numbers'
 * due rows on its next look, at most idleCheckMs after it gained them.
 *
 * Numbers are served independently (ADR 0042): a pass hands each due number its own serving and
 * does not wait for it, so one number's typing, slow engine or failing decision is never another
 * number's wait; a number still being served is left out of the passes until it is done.
 */
export class QueueRunner {
  private timer: NodeJS.Timeout | undefined;
  private wakeAt: number | null = null;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private lastPassAt = 0;
  /** The numbers being served now, each with its serving. */
  private readonly serving = new Map<string, Promise<void>>();
  /** Cuts short the typing shown before a message when the runner stops. */
  private stopping = new AbortController();

  constructor(
    private readonly store: Store,
    private readonly leases: LeaseView,
    private readonly supervisor: Pick<SessionSupervisor, 'sessionStatus'>,
    private readonly governor: SendGovernor,
    private readonly sender: Pick<SendMessageService, 'sendReleased' | 'settleWaitingMany'>,
    private readonly hold: SendHold,
    private readonly typist: Pick<TypingService, 'show'>,
    private readonly observer: QueueObserver,
    private readonly logger: Logger,
    private readonly options: QueueRunnerOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.stopping = new AbortController();
    this.governor.queuedListener = (at) => this.wakeBy(at);
    void this.runOnce();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    clearTimeout(this.timer);
    this.wakeAt = null;
    await this.running;
    await Promise.all(this.serving.values());
  }

  /** Something is due at `at`: wake by then. */
  wakeBy(at: Date): void {
    if (this.stopped) return;
    if (this.wakeAt === null || at.getTime() < this.wakeAt) this.sleepUntil(at.getTime());
  }

  /** One pass now (or right after the one under way): expiries, then due releases. */
  runOnce(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = this.pass()
      .catch((error: unknown) => this.logger.error({ err: error }, 'the send queue pass failed'))
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          // Through the event loop: on SQLite every read of a pass can settle without it, and
          // passes chained as promises alone would starve every socket and timer of the process.
          setImmediate(() => void this.runOnce());
        }
      });
    return this.running;
  }

  private sleepUntil(at: number): void {
    clearTimeout(this.timer);
    const delayMs = Math.min(Math.max(0, at - Date.now(), this.lastPassAt + PASS_INTERVAL_MS - Date.now()), this.options.idleCheckMs);
    this.wakeAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.wakeAt = null;
      void this.runOnce();
    }, delayMs);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    const now = new Date();
    this.lastPassAt = now.getTime();
    this.governor.forgetUnheld();
    const moreExpired = await this.expire(now);
    const due = await listDueOnNode(this.store.db, this.leases.nodeId, now, this.options.batchSize, [...this.serving.keys()]);
    const byNumber = new Map<string, WaitingMessage[]>();
    for (const message of due) byNumber.set(message.numberId, [...(byNumber.get(message.numberId) ?? []), message]);
    const held = [...byNumber.keys()].filter((numberId) => this.leases.leaseOf(numberId) !== undefined);
    const batch = await this.readBatch(
      held,
      held.flatMap((numberId) => byNumber.get(numberId)!.map((message) => message.id)),
    );
    for (const [numberId, messages] of byNumber) this.serve(numberId, messages, batch);
    if (this.stopped) return;
    if (due.length === this.options.batchSize || moreExpired) {
      this.again = true;
      return;
    }
    const next = await nextDueOnNode(this.store.db, this.leases.nodeId);
    // Still due after the pass: queued while it ran, or of a number whose lease is changing
    // hands. A short rest keeps the latter from spinning and costs the former little.
    this.sleepUntil(next === null ? Date.now() + this.options.idleCheckMs : Math.max(next.getTime(), Date.now() + STILL_DUE_REST_MS));
  }

  /**
   * Serves one number's due messages without holding the pass. Whatever goes wrong holds that
   * number only: its due messages wait idleCheckMs, so a failing decision (a stored policy that
   * no longer reads, a rule that cannot settle) is neither retried at once nor another number's
   * wait. When it is done, the next pass looks at the number again.
   */
  private serve(numberId: string, messages: WaitingMessage[], batch: PassBatch): void {
    const serving = this.releaseNumber(numberId, messages, batch)
      .catch(async (error: unknown) => {
        this.logger.error({ err: error, numberId }, 'could not release the due messages of a number; they wait for the next look');
        await this.governor.defer(numberId, new Date(Date.now() + this.options.idleCheckMs), null);
      })
      .catch((error: unknown) => this.logger.error({ err: error, numberId }, 'could not hold back the due messages of a number'))
      .finally(() => {
        this.serving.delete(numberId);
        if (!this.stopped) this.wakeBy(new Date());
      });
    this.serving.set(numberId, serving);
  }

  /**
   * What the pass's releases decide over, read for all its numbers at once rather than per
   * message: the numbers, their policies and the due messages' rows. What the numbers sent is
   * in the governor's ledgers, not read here.
   */
  private async readBatch(numberIds: string[], messageIds: string[]): Promise<PassBatch> {
    const numbers = new Map((await findNumbersByIds(this.store.db, numberIds)).map((number) => [number.id, number]));
    const policies = await findSendPoliciesOf(this.store.db, numberIds);
    const messages = new Map((await findMessagesByIds(this.store.db, messageIds)).map((message) => [message.id, message]));
    return { numbers, policies, messages };
  }

  /**
   * Marks a batch of what clears took on the node's numbers (ADR 0066), then settles what is
   * past its expiry and what a clear marked; true when there may be more.
   */
  private async expire(now: Date): Promise<boolean> {
    const marked = await markClearing(this.store.db, { nodeId: this.leases.nodeId }, now, this.options.batchSize);
    if (marked < this.options.batchSize)
      await forgetFinishedClears(this.store.db, this.leases.nodeId, new Date(now.getTime() - CLEAR_KEPT_MS));
    const expired = await listExpiredOnNode(this.store.db, this.leases.nodeId, now, this.options.batchSize);
    await settleUnsent(
      { store: this.store, sender: this.sender, governor: this.governor, leaseOf: (id) => this.leases.leaseOf(id) },
      expired,
    );
    return expired.length === this.options.batchSize || marked === this.options.batchSize;
  }

  /** The number's due messages in order, each decided again over the sends actually made. */
  private async releaseNumber(numberId: string, messages: WaitingMessage[], batch: PassBatch): Promise<void> {
    const lease = this.leases.leaseOf(numberId);
    const number = batch.numbers.get(numberId);
    if (lease === undefined || number === undefined) return;
    const held = this.hold.holdOf(numberId);
    if (held !== null) {
      await this.governor.defer(numberId, held.until ?? new Date(Date.now() + this.options.idleCheckMs), 'paused');
      return;
    }
    if (this.supervisor.sessionStatus(number) !== 'connected') {
      await this.governor.defer(numberId, new Date(Date.now() + this.options.idleCheckMs), 'not_connected');
      return;
    }
    const stored = batch.policies.get(numberId);
    const policy = (stored === undefined ? null : this.governor.resolve(stored).policy) ?? NO_LIMITS;
    await this.governor.withNumberLock(numberId, async () => {
      // Under the lock, so the sends let go at once since the pass began are in it.
      const ledger = await this.governor.ledgerFor(numberId);
      for (const waiting of messages) {
        if (this.stopped || this.leases.leaseOf(numberId)?.epoch !== lease.epoch) return;
        const now = new Date();
        // The jitter was spent when the time was planned; here only the policy's floor is checked.
        const decision = decide(
          policy,
          { marks: ledger.madeOnly, linkedAt: number.createdAt, newChatCap: this.governor.newChatCaps.capOf(numberId, now) },
          { recipient: waiting.toPhone, firstContact: waiting.firstContact, notBefore: null },
          now,
          () => 0,
        );
        if (decision.kind === 'wait') {
          await this.governor.defer(numberId, decision.until, decision.reason);
          return;
        }
        if (policy.typingBeforeSend) await this.showTyping(number, waiting);
        if (this.stopped) return;
        // Marked no earlier than the row's released_at, so the next decision's gap is never short.
        const message = batch.messages.get(waiting.id);
        if (message !== undefined && (await this.release(number, waiting, message, lease)))
          this.governor.released(numberId, waiting.id, { at: Date.now(), recipient: waiting.toPhone, firstContact: waiting.firstContact });
      }
    });
  }

  /** "typing…" to a direct chat for a time that grows with the text; a group is not shown typing. */
  private async showTyping(number: WhatsAppNumber, waiting: WaitingMessage): Promise<void> {
    if (isGroupId(waiting.toPhone)) return;
    try {
      await this.typist.show(number, waiting.toPhone as E164, 'composing');
      await sleep(typingDurationMs(waiting.textLength), undefined, { signal: this.stopping.signal });
    } catch (error) {
      this.logger.debug({ err: error, messageId: waiting.id }, 'could not show typing before a queued message; sending it anyway');
    }
  }

  /** Whether the message was released (its row counts among the number's sends), sent or not. */
  private async release(number: WhatsAppNumber, waiting: WaitingMessage, message: Message, lease: SessionLease): Promise<boolean> {
    try {
      const left = await this.sender.sendReleased(number, waiting, message, lease);
      if (left === undefined) return false;
      this.observer.released(Date.now() - waiting.createdAt.getTime());
      this.governor.messageLeft(waiting.numberId, waiting.id, left.status === 'sent' || left.status === 'unknown' ? left.status : 'failed');
      return true;
    } catch (error) {
      // The engine refused it: the message is failed (its unit returned) by the send path itself.
      this.logger.warn({ err: error, messageId: waiting.id }, 'a queued message could not be sent');
      this.governor.messageLeft(waiting.numberId, waiting.id, 'failed');
      return true;
    }
  }
}
