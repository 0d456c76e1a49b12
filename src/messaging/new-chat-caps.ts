import type { Logger } from 'pino';
import { KeyedQueue } from '../domain/keyed-queue.ts';
import type { SessionLease, WhatsAppNumber } from '../domain/model.ts';
import { capMet, capOf, isCapped, quotaRead, type NewChatCap, type NewChatQuotaState } from '../domain/new-chat-quota.ts';
import { numberCappedPayload } from '../domain/event-payloads.ts';
import type { NewChatQuotaEvent } from '../engines/engine-events.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { assertLeaseHeld, StaleLeaseError } from '../store/repositories/leases.ts';
import { findNewChatQuota, saveNewChatQuota } from '../store/repositories/new-chat-quotas.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';
import { enqueueEvent, NOTHING_QUEUED, type DeliveryNotifier } from '../webhooks/outbox.ts';

export interface NewChatCapsDependencies {
  store: Store;
  committer: GroupCommitter;
  notifier: DeliveryNotifier;
  logger: Logger;
  /** A write under a lease the database no longer honours: the node stands down from the number. */
  staleWriteRefused(error: StaleLeaseError): void;
  /** Counts the quota reads that failed, for the metrics. */
  readFailed(): void;
}

/**
 * WhatsApp's cap on each number's new chats, as its session last read it (docs/adr/0058). Like a
 * pause (number-pauses.ts) it is a row the owner writes under its lease, with `number.capped` in
 * the same commit when a send meets the cap, and kept in memory on the owner for the governor's
 * first-contact rule, which must not wait for a query. A new owner reads the row when it starts
 * the number's session, so a 475's hold survives restarts and failovers.
 */
export class NewChatCaps {
  private readonly known = new Map<string, NewChatQuotaState>();
  /** A number's news are recorded one at a time: each builds on the state the one before left. */
  private readonly perNumber = new KeyedQueue();

  constructor(private readonly deps: NewChatCapsDependencies) {}

  /** The cap the governor applies to a first contact of the number at `at`; undefined when WhatsApp's figures are not known. */
  capOf(numberId: string, at: Date): NewChatCap | undefined {
    return capOf(this.known.get(numberId), at);
  }

  /** Whether first contacts of the number are held now (a 475, or WhatsApp said capped). */
  cappedNow(numberId: string): boolean {
    return isCapped(this.known.get(numberId), new Date());
  }

  /**
   * An engine's news: a read (or push) of the quota, or a 475. Two at once (a 475 while a read is
   * being written) would both start from the same state, and the later write would drop the
   * other's news, or both would say `number.capped`: they are recorded in turn.
   */
  record(event: NewChatQuotaEvent): Promise<void> {
    return this.perNumber.run(event.lease.numberId, () => this.recordInTurn(event));
  }

  private async recordInTurn(event: NewChatQuotaEvent): Promise<void> {
    const number = await findNumberByPhone(this.deps.store.db, event.phone);
    if (number === undefined || number.id !== event.lease.numberId) return;
    const previous = this.known.get(number.id);
    const next =
      event.kind === 'read'
        ? quotaRead(previous, event.quota, event.at)
        : event.quota !== undefined
          ? quotaRead(previous, { ...event.quota, status: 'capped' }, event.at)
          : capMet(previous, event.at);
    if (event.kind === 'read' && event.quota.status === 'unknown') {
      this.deps.readFailed();
      this.deps.logger.warn(
        { phone: number.phone, error: event.quota.error },
        "WhatsApp did not answer the new-chat quota; the send policy's own first-contact cap stands in",
      );
    }
    const newlyCapped = !isCapped(previous, event.at) && isCapped(next, event.at);
    try {
      const queued = await this.deps.committer.run(async (trx) => {
        await assertLeaseHeld(trx, this.deps.store.dialect, event.lease);
        await saveNewChatQuota(trx, number.id, next);
        if (!newlyCapped) return NOTHING_QUEUED;
        const detail = event.kind === 'capped' ? event.detail : 'WhatsApp said the number is capped';
        return enqueueEvent(trx, this.deps.notifier, number.accountId, numberCappedPayload(number.phone, next, detail, event.at), event.at);
      });
      this.deps.notifier.deliveriesQueued(queued);
    } catch (error) {
      if (!(error instanceof StaleLeaseError)) throw error;
      this.deps.staleWriteRefused(error);
      this.known.delete(number.id);
      return;
    }
    this.known.set(number.id, next);
    if (newlyCapped)
      this.deps.logger.warn(
        { phone: number.phone, until: next.cappedUntil },
        'WhatsApp capped the new chats of a number; first contacts wait',
      );
  }

  /** The number's session started here: its stored state counts again. */
  async sessionStarted(number: WhatsAppNumber, _lease: SessionLease): Promise<void> {
    const state = await findNewChatQuota(this.deps.store.db, number.id);
    if (state === undefined) this.known.delete(number.id);
    else this.known.set(number.id, state);
  }

  sessionStopped(numberId: string): void {
    this.known.delete(numberId);
  }
}
