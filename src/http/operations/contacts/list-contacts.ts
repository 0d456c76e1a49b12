import { presentContact } from '../../contact-schemas.ts';
import { defineOperation, ok } from '../operation.ts';
import { groupNumber } from '../groups/group-number.ts';
import { CONTACT_ERRORS, contactPageSchema, listContactsQuerySchema } from './contact-requests.ts';

export const listContacts = defineOperation({ query: listContactsQuerySchema }, ['numbers', 'contacts'])({
  method: 'GET',
  scope: 'read',
  path: '/contacts',
  operationId: 'listContacts',
  summary: 'List the people a number knows',
  description:
    'The people from_phone has exchanged direct messages with, in either direction, or has saved, each once: by phone and by LID where ' +
    'the gateway knows both, with their WhatsApp name. In the order the number first met them, a page at a time: pass next_cursor as ' +
    "cursor for the next page. Read from the gateway's own records, so WhatsApp is not asked.",
  tag: 'contacts',
  answers: { 200: contactPageSchema },
  errors: CONTACT_ERRORS,
  handle: async ({ scope, query }, services) => {
    const number = await groupNumber(services, scope, query.from_phone);
    const page = await services.contacts.page(number, query.cursor, query.limit ?? 50, query.offset ?? 0);
    return ok({ contacts: page.contacts.map(presentContact), next_cursor: page.nextCursor ?? null });
  },
});
