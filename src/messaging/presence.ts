import type { Logger } from 'pino';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import { presenceUpdatePayload } from '../domain/event-payloads.ts';
import type { PresenceEvent } from '../engines/engine-events.ts';
import { AppError } from '../domain/errors.ts';
import type { Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { findNumberByPhone } from '../store/repositories/numbers.ts';
import { findHeardPresence, recordHeardPresence, type HeardPresence } from '../store/repositories/contact-presences.ts';
import { lidOfPhone, phoneOfLid } from '../store/repositories/contacts.ts';
import { parsePersonRef } from '../domain/identities.ts';
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
    const contact = event.contactPhone ?? event.contactLid;
    const queued = await this.committer.run(async (trx) => {
      if (contact !== null)
        await recordHeardPresence(trx, number.id, {
          contact,
          presence: event.presence,
          groupId: event.groupId,
          lastSeen: event.lastSeen,
          heardAt: event.at,
        });
      return enqueueEvent(trx, this.notifier, number.accountId, payload, event.at);
    });
    this.notifier.deliveriesQueued(queued);
  }

  /**
   * What the number last heard of a person's presence, by phone or by LID: whichever of the two
   * it was reported by, once the number's map knows they are one person. Undefined heard: nothing
   * yet (no subscription, or no report since).
   */
  async heard(number: WhatsAppNumber, raw: string): Promise<{ phone: E164 | null; lid: string | null; heard: HeardPresence | undefined }> {
    const person = parsePersonRef(raw);
    if (person === undefined)
      throw new AppError(
        'invalid_phone_number',
        `"${raw.slice(0, 64)}" is neither a phone (with its country code) nor a LID (<digits>@lid).`,
        {
          field: 'phone_or_lid',
        },
      );
    const phone = 'phone' in person ? person.phone : ((await phoneOfLid(this.store.db, number.id, person.lid)) ?? null);
    const lid = 'lid' in person ? person.lid : ((await lidOfPhone(this.store.db, number.id, person.phone)) ?? null);
    const keys = [phone, lid].filter((key): key is string => key !== null);
    return { phone, lid, heard: await findHeardPresence(this.store.db, number.id, keys) };
  }
}
