import type { Logger } from 'pino';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import { presenceUpdatePayload } from '../domain/webhooks.ts';
import type { PresenceEvent } from '../engines/engine-events.ts';
import { AppError } from '../domain/errors.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';
import { enqueueEvent, type DeliveryNotifier } from '../webhooks/outbox.ts';
import type { SessionSupervisor } from './session-supervisor.ts';

/**
 * Presence both ways (ADR 0033): the contacts a number subscribes to are reported to the
 * account's `presence.update` subscribers, and the number shows itself online, or not, as its
 * show_online setting says.
 */
export class PresenceService {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
    private readonly supervisor: Pick<SessionSupervisor, 'sessionFor'>,
    private readonly logger: Logger,
  ) {}

  async subscribe(number: WhatsAppNumber, phone: E164): Promise<void> {
    await this.supervisor.sessionFor(number).subscribePresence(phone);
  }

  /**
   * Shows the number as its setting now says. A session that is down takes the setting when it
   * next connects, so the setting is kept either way and the change is not refused.
   */
  async applyShowOnline(number: WhatsAppNumber): Promise<void> {
    await this.supervisor
      .sessionFor(number)
      .setOnline(number.showOnline)
      .catch((error: unknown) => {
        if (!(error instanceof AppError) || error.code !== 'number_not_connected') throw error;
        this.logger.debug({ numberId: number.id }, "show_online is kept for the session's next connection");
      });
  }

  async record(event: PresenceEvent): Promise<void> {
    const number = await findNumberByPhone(this.store.db, event.toPhone);
    if (number === undefined) throw new Error(`An engine reported a presence for ${event.toPhone}, which this gateway does not hold.`);
    const payload = presenceUpdatePayload({ ...event, phone: number.phone });
    const queued = await this.committer.run((trx) => enqueueEvent(trx, this.notifier, number.accountId, payload, event.at));
    this.notifier.deliveriesQueued(queued);
  }
}
