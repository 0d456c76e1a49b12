import { parsePhoneField } from '../message-input.ts';
import { KEYED_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from './error-responses.ts';
import { fromPhone } from './groups/group-number.ts';
import { defineSessionOperation, ok } from './operation.ts';

// The blocklist's three operations (ADR 0033): block, unblock and list, each on the node that
// serves from_phone, each answered from WhatsApp itself.

const blockStateSchema = {
  type: 'object',
  required: ['from_phone', 'phone', 'blocked'],
  properties: {
    from_phone: { type: 'string', description: 'Your number.' },
    phone: { type: 'string', description: 'The contact, E.164.' },
    blocked: { type: 'boolean', description: 'Whether the number now blocks the contact.' },
  },
} as const;

const fromPhoneQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['from_phone'],
  properties: { from_phone: { type: 'string', description: 'One of your numbers: its blocklist.' } },
} as const;

export const blockContact = defineSessionOperation(
  {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['from_phone', 'phone'],
      properties: {
        from_phone: { type: 'string', description: 'One of your numbers.' },
        phone: { type: 'string', description: 'The contact to block, E.164.' },
      },
    },
  },
  [],
)({
  method: 'POST',
  scope: 'send',
  path: '/blocklist',
  operationId: 'blockContact',
  summary: 'Block a contact',
  description:
    "from_phone blocks phone, as on the phone's own app: WhatsApp no longer delivers its messages or calls to the number. Blocking a " +
    'contact already blocked changes nothing.',
  tag: 'contacts',
  answers: { 200: blockStateSchema },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS],
  check: ({ body }) => void parsePhoneField(body.phone, 'phone'),
  owner: ({ body }) => fromPhone(body.from_phone),
  handle: async ({ body, number, session }) => {
    const phone = parsePhoneField(body.phone, 'phone');
    await session.updateBlock(phone, true);
    return ok({ from_phone: number.phone, phone, blocked: true });
  },
});

export const unblockContact = defineSessionOperation(
  {
    params: {
      type: 'object',
      required: ['phone'],
      properties: { phone: { type: 'string', description: 'The contact to unblock, E.164 (+ encoded as %2B or left as it is).' } },
    },
    query: fromPhoneQuery,
  },
  [],
)({
  method: 'DELETE',
  scope: 'send',
  path: '/blocklist/:phone',
  operationId: 'unblockContact',
  summary: 'Unblock a contact',
  description: 'from_phone unblocks phone. Unblocking a contact that is not blocked changes nothing.',
  tag: 'contacts',
  answers: { 200: blockStateSchema },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS],
  check: ({ params }) => void parsePhoneField(params.phone, 'phone'),
  owner: ({ query }) => fromPhone(query.from_phone),
  handle: async ({ params, number, session }) => {
    const phone = parsePhoneField(params.phone, 'phone');
    await session.updateBlock(phone, false);
    return ok({ from_phone: number.phone, phone, blocked: false });
  },
});

export const listBlocklist = defineSessionOperation(
  { query: fromPhoneQuery },
  [],
)({
  method: 'GET',
  scope: 'read',
  path: '/blocklist',
  operationId: 'listBlocklist',
  summary: 'List the contacts a number blocks',
  description:
    'As WhatsApp holds it, changes made on the phone included. A contact WhatsApp names only by LID has phone null until its phone is ' +
    'known.',
  tag: 'contacts',
  answers: {
    200: {
      type: 'object',
      required: ['from_phone', 'contacts'],
      properties: {
        from_phone: { type: 'string' },
        contacts: {
          type: 'array',
          items: {
            type: 'object',
            required: ['phone', 'lid'],
            properties: { phone: { type: ['string', 'null'] }, lid: { type: ['string', 'null'] } },
          },
        },
      },
    },
  },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS],
  owner: ({ query }) => fromPhone(query.from_phone),
  handle: async ({ number, session }) => {
    const contacts = await session.blocklist();
    return ok({ from_phone: number.phone, contacts: contacts.map((contact) => ({ phone: contact.phone, lid: contact.lid })) });
  },
});
