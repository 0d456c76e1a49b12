import type { Logger } from 'pino';
import { recordNumberAudit } from '../audit/audit-trail.ts';
import type { AuditActor } from '../domain/audit.ts';
import { AppError } from '../domain/errors.ts';
import type { SessionLease, WhatsAppNumber } from '../domain/model.ts';
import type { NumberPause, PauseReason, ResumeReason, SendHold } from '../domain/number-pauses.ts';
import { numberPausedPayload, numberResumedPayload } from '../domain/event-payloads.ts';
import type { NumberRestrictedEvent, RestrictionLiftedEvent, SessionStatusEvent } from '../engines/engine-events.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { assertLeaseHeld, StaleLeaseError } from '../store/repositories/leases.ts';
import { deletePause, findPause, findPauses, savePause } from '../store/repositories/number-pauses.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';
import { enqueueEvent, NOTHING_QUEUED, type DeliveryNotifier } from '../webhooks/outbox.ts';

/** The longest a Node timer waits (about 24.8 days); a later lift time is reached in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

export interface NumberPausesDependencies {
  store: Store;
  committer: GroupCommitter;
  notifier: DeliveryNotifier;
  logger: Logger;
  /** This node's lease on the number, if it owns it: pauses are written by the owner only. */
  leaseOf(numberId: string): SessionLease | undefined;
  /** A write under a lease the database no longer honours: the node stands down from the number. */
  staleWriteRefused(error: StaleLeaseError): void;
}

interface Held {
  number: Pick<WhatsAppNumber, 'id' | 'phone' | 'accountId'>;
  pause: NumberPause;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Which numbers hold their sends, and why (docs/adr/0030-automatic-pause.md). The pause is a row
 * the owner writes under its lease, with its `number.paused` / `number.resumed` event in the same
 * commit; the owner also keeps it in memory, for the send path's check without a query, and arms
 * a timer for its lift time. A new owner reads the row when it starts the number's session, so a
 * pause and its lift time survive restarts and failovers.
 */
export class NumberPauses implements SendHold {
  private readonly held = new Map<string, Held>();
  /** Told of each number that resumed here, so that what waited for the pause is looked at now rather than at its lift time. */
  resumedListener: (numberId: string) => Promise<void> = async () => undefined;

  constructor(private readonly deps: NumberPausesDependencies) {}

  /** The send path's question, answered from memory on the number's owner. */
  holdOf(numberId: string): { reason: PauseReason; until: Date | null } | null {
    const held = this.held.get(numberId);
    return held === undefined ? null : { reason: held.pause.reason, until: held.pause.until };
  }

  /** The pauses of these numbers as stored, for any node's listing. */
  pausesOf(numberIds: readonly string[]): Promise<Map<string, NumberPause>> {
    return findPauses(this.deps.store.db, numberIds);
  }

  /** An engine's report that WhatsApp stopped the number. */
  async restricted(event: NumberRestrictedEvent): Promise<void> {
    const number = await findNumberByPhone(this.deps.store.db, event.phone);
    if (number === undefined) return;
    const pause: NumberPause = { reason: event.reason, detail: event.detail, since: new Date(), until: event.until };
    await this.quietlyUnder(event.lease, () => this.pauseUnder(number, pause, event.lease));
  }

  /** WhatsApp said its restriction is over: a pause it imposed ends now. */
  async lifted(event: RestrictionLiftedEvent): Promise<void> {
    const held = this.held.get(event.lease.numberId);
    // Only a time lock is lifted by WhatsApp's word: a 463 without one is a restriction that
    // WhatsApp never announces the end of, so a person resumes it.
    if (held === undefined || held.pause.reason !== 'reachout_timelock') return;
    await this.quietlyUnder(event.lease, () => this.resumeUnder(held.number, 'lifted', event.lease));
  }

  /** A session connected: a number paused because it was logged out has been linked again. */
  async sessionChanged(event: SessionStatusEvent): Promise<void> {
    if (event.status !== 'connected') return;
    const held = this.held.get(event.lease.numberId);
    if (held === undefined || held.pause.reason !== 'logged_out') return;
    await this.quietlyUnder(event.lease, () => this.resumeUnder(held.number, 'relinked', event.lease));
  }

  /** Pauses the number by hand, until someone resumes it; on its owner. `actor` is named by its audit row. */
  async pause(number: WhatsAppNumber, detail: string | null, actor: AuditActor): Promise<NumberPause> {
    const pause: NumberPause = { reason: 'manual', detail, since: new Date(), until: null };
    await this.asOwner(number, (lease) => this.pauseUnder(number, pause, lease, actor));
    return this.held.get(number.id)?.pause ?? pause;
  }

  /** Ends the number's pause, whatever its cause; a number that is not paused is left as it is. On its owner. */
  async resume(number: WhatsAppNumber, actor: AuditActor): Promise<void> {
    await this.asOwner(number, (lease) => this.resumeUnder(number, 'manual', lease, actor));
  }

  /**
   * The number's session started here: its stored pause, if any, holds its sends again, and
   * one whose lift time passed while nobody owned it ends now.
   */
  async sessionStarted(number: WhatsAppNumber, lease: SessionLease): Promise<void> {
    this.forget(number.id);
    const pause = await findPause(this.deps.store.db, number.id);
    if (pause === undefined) return;
    this.hold(number, pause);
    if (pause.until !== null && pause.until.getTime() <= Date.now())
      await this.quietlyUnder(lease, () => this.resumeUnder(number, 'lifted', lease));
  }

  /** The number's session left this node: its new owner holds the pause from now on. */
  sessionStopped(numberId: string): void {
    this.forget(numberId);
  }

  /** Forgets every timer, as the node stops. */
  stop(): void {
    for (const numberId of [...this.held.keys()]) this.forget(numberId);
  }

