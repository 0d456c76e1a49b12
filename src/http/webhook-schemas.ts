import type { OpenAPIV3_2 } from '@fastify/swagger';
import { mediaKinds } from '../domain/media.ts';
import { pauseReasons, resumeReasons } from '../domain/number-pauses.ts';
import { mediaFileProperties, structuredFields } from './message-content-schemas.ts';
import { ref } from './schema-refs.ts';

/**
 * The payload of every webhook event (docs/webhooks.md), as named shared schemas, and the
 * document's `webhooks` section that points at them. src/domain/webhooks.ts builds the payloads;
 * test/http/openapi.test.ts checks real deliveries against these schemas.
 */
const nullablePhone = (description: string) => ({ type: ['string', 'null'], description }) as const;
const timestamp = (description: string) => ({ type: 'string', format: 'date-time', description }) as const;
const nullableGroup = {
  anyOf: [ref('ChatGroup'), { type: 'null' }],
  description: 'The group chat it happened in; null for a direct chat.',
} as const;

/** Every payload starts with these: the event's type and the webhook receiving it. */
function eventProperties(event: string) {
  return {
    event: { type: 'string', const: event },
    webhook_id: { type: 'string', description: 'The webhook receiving this delivery.', examples: ['wh_01jd0k6x9g8p1b6m3v7t2q4w5e'] },
  } as const;
}

const webhookMediaComponent = {
  $id: 'WebhookMedia',
  description: 'A received file: stored (with a signed link that needs no key), or known only by its kind and why it could not be had.',
  oneOf: [
    {
      type: 'object',
      title: 'Stored',
      required: ['status', 'id', 'kind', 'mime_type', 'size', 'sha256', 'filename', 'url'],
      properties: {
        status: { type: 'string', const: 'available' },
        ...mediaFileProperties,
        url: { type: 'string', description: 'GET /media/{id}, with a key of the account; absolute when WAGW_PUBLIC_URL is set.' },
        signed_url: { type: 'string', description: 'Opens the file without a key until signed_url_expires_at.' },
        signed_url_expires_at: timestamp('When signed_url stops working.'),
      },
    },
    {
      type: 'object',
      title: 'Unavailable',
      required: ['status', 'kind', 'reason', 'will_retry'],
      properties: {
        status: { type: 'string', const: 'unavailable' },
        kind: { type: 'string', enum: mediaKinds },
        reason: {
          type: 'string',
          description: 'download_failed, download_timed_out, media_expired, or a media error code such as media_too_large.',
        },
        will_retry: { type: 'boolean', description: 'The gateway keeps trying; a message.media event follows.' },
      },
    },
  ],
} as const;

const messageIdentity = {
  message_id: { type: 'string' },
  created_at: timestamp('When the message arrived.'),
  from_phone: nullablePhone("The sender, E.164; null when WhatsApp gave only the sender's LID."),
  from_lid: nullablePhone("The sender's LID when the message was LID-addressed; otherwise null."),
  to_phone: nullablePhone('Your number, E.164.'),
  group: nullableGroup,
} as const;

const messageEventComponent = {
  $id: 'MessageEvent',
  type: 'object',
  description: 'A message arrived on one of your numbers. The flat fields, and the nested `data` for receivers written for that shape.',
  required: [
    'event',
    'webhook_id',
    'message_id',
    'created_at',
    'from_phone',
    'from_lid',
    'to_phone',
    'group',
    'message',
    'content_kind',
    'reply_to',
    'status',
    'data',
  ],
  properties: {
    ...eventProperties('message'),
    ...messageIdentity,
    mentions: { type: 'array', items: { type: 'string' }, description: 'Only on a group message: the members it mentions.' },
    message: { type: 'string', description: "The text exactly as received, or a media message's caption." },
    content_kind: {
      type: 'string',
      description:
        'text, a media kind, location, contact or poll; unavailable for a message WhatsApp announced whose content the phone never sent ' +
        "(an ad's first message, say; message is then empty and referral absent) (image_caption, video_caption and document_caption on " +
        'messages stored before files were kept).',
    },
    media: ref('WebhookMedia'),
    ...structuredFields,
    referral: ref('Referral'),
    reply_to: ref('ReplyTo'),
    status: { type: 'string', const: 'received' },
    data: {
      type: 'object',
      required: ['from', 'message', 'timestamp'],
      properties: {
        from: { type: 'string', description: 'from_phone, or from_lid when the phone is unknown; never null.' },
        message: { type: 'string' },
        timestamp: timestamp('created_at.'),
        media: ref('WebhookMedia'),
        ...structuredFields,
      },
    },
  },
} as const;

