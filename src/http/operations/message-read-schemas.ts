import { mediaKinds } from '../../domain/media.ts';
import { mediaFileProperties, structuredFields } from '../message-content-schemas.ts';
import { messageResponseFields } from '../message-schemas.ts';
import { ref } from '../schema-refs.ts';
import { pageOffsetParameter } from '../schemas.ts';

const statuses = ['queued', 'sent', 'delivered', 'read', 'failed', 'unknown', 'received', 'cancelled', 'expired'] as const;

/** A stored file, described; once retention removed its bytes it is `expired` and has no url. */
const storedMessageMediaComponent = {
  $id: 'StoredMessageMedia',
  type: 'object',
  description:
    'The file the message carries; absent for text. Once retention has removed the bytes, status is "expired" and there is no url.',
  required: ['status', 'id', 'kind', 'mime_type', 'size', 'sha256', 'filename'],
  properties: {
    status: { type: 'string', enum: ['available', 'expired'] },
    ...mediaFileProperties,
    url: { type: 'string', description: 'Where a key of the account downloads it (GET /media/{id}); absent once expired.' },
  },
} as const;

/** A stored message, sent or received, as GET /messages lists it: the `Message` component. */
const messageComponent = {
  $id: 'Message',
  type: 'object',
  required: [
    'message_id',
    'created_at',
    'direction',
    'from_phone',
    'from_lid',
    'to_phone',
    'group',
    'message',
    'content_kind',
    'reply_to',
    'status',
    'status_history',
    'edited_at',
    'revoked_at',
  ],
  properties: {
    ...messageResponseFields,
    direction: { type: 'string', enum: ['outbound', 'inbound'] },
    from_phone: {
      type: ['string', 'null'],
      description: 'E.164: our number for an outbound message, the sender for an inbound one (null when WhatsApp gave only a LID).',
    },
    from_lid: { type: ['string', 'null'], description: "An inbound sender's LID when the message was LID-addressed; otherwise null." },
    content_kind: { type: 'string', enum: ['text', ...mediaKinds, 'location', 'contact', 'poll', 'unavailable'] },
    media: ref('StoredMessageMedia'),
    ...structuredFields,
    referral: ref('Referral'),
    status: {
      type: 'string',
      enum: statuses,
      description:
        '`unknown`: the gateway could not record whether WhatsApp took the send (see error_code); a later receipt still moves it on.',
    },
    status_history: {
      type: 'array',
      description:
        'Each status the message reached, with its time, oldest first: queued, sent, delivered, read or failed for a sent message (a ' +
        'read receipt may come without a delivered one), or queued then cancelled or expired for one that left its queue unsent; ' +
        'received, then read once you marked it read, for a received one.',
      items: {
        type: 'object',
        required: ['status', 'at'],
        properties: { status: { type: 'string', enum: statuses }, at: { type: 'string', format: 'date-time' } },
      },
    },
    edited_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'The latest edit; null if never edited. message is the text as edited.',
    },
    revoked_at: { type: ['string', 'null'], format: 'date-time', description: 'When it was deleted for everyone; message is then empty.' },
  },
} as const;

/** One message with what happened to it since: reactions now on it, and the texts it had before. */
const messageDetailComponent = {
  $id: 'MessageDetail',
  type: 'object',
  required: [...messageComponent.required, 'reactions', 'revisions'],
  properties: {
    ...messageComponent.properties,
    reactions: {
      type: 'array',
      description: 'The reactions on it now, one per person (ours included), oldest first.',
      items: {
        type: 'object',
        required: ['emoji', 'by', 'from_me', 'reacted_at'],
        properties: {
          emoji: { type: 'string' },
          by: {
            type: 'string',
            description: 'The phone (E.164) of who reacted, or their LID when WhatsApp gave no phone; our number for ours.',
          },
          from_me: { type: 'boolean', description: "Ours: through the API, or from the number's own phone." },
          reacted_at: { type: 'string', format: 'date-time' },
        },
      },
    },
    revisions: {
      type: 'array',
      description: "The message's history, oldest first: each edit and the revocation, with the text it replaced.",
      items: {
        type: 'object',
        required: ['kind', 'previous_message', 'from_me', 'at'],
        properties: {
          kind: { type: 'string', enum: ['edited', 'revoked'] },
          previous_message: { type: 'string', description: 'The text until this change.' },
          from_me: { type: 'boolean', description: 'Made by us (through the API or our phone) rather than the other side.' },
          at: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
} as const;

export const storedMessageSchema = ref('Message');
export const messageDetailSchema = ref('MessageDetail');
export const messageReadSchemaComponents = [storedMessageMediaComponent, messageComponent, messageDetailComponent] as const;

export const messagePageSchema = {
  type: 'object',
  required: ['messages', 'next_cursor'],
  properties: {
    messages: { type: 'array', items: ref('Message') },
    next_cursor: { type: ['string', 'null'], description: 'Pass as cursor for the next (older) page; null on the last page.' },
  },
} as const;

export const listMessagesQuerySchema = {
  type: 'object',
  properties: {
    phone: { type: 'string', description: 'One of your numbers (E.164): only its messages.' },
    peer: { type: 'string', description: 'The other side (E.164): the recipient of a sent message, the sender of a received one.' },
    with: {
      type: 'string',
      description:
        'The person on the other side, by phone (E.164) or by LID ("<digits>@lid"): one conversation, whether their messages came by ' +
        'phone or by LID (docs/identity.md). Not with peer.',
    },
    group_id: {
      type: 'string',
      description: 'Only the messages of this group chat (a group id as GET /groups gives it), sent and received.',
    },
    direction: { type: 'string', enum: ['outbound', 'inbound'], description: 'Only sent (outbound) or received (inbound) messages.' },
    status: { type: 'string', enum: statuses, description: 'Only the messages whose latest status is this one.' },
    since: { type: 'string', format: 'date-time', description: 'Only messages created at or after this RFC 3339 time (with its zone).' },
    until: { type: 'string', format: 'date-time', description: 'Only messages created before this RFC 3339 time (with its zone).' },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 50,
      description: 'How many messages a page holds: 1 to 100; 50 by default.',
    },
    cursor: { type: 'string', description: 'next_cursor of the previous page.' },
    offset: pageOffsetParameter,
  },
  additionalProperties: false,
} as const;
