import { errorCatalogue, type ErrorCode } from '../domain/errors.ts';

/**
 * JSON schemas of the public API. They drive validation, the response serializers and the
 * OpenAPI document, so the docs cannot drift from what the server does.
 */
const envelopeProperties = {
  message: { type: 'string', description: 'What went wrong, for a person.' },
  details: {
    type: 'string',
    description: 'Additional detail, present when available: the field at fault ("to_phone", "media.url", "mentions[0]"), or the facts of `meta` in words.',
  },
  request_id: { type: 'string', description: 'The X-Request-Id of this response, which names its line in the gateway\'s log.' },
  meta: {
    type: 'object',
    description: 'Machine-readable facts about the error; each code has fixed keys (see the error catalogue in docs/api.md).',
    additionalProperties: { type: ['string', 'number', 'boolean', 'null', 'array'] },
  },
} as const;


const phoneField = {
  type: 'string',
  description: 'An international number with its country code: "+447700900123". Spaces, dashes, dots and parentheses are ignored.',
  examples: ['+447700900123'],
} as const;

const mediaRequestSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'A file to send, with `message` as its caption. Exactly one of `url` (fetched by the gateway, through the same address guard as webhooks), `id` (an upload from POST /media) and `data` (base64, within the body limit). The type and kind come from the bytes (docs/media.md).',
  properties: {
    url: { type: 'string', description: 'An http(s) URL the gateway fetches the file from.' },
    id: { type: 'string', description: 'A media_id of your account, from POST /media.' },
    data: { type: 'string', description: 'The file, base64 encoded.' },
    filename: { type: 'string', description: 'The name the recipient sees, for a document.' },
    mime_type: { type: 'string', description: 'What you believe the file is; refused if the bytes say otherwise.' },
    kind: { type: 'string', description: 'image, video, audio, voice, document or sticker: how to present it, when not the one its type suggests.' },
  },
} as const;

/** What a send and a simulated receive share: the sender, the text or file, and what it answers. */
const messageContentProperties = {
  from_phone: phoneField,
  message: { type: 'string', description: 'The text, up to the configured maximum (65,536 characters by default). Required without media; with media it is the caption, and may be empty or absent.' },
  media: mediaRequestSchema,
  reply_to: {
    type: 'string',
    description: 'Answer a message: the message_id of a message (sent or received) in the same chat (between from_phone and to_phone, or in to_group). WhatsApp shows it quoted above this one. Any other id is refused with invalid_reply_to.',
    examples: ['msg_01jd0k6x9g8p1b6m3v7t2q4w5e'],
  },
} as const;

const groupIdField = {
  type: 'string',
  description: 'A group\'s id as GET /groups gives it (WhatsApp\'s group JID).',
  examples: ['120363041234567890@g.us'],
} as const;

export const messageRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from_phone'],
  properties: {
    ...messageContentProperties,
    to_phone: { ...phoneField, description: `The recipient; exactly one of to_phone and to_group is given. ${phoneField.description}` },
    to_group: { ...groupIdField, description: 'A group from_phone is a member of, to send to instead of a phone; exactly one of to_phone and to_group is given.' },
    mentions: {
      type: 'array',
      maxItems: 256,
      items: { type: 'string' },
      description: 'With to_group: members to mention, by phone. Each must be a member of the group; write "@" and their digits in the text where the mention goes (docs/api.md, "Groups").',
      examples: [['+447700900123']],
    },
  },
} as const;

/** The sandbox's receive takes what a person may send besides text and files: a place or contact cards. */
export const sandboxReceiveRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from_phone', 'to_phone'],
  properties: {
    ...messageContentProperties,
    to_phone: { ...phoneField, description: 'Your sandbox number that receives the message.' },
    group_id: { ...groupIdField, description: 'Simulate a message written in this group, which to_phone and from_phone are both members of, rather than a direct one. from_phone must then be a phone outside the gateway or one of your own sandbox numbers (else 403 phone_not_owned).' },
    mentions: { type: 'array', maxItems: 256, items: { type: 'string' }, description: 'With group_id: the members the simulated message mentions, by phone.' },
    location: {
      type: 'object',
      additionalProperties: false,
      description: 'Simulate a shared place instead of a text: latitude and longitude in degrees, with an optional name and address.',
      required: ['latitude', 'longitude'],
      properties: { latitude: { type: 'number' }, longitude: { type: 'number' }, name: { type: 'string' }, address: { type: 'string' } },
    },
    contacts: {
      type: 'array',
      description: 'Simulate contact cards instead of a text: 1 to 10 of {name, phones}.',
      items: { type: 'object', additionalProperties: false, required: ['name', 'phones'], properties: { name: { type: 'string' }, phones: { type: 'array', items: { type: 'string' } } } },
    },
    simulate_failed_downloads: {
      type: 'integer',
      description:
        'With media: how many downloads of the file fail before one succeeds (0 to 10), to rehearse a file that arrives late. The message webhook then says the media is unavailable, and a message.media event follows once a retry stores it (docs/media.md).',
    },
  },
} as const;

export interface SandboxReceiveBody extends Omit<MessageRequestBody, 'to_group' | 'mentions'> {
  to_phone: string;
  group_id?: string;
  mentions?: string[];
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  contacts?: { name: string; phones: string[] }[];
  simulate_failed_downloads?: number;
}

