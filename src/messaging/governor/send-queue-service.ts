import { AppError } from '../../domain/errors.ts';
import type { Message, WhatsAppNumber } from '../../domain/model.ts';
import { dueUnderPause } from '../../domain/number-pauses.ts';
import { findPause } from '../../store/repositories/number-pauses.ts';
import { findNewChatQuota } from '../../store/repositories/new-chat-quotas.ts';
import type { NewChatQuotaState } from '../../domain/new-chat-quota.ts';
import { policyBody, policyOf, storedSetting, type PolicySetting, type SendPolicyBody } from '../../domain/send-policy.ts';
import { recordAudit, recordNumberAudit } from '../../audit/audit-trail.ts';
import type { AuditActor } from '../../domain/audit.ts';
import type { Store } from '../../store/database.ts';
import { findMessageById } from '../../store/repositories/messages.ts';
import { CLEARING, markClearing, recordQueueClear } from '../../store/repositories/queue-clears.ts';
import { countSentPerHour } from '../../store/repositories/send-ledger.ts';
import {
  findAccountSendPolicy,
  findSendPolicies,
  setAccountSendPolicy,
  setNumberSendPolicy,
} from '../../store/repositories/send-policies.ts';
import {
  listClearingOf,
  countWaitingByReason,
  listWaitingPage,
  oldestWaitingSince,
  type WaitingMessage,
} from '../../store/repositories/waiting-messages.ts';
import type { SendMessageService } from '../send-message.ts';
import type { LeaseView } from '../../domain/model.ts';
import type { SendGovernor } from './send-governor.ts';
import { settleUnsent } from './unsent-leaving.ts';
import type { GroupCommitter } from '../../store/group-commit.ts';
import { assertLeaseHeld } from '../../store/repositories/leases.ts';

/** A policy setting as the API shows it: where it comes from, its preset if any, and its figures. */
export interface PresentedPolicy {
  source: 'number' | 'account' | 'gateway';
  preset: string | null;
  /** Null for the governor off. */
  policy: SendPolicyBody | null;
}

/** A waiting message as shown: when it is expected to leave (null while its number is paused until resumed), and why it waits. */
type ShownWaitingMessage = Omit<WaitingMessage, 'scheduledFor'> & { scheduledFor: Date | null };

export interface QueueView {
  counts: Record<string, number>;
  total: number;
  nextScheduledFor: Date | null;
  messages: ShownWaitingMessage[];
  nextCursor: string | null;
  policy: PresentedPolicy;
  /** WhatsApp's cap on the number's new chats as last read (ADR 0058); undefined when it was never read. */
  newChatQuota: NewChatQuotaState | undefined;
}

/** What the dashboard shows of a number's sending: its queue and its sends per hour of the last day. */
export interface SendingOverview {
  queue: QueueView;
  oldestWaitingSince: Date | null;
  /** The start of the first hour of `sentPerHour`. */
  since: Date;
  /** Messages sent in each of the last 24 hours, oldest first; the last is the hour under way. */
  sentPerHour: number[];
}

const CLEAR_BATCH = 500;
const HOUR_MS = 3_600_000;
const HISTORY_HOURS = 24;

/**
 * What the API does with send policies and queues: set a number's or the account's policy, show
 * a number's queue, cancel one waiting message, clear a number's queue (after a ban, leftover
 * messages must not go out from a replacement number).
 */
export class SendQueueService {
  constructor(
    private readonly store: Store,
    private readonly governor: SendGovernor,
    private readonly sender: Pick<SendMessageService, 'settleWaiting' | 'settleWaitingMany'>,
    private readonly committer: GroupCommitter,
    private readonly leases: Pick<LeaseView, 'leaseOf'>,
  ) {}

  /** Sets (or, with null, drops) a number's own policy, with the audit row naming who did, in one transaction. */
  async setNumberPolicy(number: WhatsAppNumber, setting: PolicySetting | null, actor: AuditActor): Promise<PresentedPolicy> {
    await this.store.db.transaction().execute(async (trx) => {
      await setNumberSendPolicy(trx, number.id, setting === null ? null : storedSetting(setting));
      await recordNumberAudit(trx, actor, 'number.send_policy_changed', number, { policy: policyFact(setting) });
    });
    // Sends read the policy with the number, through the lookup cache: the next send sees the change.
    await this.store.lookups.numbersChanged();
    return this.numberPolicy(number);
  }