const messageMediaEventComponent = {
  $id: 'MessageMediaEvent',
  type: 'object',
  description: 'The file of a message whose download had failed was stored at last, or the gateway gave up on it.',
  required: ['event', 'webhook_id', 'message_id', 'created_at', 'from_phone', 'from_lid', 'to_phone', 'group', 'media'],
  properties: { ...eventProperties('message.media'), ...messageIdentity, media: ref('WebhookMedia') },
} as const;

const messageStatusEventComponent = {
  $id: 'MessageStatusEvent',
  type: 'object',
  description: 'A message you sent changed state. A status never moves backwards.',
  required: ['event', 'webhook_id', 'message_id', 'from_phone', 'to_phone', 'group', 'status', 'error_code', 'timestamp'],
  properties: {
    ...eventProperties('message.status'),
    message_id: { type: 'string' },
    from_phone: { type: 'string', description: 'Your number, E.164.' },
    to_phone: nullablePhone('The recipient; null for a message sent to a group.'),
    group: nullableGroup,
    status: {
      type: 'string',
      enum: ['sent', 'delivered', 'read', 'failed', 'unknown', 'cancelled', 'expired'],
      description:
        '`unknown`: WhatsApp may have taken the message but the gateway could not record it (error_code outcome_unknown, or interrupted ' +
        "after a crash); do not send it again blindly. `cancelled` and `expired`: a message waiting in its number's send queue was " +
        'cancelled, or reached its expires_at, and was never sent.',
    },
    error_code: {
      type: ['string', 'null'],
      description:
        "With failed: not_connected, interrupted or the engine's own code; with unknown: outcome_unknown or interrupted; null otherwise.",
    },
    timestamp: timestamp('When the gateway got the receipt.'),
  },
} as const;

const changeRequired = [
  'event',
  'webhook_id',
  'message_id',
  'whatsapp_id',
  'phone',
  'group',
  'by_phone',
  'by_lid',
  'from_me',
  'timestamp',
] as const;
function changeProperties(event: string) {
  return {
    ...eventProperties(event),
    message_id: { type: ['string', 'null'], description: 'The message acted on when it is stored here; null otherwise.' },
    whatsapp_id: { type: 'string', description: "WhatsApp's id of that message." },
    phone: { type: 'string', description: 'Your number, whose chat it is.' },
    group: nullableGroup,
    by_phone: nullablePhone('Who acted, by phone.'),
    by_lid: nullablePhone('Who acted, by LID.'),
    from_me: { type: 'boolean', description: 'Made by your number itself, on its phone or another linked device.' },
    timestamp: timestamp('When it happened.'),
  } as const;
}

const messageReactionEventComponent = {
  $id: 'MessageReactionEvent',
  type: 'object',
  description: 'Someone reacted to a message in a chat of your numbers, or took the reaction away.',
  required: [...changeRequired, 'emoji', 'removed'],
  properties: {
    ...changeProperties('message.reaction'),
    emoji: { type: 'string', description: 'The emoji; empty when removed.' },
    removed: { type: 'boolean' },
  },
} as const;

const messageEditedEventComponent = {
  $id: 'MessageEditedEvent',
  type: 'object',
  description: 'A message in a chat of your numbers was edited.',
  required: [...changeRequired, 'message', 'previous_message'],
  properties: {
    ...changeProperties('message.edited'),
    message: { type: 'string', description: 'The new text.' },
    previous_message: { type: ['string', 'null'], description: 'The text it replaced; null when the message is not stored here.' },
  },
} as const;

const messageRevokedEventComponent = {
  $id: 'MessageRevokedEvent',
  type: 'object',
  description: 'A message in a chat of your numbers was deleted for everyone.',
  required: changeRequired,
  properties: changeProperties('message.revoked'),
} as const;

