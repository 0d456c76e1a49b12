import { contactComponent, presentContact } from '../../contact-schemas.ts';
import { ref } from '../../schema-refs.ts';
import { defineOperation, ok } from '../operation.ts';
import { groupNumber } from '../groups/group-number.ts';
import { CONTACT_ERRORS, contactParamsSchema, oneContactQuerySchema } from './contact-requests.ts';

export const getContact = defineOperation({ params: contactParamsSchema, query: oneContactQuerySchema }, ['numbers', 'contacts'])({
  method: 'GET',
  scope: 'read',
  path: '/contacts/:phone_or_lid',
  operationId: 'getContact',
  summary: 'Find a person by phone or by LID',
  description:
    'One person from_phone knows (by a message, a group or a number check), named by phone or by LID: either finds them once the gateway ' +
    'has learned that the two are one person, and the answer carries both. Resolving a LID this way never asks WhatsApp.',
  tag: 'contacts',
  answers: { 200: ref(contactComponent.$id) },
  errors: [...CONTACT_ERRORS, 'contact_not_found'],
  handle: async ({ scope, params, query }, services) => {
    const number = await groupNumber(services, scope, query.from_phone);
    return ok(presentContact(await services.contacts.find(number, params.phone_or_lid)));
  },
});