  async numberPolicy(number: WhatsAppNumber): Promise<PresentedPolicy> {
    const stored = (await findSendPolicies(this.store.db, number.id)) ?? { number: null, account: null };
    const source = stored.number !== null ? 'number' : stored.account !== null ? 'account' : 'gateway';
    return present(source, this.governor.resolve(stored).setting);
  }

  async accountPolicy(accountId: string): Promise<PresentedPolicy> {
    const stored = await findAccountSendPolicy(this.store.db, accountId);
    return present(stored === null ? 'gateway' : 'account', this.governor.resolve({ number: null, account: stored }).setting);
  }

  /** Sets (or, with null, drops) the account's default policy, with its audit row, in one transaction. */
  async setAccountPolicy(accountId: string, setting: PolicySetting | null, actor: AuditActor): Promise<PresentedPolicy> {
    await this.store.db.transaction().execute(async (trx) => {
      await setAccountSendPolicy(trx, accountId, setting === null ? null : storedSetting(setting));
      await recordAudit(trx, actor, 'account.send_policy_changed', {
        accountId,
        targetId: accountId,
        details: { policy: policyFact(setting) },
      });
    });
    await this.store.lookups.numbersChanged();
    return this.accountPolicy(accountId);
  }

  async view(number: WhatsAppNumber, limit: number, cursor: string | undefined, offset = 0): Promise<QueueView> {
    const after = cursor === undefined ? undefined : parseCursor(cursor);
    const [counts, page, policy, pause, newChatQuota] = await Promise.all([
      countWaitingByReason(this.store.db, number.id),
      listWaitingPage(this.store.db, number.id, limit + 1, after, offset),
      this.numberPolicy(number),
      findPause(this.store.db, number.id),
      findNewChatQuota(this.store.db, number.id),
    ]);
    const messages = page.slice(0, limit);
    const last = messages.at(-1);
    const first = after === undefined && offset === 0 ? messages[0] : (await listWaitingPage(this.store.db, number.id, 1))[0];
    const shown = (message: WaitingMessage): ShownWaitingMessage =>
      pause === undefined || message.waitReason === CLEARING
        ? message
        : { ...message, scheduledFor: dueUnderPause(message.scheduledFor, pause), waitReason: 'paused' };
    const shownCounts = pause === undefined ? counts : countsUnderPause(counts);
    return {
      counts: shownCounts,
      total: Object.values(shownCounts).reduce((sum, count) => sum + count, 0),
      nextScheduledFor: first === undefined ? null : shown(first).scheduledFor,
      messages: messages.map(shown),
      // The cursor keeps the stored order, whatever is shown.
      nextCursor: page.length > limit && last !== undefined ? `${last.scheduledFor.getTime()}_${last.id}` : null,
      policy,
      newChatQuota,
    };
  }

  /** The queue's first `limit` messages, its oldest, and the sends of the last 24 whole-or-current hours. */
  async overview(number: WhatsAppNumber, limit: number, now: Date): Promise<SendingOverview> {
    // Hours are aligned to the clock, so a bar is "14:00 to 15:00", and the last one is the hour under way.
    const since = new Date((Math.floor(now.getTime() / HOUR_MS) - (HISTORY_HOURS - 1)) * HOUR_MS);
    const [queue, oldest, sentPerHour] = await Promise.all([
      this.view(number, limit, undefined),
      oldestWaitingSince(this.store.db, number.id),
      countSentPerHour(this.store.db, number.id, since, HISTORY_HOURS),
    ]);
    return { queue, oldestWaitingSince: oldest, since, sentPerHour };
  }

  /** Cancels a waiting message on its owner: `cancelled`, its unit back, an event; 409 once it has left. */
  async cancel(number: WhatsAppNumber, message: Message): Promise<Message> {
    const cancelled = await this.sender.settleWaiting(message, 'cancelled', this.leases.leaseOf(number.id));
    if (!cancelled) {
      const now = (await findMessageById(this.store.db, message.id)) ?? message;
      throw new AppError(
        'message_not_cancellable',
        `Message ${message.id} is not waiting in its number's queue (its status is ${now.status}); only a queued or scheduled message ` +
          `can be cancelled.`,
        { status: now.status },
      );
    }
    this.governor.messageLeft(number.id, message.id, 'cancelled');
    return { ...message, status: 'cancelled' };
  }