  /** `actor` is the person behind a pause by hand, whose audit row commits with it; WhatsApp's pauses have none. */
  private async pauseUnder(number: Held['number'], pause: NumberPause, lease: SessionLease, actor?: AuditActor): Promise<void> {
    const current = this.held.get(number.id)?.pause;
    if (current !== undefined && !replaces(pause, current)) return;
    const queued = await this.deps.committer.run(async (trx) => {
      await assertLeaseHeld(trx, this.deps.store.dialect, lease);
      await savePause(trx, number.id, pause);
      if (actor !== undefined) await recordNumberAudit(trx, actor, 'number.paused', number, { detail: pause.detail });
      return enqueueEvent(trx, this.deps.notifier, number.accountId, numberPausedPayload(number.phone, pause), pause.since);
    });
    this.deps.notifier.deliveriesQueued(queued);
    this.hold(number, pause);
    this.deps.logger.warn({ phone: number.phone, reason: pause.reason, until: pause.until, detail: pause.detail }, 'paused a number');
  }

  private async resumeUnder(number: Held['number'], reason: ResumeReason, lease: SessionLease, actor?: AuditActor): Promise<void> {
    const at = new Date();
    const queued = await this.deps.committer.run(async (trx) => {
      await assertLeaseHeld(trx, this.deps.store.dialect, lease);
      // Only the resume that removes the row tells anyone: two at once (a lift time and a click) make one event.
      const resumed = await deletePause(trx, number.id);
      // A person's resume is recorded even when there was no pause to end: they acted, and the row says it changed nothing.
      if (actor !== undefined) await recordNumberAudit(trx, actor, 'number.resumed', number, { was_paused: resumed });
      if (!resumed) return NOTHING_QUEUED;
      return enqueueEvent(trx, this.deps.notifier, number.accountId, numberResumedPayload(number.phone, reason, at), at);
    });
    this.deps.notifier.deliveriesQueued(queued);
    if (this.held.has(number.id)) this.deps.logger.info({ phone: number.phone, reason }, 'resumed a number');
    this.forget(number.id);
    await this.resumedListener(number.id).catch((error: unknown) =>
      this.deps.logger.error(
        { err: error, phone: number.phone },
        'could not bring forward what waited for a pause; it leaves at its lift time',
      ),
    );
  }

  private hold(number: Held['number'], pause: NumberPause): void {
    this.forget(number.id);
    const held: Held = { number: { id: number.id, phone: number.phone, accountId: number.accountId }, pause, timer: undefined };
    this.held.set(number.id, held);
    if (pause.until !== null) this.armLift(held);
  }

  /** Resumes the number at its lift time, on this node while it owns the number. */
  private armLift(held: Held): void {
    const waitMs = Math.max(0, (held.pause.until?.getTime() ?? 0) - Date.now());
    held.timer = setTimeout(
      () => {
        if (this.held.get(held.number.id) !== held) return;
        // A timer counts from the event loop's cached time, so it may fire a moment before the
        // wall clock reaches `until`; the number resumes at its lift time, never before.
        if (waitMs > LONGEST_TIMER_MS || Date.now() < (held.pause.until?.getTime() ?? 0)) return this.armLift(held);
        const lease = this.deps.leaseOf(held.number.id);
        if (lease === undefined) return this.forget(held.number.id);
        void this.quietlyUnder(lease, () => this.resumeUnder(held.number, 'lifted', lease)).catch((error: unknown) => {
          this.deps.logger.error(
            { err: error, phone: held.number.phone },
            'could not resume a number at its lift time; trying again in a minute',
          );
          held.timer = setTimeout(() => this.armLift(held), 60_000).unref();
        });
      },
      Math.min(waitMs, LONGEST_TIMER_MS),
    );
    held.timer.unref();
  }

  private forget(numberId: string): void {
    clearTimeout(this.held.get(numberId)?.timer);
    this.held.delete(numberId);
  }

  /** An engine's report under a lease that turned out stale is dropped, as its session's other late words are. */
  private async quietlyUnder(lease: SessionLease, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (!(error instanceof StaleLeaseError)) throw error;
      this.deps.staleWriteRefused(error);
      this.forget(lease.numberId);
    }
  }

  /** Runs an operator's or client's pause or resume under this node's lease on the number. */
  private async asOwner(number: WhatsAppNumber, write: (lease: SessionLease) => Promise<void>): Promise<void> {
    const lease = this.deps.leaseOf(number.id);
    if (lease === undefined) throw notServedHere(number);
    try {
      await write(lease);
    } catch (error) {
      if (!(error instanceof StaleLeaseError)) throw error;
      this.deps.staleWriteRefused(error);
      throw notServedHere(number);
    }
  }
}

/** Owner dispatch brought the request here; the lease moved on in the meantime, so it is tried again. */
function notServedHere(number: WhatsAppNumber): AppError {
  return new AppError('number_not_connected', `No node serves ${number.phone} at this moment (it is changing owner); try again shortly.`, {
    from_phone: number.phone,
    status: 'no_owner',
    retry_after_seconds: 5,
  });
}

/**
 * Whether a new pause takes the place of the current one: unless the current lasts longer, so
 * that a short rate limit met during a restriction does not end the restriction early. A time
 * lock WhatsApp reports after a 463 says what that 463 was, and when it lifts.
 */
function replaces(next: NumberPause, current: NumberPause): boolean {
  if (current.reason === 'restricted' && next.reason === 'reachout_timelock') return true;
  if (current.until === null) return next.until === null && (next.reason !== current.reason || next.detail !== current.detail);
  if (next.until === null) return true;
  if (next.until.getTime() !== current.until.getTime()) return next.until.getTime() > current.until.getTime();
  return next.reason !== current.reason;
}
