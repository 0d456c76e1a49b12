// The payloads of the webhook events about numbers and what they hear besides messages
// (docs/webhooks.md): the session's status, pauses and caps, groups, identities, calls, presences,
// and the operator's test event.
import { pauseReasons, resumeReasons } from '../domain/number-pauses.ts';
import { ref } from './schema-refs.ts';
import { eventProperties, nullablePhone, timestamp } from './webhook-event-envelope.ts';

export const sessionStatusEventComponent = {
  $id: 'SessionStatusEvent',
  type: 'object',
  description: "A number's WhatsApp session changed state.",
  required: ['event', 'webhook_id', 'phone', 'status', 'reason', 'timestamp'],
  properties: {
    ...eventProperties('session.status'),
    phone: { type: 'string' },
    status: { type: 'string', enum: ['connected', 'connecting', 'disconnected', 'logged_out', 'link_expired', 'conflict', 'failed'] },
    reason: { type: ['string', 'null'] },
    timestamp: timestamp('When it changed.'),
  },
} as const;

export const groupUpdatedEventComponent = {
  $id: 'GroupUpdatedEvent',
  type: 'object',
  description: 'Something changed in a group one of your numbers is in.',
  required: ['event', 'webhook_id', 'phone', 'group', 'change', 'participants', 'number_affected', 'by_phone', 'by_lid', 'timestamp'],
  properties: {
    ...eventProperties('group.updated'),
    phone: { type: 'string', description: 'Your number in the group.' },
    group: ref('ChatGroup'),
    change: { type: 'string', enum: ['added', 'joined', 'removed', 'left', 'promoted', 'demoted', 'subject', 'description'] },
    participants: {
      type: 'array',
      description: 'Who the change is about; empty for subject and description.',
      items: {
        type: 'object',
        required: ['phone', 'lid'],
        properties: { phone: { type: ['string', 'null'] }, lid: { type: ['string', 'null'] } },
      },
    },
    subject: { type: ['string', 'null'], description: 'With change "subject": the new subject.' },
    description: { type: ['string', 'null'], description: 'With change "description": the new description, null when cleared.' },
    number_affected: { type: 'boolean', description: 'Your number is among participants.' },
    by_phone: nullablePhone('Who made the change, when WhatsApp says.'),
    by_lid: nullablePhone('Who made the change, by LID, when WhatsApp says.'),
    timestamp: timestamp('When it changed.'),
  },
} as const;

export const numberPausedEventComponent = {
  $id: 'NumberPausedEvent',
  type: 'object',
  description:
    'One of your numbers holds its sends (docs/number-pauses.md): sends from it are refused with 503 number_paused until it resumes.',
  required: ['event', 'webhook_id', 'number', 'reason', 'since', 'until', 'detail'],
  properties: {
    ...eventProperties('number.paused'),
    number: { type: 'string', description: 'The paused number (E.164).' },
    reason: {
      type: 'string',
      enum: pauseReasons,
      description:
        "restricted: WhatsApp answered 463; reachout_timelock: WhatsApp's time lock on reaching out to new chats; rate_limited: " +
        'rate-overlimit or 429; logged_out: the phone ended the session; manual: POST /numbers/{id}/pause.',
    },
    since: timestamp('When it paused.'),
    until: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When it resumes by itself; null when that is not known (resume it by hand, or link it again).',
    },
    detail: { type: ['string', 'null'], description: 'What WhatsApp or the operator said, when there is more to say.' },
  },
} as const;

export const numberResumedEventComponent = {
  $id: 'NumberResumedEvent',
  type: 'object',
  description: 'A paused number of yours sends again.',
  required: ['event', 'webhook_id', 'number', 'reason', 'at'],
  properties: {
    ...eventProperties('number.resumed'),
    number: { type: 'string', description: 'The number (E.164).' },
    reason: {
      type: 'string',
      enum: resumeReasons,
      description:
        'lifted: its lift time came, or WhatsApp lifted it; manual: POST /numbers/{id}/resume, the dashboard or the CLI; relinked: a ' +
        'logged-out number was linked again.',
    },
    at: timestamp('When it resumed.'),
  },
} as const;

export const numberCappedEventComponent = {
  $id: 'NumberCappedEvent',
  type: 'object',
  description:
    'WhatsApp capped the new chats one of your numbers may start (its 475, or its quota said so; docs/send-governor.md). Messages to ' +
    'people the number never exchanged a message with wait in its queue (wait_reason new_chat_cap) until `until`; replies to people ' +
    'who wrote to it still go.',
  required: ['event', 'webhook_id', 'number', 'since', 'until', 'total', 'used', 'cycle_ends_at', 'detail'],
  properties: {
    ...eventProperties('number.capped'),
    number: { type: 'string', description: 'The capped number (E.164).' },
    since: timestamp('When the cap was met.'),
    until: {
      type: ['string', 'null'],
      format: 'date-time',
      description: "When first contacts may go again: the cycle's end WhatsApp named, else an hour on, when the quota is read again.",
    },
    total: { type: ['integer', 'null'], description: "WhatsApp's quota of new chats for the cycle, when it said." },
    used: { type: ['integer', 'null'], description: 'How much of it was used, when WhatsApp said.' },
    cycle_ends_at: { type: ['string', 'null'], format: 'date-time', description: "The cycle's end, when WhatsApp said." },
    detail: { type: 'string', description: 'What met the cap.' },
  },
} as const;