  /**
   * Cancels every waiting message of the number (ADR 0066): the clear is recorded once, durably
   * and fenced by the owner's lease, whatever the queue's length, and none of the messages it
   * takes leaves from then on; a short queue is settled (`cancelled`, its events, its units back)
   * before the answer, a long one by the queue runner in batches, which the queue view shows
   * under the reason `cancelling`. Returns how many were cancelled, and how many of them are
   * still to be settled.
   */
  async clear(number: WhatsAppNumber, actor: AuditActor): Promise<{ cancelled: number; pending: number }> {
    const lease = this.leases.leaseOf(number.id);
    const cancelled = await this.governor.withNumberLock(number.id, async () => {
      const taken = await this.committer.run(async (trx) => {
        if (lease !== undefined) await assertLeaseHeld(trx, this.store.dialect, lease);
        const count = await recordQueueClear(trx, number.id, new Date());
        await recordNumberAudit(trx, actor, 'number.queue_cleared', number, { cancelled: count });
        return count;
      });
      this.governor.queueCleared(number.id);
      return taken;
    });
    // A short queue is settled within the answer (200); a long one is answered at once (202) and
    // settled by the runner, so that the answer's time does not grow with the queue.
    // What is left to settle is counted only after a short queue's settling: a long one's count
    // would read the whole queue again, and is what the clear took.
    let pending = cancelled;
    if (cancelled <= CLEAR_BATCH) {
      await this.settleClearing(number);
      pending = (await countWaitingByReason(this.store.db, number.id))[CLEARING] ?? 0;
    }
    // The runner looks for what a clear left at once, as it would for a message past its expiry.
    if (pending > 0) this.governor.queuedListener(new Date());
    return { cancelled, pending };
  }

  /** Settles what clears of the number left, batch after batch, until none is left. */
  async finishClearing(number: WhatsAppNumber): Promise<void> {
    while ((await this.settleClearing(number)) > 0);
  }

  /** One batch of what a clear took: marked, then settled, each with its event and its unit back; how many were. */
  private async settleClearing(number: WhatsAppNumber): Promise<number> {
    const marked = await markClearing(this.store.db, { numberId: number.id }, new Date(), CLEAR_BATCH);
    const deps = { store: this.store, sender: this.sender, governor: this.governor, leaseOf: (id: string) => this.leases.leaseOf(id) };
    const settled = await settleUnsent(deps, await listClearingOf(this.store.db, number.id, CLEAR_BATCH));
    return Math.max(marked, settled);
  }
}

/**
 * A paused number's queue waits for the pause, whatever each message waited for before (the
 * runner only writes `paused` on the messages it finds due); a clear's `cancelling` stays.
 */
function countsUnderPause(counts: Record<string, number>): Record<string, number> {
  const paused = Object.entries(counts).reduce((sum, [reason, count]) => (reason === CLEARING ? sum : sum + count), 0);
  return { ...(paused > 0 && { paused }), ...(counts[CLEARING] !== undefined && { [CLEARING]: counts[CLEARING] }) };
}

function present(source: PresentedPolicy['source'], setting: PolicySetting): PresentedPolicy {
  const policy = policyOf(setting);
  return { source, preset: 'preset' in setting ? setting.preset : null, policy: policy === null ? null : policyBody(policy) };
}

function parseCursor(cursor: string): { scheduledFor: number; id: string } {
  const match = /^(\d{1,16})_(msg_[A-Za-z0-9_]+)$/.exec(cursor);
  if (match === null)
    throw new AppError('invalid_request', 'cursor must be the next_cursor of an earlier page.', { field: 'cursor', problem: 'invalid' });
  return { scheduledFor: Number(match[1]), id: match[2]! };
}

/** What the audit row says of a policy: its preset, "custom" for figures of its own, or "inherited" when dropped. */
function policyFact(setting: PolicySetting | null): string {
  if (setting === null) return 'inherited';
  return 'preset' in setting ? setting.preset : 'custom';
}
