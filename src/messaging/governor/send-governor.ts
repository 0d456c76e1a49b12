import { KeyedQueue } from '../../domain/keyed-queue.ts';
import type { GovernorConfig } from '../../config.ts';
import { AppError } from '../../domain/errors.ts';
import type { Message, WhatsAppNumber } from '../../domain/model.ts';
import { dueUnderPause } from '../../domain/number-pauses.ts';
import { parsePolicyBody, readStoredSetting, resolvePolicy, type PolicySetting, type SendPolicy } from '../../domain/send-policy.ts';
import type { Store } from '../../store/database.ts';
import type { GroupCommitter } from '../../store/group-commit.ts';
import { findMessageById } from '../../store/repositories/messages.ts';
import { readLedgerMarks } from '../../store/repositories/send-ledger.ts';
import { bringForwardWaiting, deferWaiting, type QueuedOptions } from '../../store/repositories/send-queue.ts';
import { decide, type WaitReason } from './decision.ts';
import { ExchangeProbe } from './exchange-probe.ts';
import type { LeaseView } from '../../domain/model.ts';
import { SendLedger, type MadeMark, type PlannedMark } from './send-ledger.ts';
import { queueMessageWithUnit } from '../../store/repositories/send-units.ts';
import type { NewChatCap } from '../../domain/new-chat-quota.ts';

const DAY_MS = 86_400_000;
/** With the governor off, a send_at still waits for its time: the policy of no limits. */
export const NO_LIMITS: SendPolicy = parsePolicyBody({}, 'send_policy');

/** When the caller wants the message to leave, and until when it may wait. */
export interface SendSchedule {
  sendAt?: Date;
  expiresAt?: Date;
}

/** How a message left the queue. */
export type LeftAs = 'sent' | 'failed' | 'unknown' | 'cancelled' | 'expired';

/** Where a governed send stands once it is stored. */
export type Admission =
  | { kind: 'refused' }
  | { kind: 'now' }
  /** scheduledFor: when it is expected to leave; null while it waits for a pause that lasts until someone resumes the number. */
  | { kind: 'queued'; scheduledFor: Date | null; expiresAt: Date; waitReason: WaitReason };

/** What the governor asks of WhatsApp's cap on a number's new chats (messaging/new-chat-caps.ts, ADR 0058). */
export interface NewChatCapView {
  capOf(numberId: string, at: Date): NewChatCap | undefined;
  cappedNow(numberId: string): boolean;
}

const NO_NEW_CHAT_CAPS: NewChatCapView = { capOf: () => undefined, cappedNow: () => false };

/** The stored policy settings of a number and its account (null inherits). */
export interface StoredSettings {
  number: string | null;
  account: string | null;
}

/**
 * The per-number send governor (docs/send-governor.md, ADR 0029). It runs on the node that owns
 * the number (sends are owner-dispatched), which serialises each number's decisions here: two
 * sends decided at once would both see the other's gap as free.
 */
