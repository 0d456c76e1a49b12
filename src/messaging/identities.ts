import type { IdentitySource, PersonIdentity } from '../domain/identities.ts';
import type { IdentitiesLearned } from '../engines/engine-events.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { E164 } from '../domain/phone.ts';
import { contactIdentityPayload } from '../domain/event-payloads.ts';
import type { Executor, Store } from '../store/database.ts';
import type { GroupCommitter } from '../store/group-commit.ts';
import { fillSenderPhone, knownPhoneAmong, learnIdentity, lidOfPhone, phoneOfLid } from '../store/repositories/contacts.ts';
import { phoneVariant } from '../domain/phone-variants.ts';
import { mergeChatOfLid } from '../store/repositories/chats.ts';
import { findNumberById, findNumberByPhone } from '../store/repositories/numbers.ts';
import { enqueueEvent, mergeQueued, NOTHING_QUEUED, type DeliveryNotifier, type Enqueued } from '../webhooks/outbox.ts';

/**
 * Each number's own map from LID to phone (ADR 0032). Resolving asks the database, never
 * WhatsApp. Learning merges the person into one contact, fills the phone into the messages that
 * came by LID alone, folds a LID's chat into the phone's, and reports `contact.identity`, all in
 * one commit.
 */
export class IdentityMap {
  constructor(
    private readonly store: Store,
    private readonly committer: GroupCommitter,
    private readonly notifier: DeliveryNotifier,
  ) {}

  phoneOf(numberId: string, lid: string): Promise<E164 | undefined> {
    return phoneOfLid(this.store.db, numberId, lid);
  }

  lidOf(numberId: string, phone: E164): Promise<string | undefined> {
    return lidOfPhone(this.store.db, numberId, phone);
  }

  /**
   * The form the number knows a person by, when `phone` is one of a line's two forms (Brazil's
   * ninth digit, Mexico's 52 1, Argentina's 54 9; ADR 0050): the one its map holds, so that one
   * person stays one contact and one chat whichever form a caller writes. Asks the database only.
   */
  async knownForm(numberId: string, phone: E164): Promise<E164 | undefined> {
    const variant = phoneVariant(phone);
    return variant === undefined ? undefined : knownPhoneAmong(this.store.db, numberId, [phone, variant]);
  }

  async learn(numberId: string, identity: { lid: string; phone: E164 }, source: IdentitySource): Promise<boolean> {
    const number = await findNumberById(this.store.db, numberId);
    if (number === undefined) return false;
    return (await this.learnAll(number, [identity], source)) > 0;
  }

  /** What an engine reported, for the number it serves; unknown numbers are ignored. */
  async learnFromEngine(event: IdentitiesLearned): Promise<void> {
    if (event.identities.length === 0) return;
    const number = await findNumberByPhone(this.store.db, event.toPhone);
    if (number !== undefined) await this.learnAll(number, event.identities, event.source);
  }

  private async learnAll(
    number: WhatsAppNumber,
    identities: readonly { lid: string; phone: E164 }[],
    source: IdentitySource,
  ): Promise<number> {
    const at = new Date();
    // Group metadata names every member at once; only the news costs a write.
    const news: { lid: string; phone: E164 }[] = [];
    for (const identity of identities)
      if ((await phoneOfLid(this.store.db, number.id, identity.lid)) !== identity.phone) news.push(identity);
    if (news.length === 0) return 0;
    const queued = await this.committer.run(async (trx) => {
      const parts: Enqueued[] = [];
      for (const identity of news) parts.push(await learnAndReport(trx, this.notifier, number, identity, source, at));
      return mergeQueued(parts);
    });
    this.notifier.deliveriesQueued(queued);
    return news.length;
  }
}

/** Learns one identity inside the caller's transaction; see IdentityMap. */
export async function learnAndReport(
  trx: Executor,
  notifier: DeliveryNotifier,
  number: Pick<WhatsAppNumber, 'id' | 'accountId' | 'phone'>,
  identity: { lid: string; phone: E164 },
  source: IdentitySource,
  at: Date,
): Promise<Enqueued> {
  if (!(await learnIdentity(trx, { numberId: number.id, accountId: number.accountId }, identity, source, at))) return NOTHING_QUEUED;
  await fillSenderPhone(trx, number.id, identity);
  await mergeChatOfLid(trx, number.id, identity);
  return enqueueEvent(trx, notifier, number.accountId, contactIdentityPayload(number.phone, identity, source, at), at);
}

/**
 * A person as an engine named them, completed from the map: a LID without its phone gets the
 * phone the map knows, and a phone gets its LID. Costs one indexed read, and no WhatsApp query.
 */
export async function completeIdentity(db: Executor, numberId: string, person: PersonIdentity): Promise<PersonIdentity> {
  if (person.phone === null && person.lid !== null) return { lid: person.lid, phone: (await phoneOfLid(db, numberId, person.lid)) ?? null };
  if (person.phone !== null && person.lid === null)
    return { phone: person.phone, lid: (await lidOfPhone(db, numberId, person.phone)) ?? null };
  return person;
}
