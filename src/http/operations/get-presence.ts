import { CONTACT_ERRORS, contactParamsSchema, oneContactQuerySchema } from './contacts/contact-requests.ts';
import { groupNumber } from './groups/group-number.ts';
import { defineOperation, ok } from './operation.ts';

const presences = ['available', 'unavailable', 'composing', 'recording', 'paused'] as const;

/** What one number last heard of a contact's presence: the answer's component. */
const heardPresenceSchema = {
  type: 'object',
  required: ['from_phone', 'phone', 'lid', 'presence', 'group', 'last_seen', 'heard_at'],
  properties: {
    from_phone: { type: 'string', description: 'The number that heard it (E.164).' },
    phone: { type: ['string', 'null'], description: "The contact's phone (E.164); null while the number knows them only by LID." },
    lid: { type: ['string', 'null'], description: 'The contact\'s LID ("<digits>@lid"); null while unknown.' },
    presence: {
      type: ['string', 'null'],
      enum: [...presences, null],
      description:
        'The latest presence WhatsApp reported to from_phone: online (available) or not (unavailable), and in a chat typing ' +
        '(composing), recording a voice note (recording), or neither any more (paused). Null when nothing was heard: subscribe with ' +
        'POST /presence/subscribe first.',
    },
    group: {
      anyOf: [{ type: 'object', required: ['id'], properties: { id: { type: 'string' } } }, { type: 'null' }],
      description: 'The group chat they were typing or recording in; null for their chat with from_phone, or no chat.',
    },
    last_seen: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'The last seen the contact shares, as last reported (kept across reports without one); null when never shared.',
    },
    heard_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When WhatsApp reported it. A typing state is shown by WhatsApp for about 25 seconds unless renewed: judge it by this.',
    },
  },
} as const;

export const getPresence = defineOperation({ params: contactParamsSchema, query: oneContactQuerySchema }, ['numbers', 'presence'])({
  method: 'GET',
  scope: 'read',
  path: '/presence/:phone_or_lid',
  operationId: 'getPresence',
  summary: "Read what a number last heard of a contact's presence",
  description:
    'The latest presence.update from_phone heard of the contact (after POST /presence/subscribe), read back: online or not, typing or ' +
    'recording, their last seen, and when it was heard. Named by phone (E.164 or a chat id such as 447700900123@c.us) or by LID; ' +
    'either finds what was heard under the other once the number knows both. Stored, so it is read from any node and survives ' +
    'restarts; it is what WhatsApp last said, not a live look.',
  tag: 'contacts',
  answers: { 200: heardPresenceSchema },
  errors: CONTACT_ERRORS,
  handle: async ({ scope, params, query }, services) => {
    const number = await groupNumber(services, scope, query.from_phone);
    const { phone, lid, heard } = await services.presence.heard(number, params.phone_or_lid);
    return ok({
      from_phone: number.phone,
      phone,
      lid,
      presence: heard?.presence ?? null,
      group: heard?.groupId == null ? null : { id: heard.groupId },
      last_seen: heard?.lastSeen?.toISOString() ?? null,
      heard_at: heard?.heardAt.toISOString() ?? null,
    });
  },
});