export const contactIdentityEventComponent = {
  $id: 'ContactIdentityEvent',
  type: 'object',
  description:
    'A person one of your numbers knew only by LID now has a phone (or a different one). Messages from the LID show the phone from now on.',
  required: ['event', 'webhook_id', 'phone', 'contact_phone', 'contact_lid', 'source', 'timestamp'],
  properties: {
    ...eventProperties('contact.identity'),
    phone: { type: 'string', description: 'Your number that knows the person.' },
    contact_phone: { type: 'string', description: "The person's phone (E.164)." },
    contact_lid: { type: 'string', description: 'The person\'s LID ("<digits>@lid").' },
    source: {
      type: 'string',
      enum: ['message', 'mapping', 'group', 'check', 'sandbox'],
      description:
        "What told the gateway: a message that carried both, WhatsApp's LID mapping, a group's members, a number check, or the sandbox.",
    },
    timestamp: timestamp('When the gateway learned it.'),
  },
} as const;

const groupById = (description: string) =>
  ({
    anyOf: [
      { type: 'object', required: ['id'], properties: { id: { type: 'string', description: "WhatsApp's id of the group (…@g.us)." } } },
      { type: 'null' },
    ],
    description,
  }) as const;

export const callEventComponent = {
  $id: 'CallEvent',
  type: 'object',
  description: 'A call to one of your numbers rang, or what became of it (docs/webhooks.md, "Calls").',
  required: [
    'event',
    'webhook_id',
    'call_id',
    'phone',
    'from_phone',
    'from_lid',
    'group',
    'video',
    'status',
    'rejected_by_gateway',
    'timestamp',
  ],
  properties: {
    ...eventProperties('call'),
    call_id: { type: 'string', description: "WhatsApp's id of the call: the same on every event of one call." },
    phone: { type: 'string', description: 'Your number that was called.' },
    from_phone: nullablePhone("The caller, E.164; null when WhatsApp gave only the caller's LID."),
    from_lid: nullablePhone("The caller's LID when WhatsApp named the caller by one; otherwise null."),
    group: groupById('The group the call was made in; null for a call to the number alone.'),
    video: { type: 'boolean', description: 'A video call rather than a voice call.' },
    status: {
      type: 'string',
      enum: ['offered', 'missed', 'accepted', 'rejected', 'ended'],
      description:
        "offered: it rings. missed: it rang out unanswered. accepted or rejected: on one of the number's devices, or rejected by the " +
        'gateway (rejected_by_gateway). ended: the caller hung up.',
    },
    rejected_by_gateway: {
      type: 'boolean',
      description: "The gateway rejected it, as the number's reject_calls setting asks (PATCH /numbers/{id}).",
    },
    timestamp: timestamp('When it happened.'),
  },
} as const;

export const presenceUpdateEventComponent = {
  $id: 'PresenceUpdateEvent',
  type: 'object',
  description: 'A contact your number subscribed to (POST /presence/subscribe) came online, went offline, or is typing or recording.',
  required: ['event', 'webhook_id', 'phone', 'contact_phone', 'contact_lid', 'group', 'presence', 'last_seen', 'timestamp'],
  properties: {
    ...eventProperties('presence.update'),
    phone: { type: 'string', description: 'Your number, which subscribed.' },
    contact_phone: nullablePhone('The contact, E.164; null when WhatsApp gave only its LID.'),
    contact_lid: nullablePhone("The contact's LID when WhatsApp named it by one; otherwise null."),
    group: groupById('The group chat the contact is typing or recording in; null otherwise.'),
    presence: { type: 'string', enum: ['available', 'unavailable', 'composing', 'recording', 'paused'] },
    last_seen: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'When the contact was last online, when WhatsApp says (only with unavailable, and only if the contact shares it).',
    },
    timestamp: timestamp('When the gateway heard it.'),
  },
} as const;

export const testEventComponent = {
  $id: 'TestEvent',
  type: 'object',
  description: 'An operator sent a test event (wagw webhook test ID).',
  required: ['event', 'webhook_id', 'message', 'timestamp'],
  properties: { ...eventProperties('test'), message: { type: 'string' }, timestamp: timestamp('When it was sent.') },
} as const;