const sessionStatusEventComponent = {
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

const groupUpdatedEventComponent = {
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

const numberPausedEventComponent = {
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

const numberResumedEventComponent = {
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

const numberCappedEventComponent = {
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

const contactIdentityEventComponent = {
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

const callEventComponent = {
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

const presenceUpdateEventComponent = {
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

const pollVoteEventComponent = {
  $id: 'PollVoteEvent',
  type: 'object',
  description:
    'Someone voted on a poll in a chat of one of your numbers (a poll you sent or one you received): their whole current selection, ' +
    'which replaces the one before (empty when they took their vote back), and the totals since.',
  required: [
    'event',
    'webhook_id',
    'message_id',
    'whatsapp_id',
    'phone',
    'group',
    'voter_phone',
    'voter_lid',
    'options',
    'poll',
    'timestamp',
  ],
  properties: {
    ...eventProperties('poll.vote'),
    message_id: { type: 'string', description: "The poll's message." },
    whatsapp_id: { type: 'string', description: "WhatsApp's id of the poll." },
    phone: { type: 'string', description: 'Your number.' },
    group: nullableGroup,
    voter_phone: nullablePhone('The voter, E.164, when WhatsApp says.'),
    voter_lid: nullablePhone("The voter's LID, when WhatsApp named one."),
    options: {
      type: 'array',
      items: { type: 'string' },
      description: 'The options the voter has chosen now; empty when they took their vote back.',
    },
    poll: ref('Poll'),
    timestamp: timestamp('When the vote was cast.'),
  },
} as const;

const testEventComponent = {
  $id: 'TestEvent',
  type: 'object',
  description: 'An operator sent a test event (wagw webhook test ID).',
  required: ['event', 'webhook_id', 'message', 'timestamp'],
  properties: { ...eventProperties('test'), message: { type: 'string' }, timestamp: timestamp('When it was sent.') },
} as const;

/** Each event's name, the component of its payload, and when it is sent. */
const events = [
  ['message', 'MessageEvent', 'A message arrived on one of your numbers.'],
  ['message.media', 'MessageMediaEvent', 'The late file of a message: stored at last, or given up on.'],
  ['message.status', 'MessageStatusEvent', 'A message you sent changed state.'],
  ['message.reaction', 'MessageReactionEvent', 'A reaction was set or taken away.'],
  ['message.edited', 'MessageEditedEvent', 'A message was edited.'],
  ['message.revoked', 'MessageRevokedEvent', 'A message was deleted for everyone.'],
  ['session.status', 'SessionStatusEvent', "A number's WhatsApp session changed state."],
  ['group.updated', 'GroupUpdatedEvent', 'A group of your numbers changed.'],
  ['number.paused', 'NumberPausedEvent', 'A number of yours holds its sends.'],
  ['number.resumed', 'NumberResumedEvent', 'A paused number of yours sends again.'],
  ['number.capped', 'NumberCappedEvent', 'WhatsApp capped the new chats a number of yours may start.'],
  ['contact.identity', 'ContactIdentityEvent', 'A LID got its phone.'],
  ['call', 'CallEvent', 'A call to one of your numbers rang, or ended.'],
  ['presence.update', 'PresenceUpdateEvent', 'A contact your number subscribed to changed presence.'],
  ['poll.vote', 'PollVoteEvent', 'Someone voted on a poll, changed or took back their vote.'],
  ['test', 'TestEvent', 'An operator sent a test event.'],
] as const;

export const webhookSchemaComponents = [
  webhookMediaComponent,
  messageEventComponent,
  messageMediaEventComponent,
  messageStatusEventComponent,
  messageReactionEventComponent,
  messageEditedEventComponent,
  messageRevokedEventComponent,
  sessionStatusEventComponent,
  groupUpdatedEventComponent,
  numberPausedEventComponent,
  numberResumedEventComponent,
  numberCappedEventComponent,
  contactIdentityEventComponent,
  callEventComponent,
  presenceUpdateEventComponent,
  pollVoteEventComponent,
  testEventComponent,
] as const;

const signatureHeaders = [
  ['webhook-id', "The delivery's id: the same on every retry of it, so that a receiver can drop repeats."],
  ['webhook-timestamp', 'Unix seconds when this attempt was signed.'],
  [
    'webhook-signature',
    'Standard Webhooks signatures: "v1,<base64 HMAC-SHA256>" of "<webhook-id>.<webhook-timestamp>.<body>" under the webhook\'s secret, ' +
      'space-separated while a secret rotates.',
  ],
] as const;

/** The document's OpenAPI 3.1 `webhooks`: what the gateway POSTs to a receiver, per event. */
type Webhooks = NonNullable<OpenAPIV3_2.Document['webhooks']>;

export function webhooksSection(): Webhooks {
  return Object.fromEntries(
    events.map(([event, component, summary]) => [
      event,
      {
        post: {
          operationId: `on${component}`,
          summary,
          description:
            `Delivered to webhooks subscribed to ${event === 'message.media' ? 'message' : event}; signed as Standard ` +
            `Webhooks (docs/webhooks.md). Answer 2xx within the timeout, or the delivery is retried.`,
          tags: ['webhooks'],
          security: [{ webhookSignature: [] }],
          parameters: signatureHeaders.map(([name, description]) => ({
            name,
            in: 'header' as const,
            required: true,
            description,
            schema: { type: 'string' as const },
          })),
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${component}` } } } },
          responses: { '2XX': { description: 'Received; any 2xx ends the delivery.' } },
        },
      },
    ]),
  );
}