export class SendGovernor {
  private readonly locks = new KeyedQueue();
  private readonly leaveWaiters = new Map<string, ((left: LeftAs | undefined) => void)[]>();
  /** Per number this node owns, what its rules count, and the lease epoch it was read under (ADR 0048). */
  private readonly ledgers = new Map<string, { epoch: number; ledger: SendLedger }>();
  /** Changes to a number's queue made while its ledger is read from the database: applied to it once read. */
  private readonly reading = new Map<string, ((ledger: SendLedger) => void)[]>();
  /** Called with the time of each message queued here, so the runner's timer can wake for it. */
  queuedListener: (scheduledFor: Date) => void = () => undefined;
  /** WhatsApp's cap on each number's new chats, where its sessions read it: a first contact meets it as it meets the policy's. */
  newChatCaps: NewChatCapView = NO_NEW_CHAT_CAPS;
  private readonly exchanges: ExchangeProbe;

  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    readonly config: GovernorConfig,
    private readonly leases: Pick<LeaseView, 'leaseOf'>,
    private readonly random: () => number = Math.random,
  ) {
    this.exchanges = new ExchangeProbe(store.db);
  }

  /** The setting in force and its policy: the number's, else its account's, else the gateway's. */
  resolve(stored: StoredSettings): { setting: PolicySetting; policy: SendPolicy | null } {
    return resolvePolicy(readStoredSetting(stored.number), readStoredSetting(stored.account), { preset: this.config.defaultPreset });
  }

  /**
   * The policy a send obeys, or null when it goes the ungoverned way of today (off, no send_at).
   * A direct send (`toNumberId` set) from a number WhatsApp capped is governed too, with no
   * limits of the policy's own, so that a first contact waits out the cap in the queue rather
   * than meeting another 475, while a reply still goes at once (ADR 0058).
   */
  policyForSend(stored: StoredSettings, schedule: SendSchedule | undefined, directFrom?: string): SendPolicy | null {
    const { policy } =
      stored.number === null && stored.account === null && this.config.defaultPreset === 'off' ? { policy: null } : this.resolve(stored);
    if (policy !== null) return policy;
    if (directFrom !== undefined && this.newChatCaps.cappedNow(directFrom)) return NO_LIMITS;
    return schedule?.sendAt !== undefined ? NO_LIMITS : null;
  }

  /** Refuses a send_at past the horizon and an expires_at that cannot be kept. */
  checkSchedule(schedule: SendSchedule, now: Date): void {
    if (schedule.sendAt !== undefined && schedule.sendAt.getTime() > now.getTime() + this.config.sendAtHorizonMs) {
      const days = this.config.sendAtHorizonMs / DAY_MS;
      throw new AppError('invalid_schedule', `send_at may be at most ${days} days ahead (WAGW_SEND_AT_HORIZON_DAYS).`, {
        field: 'send_at',
        horizon_days: days,
      });
    }
    const earliest = Math.max(now.getTime(), schedule.sendAt?.getTime() ?? 0);
    if (schedule.expiresAt !== undefined && schedule.expiresAt.getTime() <= earliest) {
      throw new AppError('invalid_schedule', 'expires_at must be after now and after send_at.', { field: 'expires_at' });
    }
  }

  /**
   * Decides when the message may leave and stores it with its unit: at once (the caller hands it
   * to the engine as today), or waiting in the number's queue. The decision is made under the
   * number's lock and counted in its ledger at once, so that the next send of the number sees
   * this one; the row is then written with the group-commit batch, outside the lock, so that a
   * number's concurrent sends share a commit as ungoverned ones do (ADR 0048). A decision whose
   * row is not stored (no unit left, a failed write) is taken back out of the ledger. A number
   * that is held (paused) never sends at once: the message waits, with reason `paused`, at
   * least until the hold's lift time, and the runner keeps it until the hold is gone.
   */
  async admit(
    number: WhatsAppNumber,
    message: Message,
    policy: SendPolicy,
    unit: { period: string; limit: number | null },
    schedule: SendSchedule | undefined,
    options: QueuedOptions | null,
    beforeInsert: (trx: Parameters<Parameters<GroupCommitter['run']>[0]>[0]) => Promise<void>,
    held: { until: Date | null } | null = null,
  ): Promise<Admission> {
    const recipient = message.group == null ? message.toPhone : message.group.id;
    const countsFirstContacts =
      message.group == null && (needsFirstContacts(policy) || this.newChatCaps.capOf(number.id, new Date()) !== undefined);
    // Asked before the lock, so that the database's answer is never waited for under it; a
    // recipient the ledger knows (a send of the day, one waiting, one decided a moment ago by a
    // concurrent send) is no first contact whatever the database said.
    const exchangedBefore =
      !countsFirstContacts ||
      this.ledgers.get(number.id)?.ledger.knows(message.toPhone) === true ||
      (await this.exchanges.exchanged(number.accountId, number.id, message.toPhone));
    const decided = await this.withNumberLock(number.id, async () => {
      const now = new Date();
      const ledger = await this.ledgerFor(number.id);
      const firstContact = !exchangedBefore && !ledger.knows(message.toPhone);
      // First in, first out: a message that is not scheduled goes behind those already waiting.
      const tail = ledger.queueTail();
      const sendAt = schedule?.sendAt;
      const notBefore = Math.max(tail, sendAt?.getTime() ?? 0);
      const decision = decide(
        policy,
        { marks: ledger.withQueue, linkedAt: number.createdAt, newChatCap: this.newChatCaps.capOf(number.id, now) },
        { recipient, firstContact, notBefore: notBefore === 0 ? null : new Date(notBefore) },
        now,
        this.random,
      );
      let waitReason: WaitReason | undefined =
        decision.kind === 'now'
          ? undefined
          : decision.reason === 'scheduled' && (sendAt === undefined || sendAt.getTime() < tail)
            ? 'gap'
            : decision.reason;
      let scheduledFor = decision.kind === 'now' ? null : decision.until;
      // Held until someone resumes it, the number waits for that whatever its policy says; held
      // until a time, it waits for whichever comes later.
      if (held !== null && (scheduledFor === null || held.until === null || held.until > scheduledFor)) {
        scheduledFor = new Date(Math.max(now.getTime(), scheduledFor?.getTime() ?? 0, held.until?.getTime() ?? 0));
        waitReason = 'paused';
      }
      const expiresAt = schedule?.expiresAt ?? new Date(Math.max(now.getTime(), sendAt?.getTime() ?? 0) + this.config.defaultExpiryMs);
      const bytes = contentBytes(message);
      if (scheduledFor !== null) this.assertQueueRoom(ledger, bytes, now);
      // The ledger counts a message by its row's recipient (to_phone), as it is read back after a takeover.
      const takeBack =
        scheduledFor === null
          ? ledger.sending(message.id, { at: now.getTime(), recipient: message.toPhone, firstContact })
          : SendGovernor.queueTentatively(ledger, message.id, {
              at: scheduledFor.getTime(),
              recipient: message.toPhone,
              firstContact,
              // Out of turn: a first contact held for WhatsApp's cap does not hold the replies behind it.
              scheduled: waitReason === 'scheduled' || waitReason === 'new_chat_cap',
              bytes,
            });
      return { now, firstContact, waitReason, scheduledFor, expiresAt, takeBack };
    });
    const { now, firstContact, waitReason, scheduledFor, expiresAt, takeBack } = decided;
    let admitted: boolean;
    try {
      const admission = await this.committer.run(async (trx, batch) => {
        await beforeInsert(trx);
        return queueMessageWithUnit(batch, message, unit, {
          scheduledFor,
          expiresAt: scheduledFor === null ? null : expiresAt,
          waitReason: waitReason ?? null,
          releasedAt: scheduledFor === null ? now : null,
          firstContact,
          options: scheduledFor === null ? null : options,
        });
      });
      admitted = admission.admitted;
    } catch (error) {
      takeBack();
      throw error;
    }
    if (!admitted) {
      takeBack();
      return { kind: 'refused' };
    }
    if (scheduledFor === null) return { kind: 'now' };
    this.queuedListener(scheduledFor);
    const expected = waitReason === 'paused' && held !== null ? dueUnderPause(scheduledFor, held) : scheduledFor;
    return { kind: 'queued', scheduledFor: expected, expiresAt, waitReason: waitReason! };
  }

  /** Counts a waiting message decided but not yet stored; the returned function takes it back. */
  private static queueTentatively(ledger: SendLedger, messageId: string, mark: PlannedMark): () => void {
    ledger.queued(messageId, mark);
    return () => void ledger.left(messageId);
  }

  /**
   * A number's queue holds at most `queueBytesPerNumber` of content, checked under its lock
   * against its ledger: queued messages are rows in the database that no other meter counts (a
   * cancelled message gives its unit back), so without a bound one key could fill the disk with
   * them (issue 38, ADR 0055).
   */
  private assertQueueRoom(ledger: SendLedger, bytes: number, now: Date): void {
    const limitBytes = this.config.queueBytesPerNumber;
    if (ledger.queuedBytes + bytes <= limitBytes) return;
    const firstDue = ledger.firstPlanned() ?? now.getTime();
    const retryAfterSeconds = Math.max(1, Math.ceil((firstDue - now.getTime()) / 1000));
    throw new AppError(
      'queue_full',
      `The queue of this number holds ${ledger.queuedBytes} bytes of messages, and may hold ${limitBytes}; this message (${bytes} ` +
        `bytes) must wait, and has no room. Try again in ${retryAfterSeconds} s, or cancel waiting messages.`,
      { limit_bytes: limitBytes, queued_bytes: ledger.queuedBytes, retry_after_seconds: retryAfterSeconds },
    );
  }

  /**
   * Resolves when the message leaves the queue on this node (sent, failed, cancelled or expired),
   * or after `timeoutMs` (null waits as long as it takes); true when it left. A client that asked
   * to wait is answered then; its message waits in the database either way.
   */
  waitForLeave(messageId: string, timeoutMs: number | null): Promise<LeftAs | undefined> {
    return new Promise((resolve) => {
      const timer = timeoutMs === null ? undefined : setTimeout(() => finish(undefined), timeoutMs);
      const finish = (left: LeftAs | undefined) => {
        clearTimeout(timer);
        const waiting = this.leaveWaiters.get(messageId)?.filter((waiter) => waiter !== finish) ?? [];
        if (waiting.length === 0) this.leaveWaiters.delete(messageId);
        else this.leaveWaiters.set(messageId, waiting);
        resolve(left);
      };
      this.leaveWaiters.set(messageId, [...(this.leaveWaiters.get(messageId) ?? []), finish]);
      // It may have left before the waiter was registered: the row says so.
      void findMessageById(this.store.db, messageId).then(
        (message) => {
          if (message !== undefined && message.status !== 'queued') finish(asLeft(message.status));
        },
        () => undefined,
      );
    });
  }

  /** The message left the queue (sent, failed, cancelled or expired): the ledger forgets it, whoever waits for it is answered. */
  messageLeft(numberId: string, messageId: string, status: LeftAs): void {
    this.changeLedger(numberId, (ledger) => ledger.left(messageId));
    for (const finish of this.leaveWaiters.get(messageId) ?? []) finish(status);
  }

  /** The number's queue was cleared: none of its waiting messages will leave. */
  queueCleared(numberId: string): void {
    this.changeLedger(numberId, (ledger) => ledger.cleared());
  }

  /**
   * The engine answered a send admitted to leave at once (it took it, or refused it): the
   * number's next send keeps its gap from this moment, not from the decision (issue 37).
   */
  engineAnswered(numberId: string, messageId: string, at: Date): void {
    this.changeLedger(numberId, (ledger) => ledger.answered(messageId, at.getTime()));
  }

  /** The runner released the message: from now on it counts among the number's sends. */
  released(numberId: string, messageId: string, mark: MadeMark): void {
    this.changeLedger(numberId, (ledger) => {
      ledger.left(messageId);
      ledger.sent(mark);
    });
  }

  /** Moves the number's waiting messages due before `until` to `until`, with the reason they wait (null keeps each one's). */
  async defer(numberId: string, until: Date, reason: WaitReason | null): Promise<void> {
    await deferWaiting(this.store.db, numberId, until, reason);
    this.changeLedger(numberId, (ledger) => ledger.deferred(until.getTime()));
  }

  /**
   * The number resumed: what waited for its pause is due now, and decided on again by the runner
   * (the policy's gaps still hold). The ledger's planned times for those messages were the lift
   * time, so it is read afresh under the lock.
   */
  async pauseEnded(numberId: string): Promise<void> {
    await this.withNumberLock(numberId, async () => {
      const moved = await bringForwardWaiting(this.store.db, numberId, 'paused', new Date());
      if (moved > 0) this.ledgers.delete(numberId);
    });
    this.queuedListener(new Date());
  }

  /**
   * The number's ledger. This node reads it from the database when it keeps none under the lease
   * it holds now: it gained the number (a start, a takeover), or lost it and gained it again,
   * when another node may have sent meanwhile. Called under the number's lock, so no send or
   * release of the number runs while it is read; a cancel, an expiry or a deferral may, and is
   * applied to it once read.
   */
  async ledgerFor(numberId: string): Promise<SendLedger> {
    const epoch = this.leases.leaseOf(numberId)?.epoch;
    const kept = this.ledgers.get(numberId);
    if (kept !== undefined && kept.epoch === epoch) {
      kept.ledger.trim(Date.now());
      return kept.ledger;
    }
    this.ledgers.delete(numberId);
    const changes: ((ledger: SendLedger) => void)[] = [];
    this.reading.set(numberId, changes);
    try {
      const { made, planned } = await readLedgerMarks(this.store.db, numberId, new Date(Date.now() - DAY_MS));
      const ledger = SendLedger.of(made, planned);
      for (const change of changes) change(ledger);
      // Without a lease (the number is not this node's) it is read afresh each time, as before.
      if (epoch !== undefined && this.leases.leaseOf(numberId)?.epoch === epoch) this.ledgers.set(numberId, { epoch, ledger });
      return ledger;
    } finally {
      this.reading.delete(numberId);
    }
  }

  /** Forgets the ledgers of the numbers this node no longer holds under the lease they were read under. */
  forgetUnheld(): void {
    for (const [numberId, { epoch }] of this.ledgers) if (this.leases.leaseOf(numberId)?.epoch !== epoch) this.ledgers.delete(numberId);
  }

  private changeLedger(numberId: string, change: (ledger: SendLedger) => void): void {
    const kept = this.ledgers.get(numberId);
    if (kept !== undefined) change(kept.ledger);
    this.reading.get(numberId)?.push(change);
  }

  /** Runs `work` alone among this node's governed work on the number. */
  withNumberLock<T>(numberId: string, work: () => Promise<T>): Promise<T> {
    return this.locks.run(numberId, work);
  }
}

function asLeft(status: Message['status']): LeftAs {
  return status === 'cancelled' || status === 'expired' || status === 'failed' || status === 'unknown' ? status : 'sent';
}

function needsFirstContacts(policy: SendPolicy): boolean {
  return policy.firstContactsPerDay !== null || policy.warmUp !== null;
}

/** What a message's content takes in its row: its text and structured content, as UTF-8 (readLedgerMarks counts the same). */
function contentBytes(message: Pick<Message, 'text' | 'structured'>): number {
  return Buffer.byteLength(message.text) + (message.structured === null ? 0 : Buffer.byteLength(JSON.stringify(message.structured)));
}