/** What a message answers; null when it is no reply. */
export const replyToSchema = {
  type: ['object', 'null'],
  description: 'The message this one answers: message_id when that message is stored here (null otherwise), and WhatsApp\'s id for it always. Null when the message is no reply.',
  required: ['message_id', 'whatsapp_id'],
  properties: { message_id: { type: ['string', 'null'] }, whatsapp_id: { type: 'string' } },
} as const;

export const messageResponseFields = {
  message_id: { type: 'string', examples: ['msg_01jd0k6x9g8p1b6m3v7t2q4w5e'] },
  reply_to: replyToSchema,
  created_at: { type: 'string', format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' },
  to_phone: { type: ['string', 'null'], description: 'E.164: the recipient of a direct message, or our number for a received group message; null for a message we sent to a group.' },
  mentions: {
    type: 'array',
    items: { type: 'string' },
    description: 'Only on a group message: the members it mentions, by phone (by LID where WhatsApp gave no phone); empty when it mentions none.',
  },
  group: {
    type: ['object', 'null'],
    description: 'The group chat of a group message (its id, and its subject when the message was stored); null for a direct message.',
    required: ['id', 'subject'],
    properties: { id: { type: 'string' }, subject: { type: 'string' } },
  },
  message: { type: 'string', description: 'The text exactly as it was sent; the caption of a media message.' },
  media: {
    type: 'object',
    description: 'The file the message carries; absent for text.',
    required: ['id', 'kind', 'mime_type', 'size', 'sha256', 'filename', 'url'],
    properties: {
      id: { type: 'string' },
      kind: { type: 'string' },
      mime_type: { type: 'string' },
      size: { type: 'integer' },
      sha256: { type: 'string' },
      filename: { type: ['string', 'null'] },
      url: { type: 'string', description: 'Where a key of the account downloads it (GET /media/{id}).' },
    },
  },
} as const;

/** The answer of /send_message: our own number is always the sender. */
export const sentMessageResponseSchema = {
  type: 'object',
  required: ['message_id', 'created_at', 'from_phone', 'to_phone', 'group', 'message', 'reply_to', 'status'],
  properties: {
    ...messageResponseFields,
    from_phone: { type: 'string', description: 'E.164.' },
    status: { type: 'string', enum: ['sent'] },
  },
} as const;

/**
 * The send's optional Idempotency-Key header. Only its type is checked here, so that every
 * header passes the schema; its rules (1–255 printable ASCII) give their own error code.
 */
export const idempotencyKeyHeadersSchema = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      description:
        'Makes retries safe: the same key with the same body within 24 hours answers the first request\'s response, and sends nothing more. 1 to 255 printable ASCII characters, unique per message; shared by /send_message and /api/send_message.',
      examples: ['order-7731-reminder'],
    },
  },
} as const;

/** Present, as "true", only on an answer replayed for an Idempotency-Key. */
export const idempotentReplayedHeaderSchema = {
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description: 'The response is the stored answer of an earlier request with the same Idempotency-Key; nothing was sent again.',
  },
} as const;

/** A shared place or contact cards, as a message carries them. */
export const structuredFields = {
  location: {
    type: 'object',
    description: 'A shared place, for a location message.',
    properties: { latitude: { type: 'number' }, longitude: { type: 'number' }, name: { type: ['string', 'null'] }, address: { type: ['string', 'null'] }, url: { type: ['string', 'null'] } },
  },
  contacts: {
    type: 'array',
    description: 'Contact cards, for a contact message.',
    items: { type: 'object', properties: { name: { type: 'string' }, phones: { type: 'array', items: { type: 'string' } }, vcard: { type: ['string', 'null'] } } },
  },
} as const;

/** An inbound message: its sender may be known only by LID, and then from_phone is null. */
export const receivedMessageResponseSchema = {
  type: 'object',
  required: ['message_id', 'created_at', 'from_phone', 'from_lid', 'to_phone', 'group', 'message', 'reply_to', 'status'],
  properties: {
    ...messageResponseFields,
    from_phone: { type: ['string', 'null'], description: 'E.164; null when WhatsApp gave only the sender\'s LID.' },
    from_lid: { type: ['string', 'null'], description: 'The sender\'s LID ("<digits>@lid") when the message was LID-addressed; otherwise null.' },
    ...structuredFields,
    status: { type: 'string', enum: ['received'] },
  },
} as const;

/** The codes of the catalogue that answer with this status. */
export function codesWithStatus(status: number): ErrorCode[] {
  return (Object.keys(errorCatalogue) as ErrorCode[]).filter((code) => errorCatalogue[code].status === status);
}

/**
 * An operation's error responses, from the catalogue: each status lists its codes with their
 * meanings, and its schema allows exactly those codes, so the document cannot drift from them.
 */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => {
      const codes = codesWithStatus(status);
      const description = codes.map((code) => `\`${code}\`: ${errorCatalogue[code].meaning}`).join(' ');
      return [
        status,
        {
          description,
          type: 'object',
          required: ['error', 'message', 'request_id'],
          properties: { error: { type: 'string', enum: codes }, ...envelopeProperties },
        },
      ];
    }),
  );
}

export interface MessageRequestBody {
  from_phone: string;
  to_phone?: string;
  to_group?: string;
  mentions?: string[];
  message?: string;
  media?: { id?: string; data?: string; url?: string; filename?: string; mime_type?: string; kind?: string };
  reply_to?: string;
}
