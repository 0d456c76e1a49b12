import { parsePhoneField } from '../message-input.ts';
import { KEYED_ERRORS, REQUEST_ERRORS, SESSION_ERRORS } from './error-responses.ts';
import { fromPhone } from './groups/group-number.ts';
import { defineSessionOperation, ok } from './operation.ts';

export const subscribePresence = defineSessionOperation(
  {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['from_phone', 'to_phone'],
      properties: {
        from_phone: { type: 'string', description: 'One of your numbers.' },
        to_phone: { type: 'string', description: 'The contact whose presence to hear of.' },
      },
    },
  },
  ['numbers', 'presence'],
)({
  method: 'POST',
  scope: 'send',
  path: '/presence/subscribe',
  operationId: 'subscribePresence',
  summary: 'Hear when a contact comes online, goes away, or types',
  description:
    "Asks WhatsApp to tell from_phone of to_phone's presence: `presence.update` webhooks then hear available, unavailable (with " +
    'last_seen when the contact shares it), composing, recording and paused. WhatsApp keeps a subscription only for the connection ' +
    'that made it; the session renews its latest 256 each time it reconnects. After the gateway restarts or the number moves to ' +
    'another node, subscribe again.',
  tag: 'contacts',
  answers: {
    200: {
      type: 'object',
      required: ['from_phone', 'to_phone', 'subscribed'],
      properties: { from_phone: { type: 'string' }, to_phone: { type: 'string' }, subscribed: { type: 'boolean', const: true } },
    },
  },
  errors: [...KEYED_ERRORS, ...REQUEST_ERRORS, ...SESSION_ERRORS],
  check: ({ body }) => void parsePhoneField(body.to_phone, 'to_phone'),
  owner: ({ body }) => fromPhone(body.from_phone),
  handle: async ({ body, number }, services) => {
    const toPhone = parsePhoneField(body.to_phone, 'to_phone');
    await services.presence.subscribe(number, toPhone);
    return ok({ from_phone: number.phone, to_phone: toPhone, subscribed: true });
  },
});
