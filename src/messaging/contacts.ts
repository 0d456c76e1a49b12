import { AppError } from '../domain/errors.ts';
import { parsePersonRef, type Contact } from '../domain/identities.ts';
import type { WhatsAppNumber } from '../domain/model.ts';
import type { Store } from '../store/database.ts';
import { findContact, listContacts } from '../store/repositories/contacts.ts';

export interface ContactPage {
  contacts: Contact[];
  /** Present when more people follow. */
  nextCursor: string | undefined;
}

/**
 * The people a number knows: those it exchanged messages with, in either direction, and those
 * saved on its phone, each once with both identifiers where known (ADR 0032). The caller has
 * checked that the number is the account's, so another account's people are never reached.
 */
export class ContactsService {
  constructor(private readonly store: Store) {}

  async page(number: WhatsAppNumber, cursor: string | undefined, limit: number, offset = 0): Promise<ContactPage> {
    const after = cursor === undefined ? undefined : parseCursor(cursor);
    const rows = await listContacts(this.store.db, number.id, after, limit + 1, offset);
    const page = rows.slice(0, limit);
    return { contacts: page.map((row) => row.contact), nextCursor: rows.length > limit ? page.at(-1)!.id : undefined };
  }

  /** One person, by phone (any common spelling) or by LID, found whichever the map knows them by. */
  async find(number: WhatsAppNumber, raw: string): Promise<Contact> {
    const ref = parsePersonRef(raw);
    if (ref === undefined)
      throw new AppError('invalid_request', `"${raw.slice(0, 64)}" is neither a phone (with its country code) nor a LID (<digits>@lid).`, {
        field: 'phone_or_lid',
      });
    const contact = await findContact(this.store.db, number.id, ref);
    if (contact === undefined)
      throw new AppError('contact_not_found', `${number.phone} knows no person ${'lid' in ref ? ref.lid : ref.phone}.`, {
        field: 'phone_or_lid',
      });
    return contact;
  }
}

function parseCursor(cursor: string): string {
  if (!/^ctc_[0-9a-z]{26}$/.test(cursor))
    throw new AppError('invalid_request', 'The page link is not valid; start again from the first page.', { field: 'cursor' });
  return cursor;
}
