// The payloads of the webhook events about messages (docs/webhooks.md): a message arrived, its late
// file, its status, a reaction, an edit, a revocation, and a poll's vote.
import { mediaKinds } from '../domain/media.ts';
import { mediaFileProperties, structuredFields } from './message-content-schemas.ts';
import { ref } from './schema-refs.ts';
import { eventProperties, nullableGroup, nullablePhone, timestamp } from './webhook-event-envelope.ts';

export const webhookMediaComponent = {
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

export const messageEventComponent = {
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

export const messageMediaEventComponent = {
  $id: 'MessageMediaEvent',
  type: 'object',
  description: 'The file of a message whose download had failed was stored at last, or the gateway gave up on it.',
  required: ['event', 'webhook_id', 'message_id', 'created_at', 'from_phone', 'from_lid', 'to_phone', 'group', 'media'],
  properties: { ...eventProperties('message.media'), ...messageIdentity, media: ref('WebhookMedia') },
} as const;

export const messageStatusEventComponent = {
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

export const messageReactionEventComponent = {
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

export const messageEditedEventComponent = {
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

export const messageRevokedEventComponent = {
  $id: 'MessageRevokedEvent',
  type: 'object',
  description: 'A message in a chat of your numbers was deleted for everyone.',
  required: changeRequired,
  properties: changeProperties('message.revoked'),
} as const;

export const pollVoteEventComponent = {
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
