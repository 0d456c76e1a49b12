import { WAIT_REASONS } from '../messaging/governor/decision.ts';
import {
  contactComponent,
  contactRequestComponent,
  interactiveReplyComponent,
  interactiveRequestComponent,
  linkPreviewComponent,
  linkPreviewRequestComponent,
  locationComponent,
  locationRequestComponent,
  mediaRequestComponent,
  messageMediaComponent,
  pollComponent,
  pollRequestComponent,
  structuredFields,
  templateRequestComponent,
} from './message-content-schemas.ts';
import { ref } from './schema-refs.ts';

/**
 * The message models of the public API (a message sent, queued, unsent or received, and the
 * requests that send or simulate one), as named shared schemas; what a message carries is in
 * message-content-schemas.ts.
 */

const phoneField = {
  type: 'string',
  description:
    'An international number with its country code: "+447700900123". Spaces, dashes, dots and parentheses are ignored. WhatsApp\'s ' +
    'chat id of the person is taken too: "447700900123@c.us" or "447700900123@s.whatsapp.net".',
  examples: ['+447700900123'],
} as const;

const groupIdField = {
  type: 'string',
  description: "A group's id as GET /groups gives it (WhatsApp's group JID).",
  examples: ['120363041234567890@g.us'],
} as const;

const timestamp = { type: 'string', format: 'date-time', description: 'ISO 8601 UTC with milliseconds.' } as const;

/** What a send and a simulated receive share: the sender, the text or file, and what it answers. */
const messageContentProperties = {
  from_phone: phoneField,
  message: {
    type: 'string',
    description:
      'The text, up to the configured maximum (65,536 characters by default). Required without media, location, contacts and poll; with ' +
      'media it is the caption, and may be empty or absent; with a location, its comment; with contacts or a poll it is refused (they ' +
      'carry their own text).',
  },
  media: ref('MediaRequest'),
  reply_to: {
    type: 'string',
    description:
      'Answer a message: the message_id of a message (sent or received) in the same chat (between from_phone and to_phone, or in ' +
      'to_group). WhatsApp shows it quoted above this one. Any other id is refused with invalid_reply_to.',
    examples: ['msg_01jd0k6x9g8p1b6m3v7t2q4w5e'],
  },
  location: ref('LocationRequest'),
  contacts: { type: 'array', description: '1 to 10 contact cards, instead of a text.', items: ref('ContactRequest') },
  poll: ref('PollRequest'),
  view_once: {
    type: 'boolean',
    description: 'With media of kind image, video or voice: the recipient can open it once. Refused with any other content.',
  },
} as const;

const sendMessageRequestComponent = {
  $id: 'SendMessageRequest',
  type: 'object',
  additionalProperties: false,
  required: ['from_phone'],
  // Each branch requires its field and forbids the other's, which a typed client reads as
  // "exactly one"; the validation error names to_phone for either fault (plugins/validation-errors.ts).
  oneOf: [
    { title: 'To a phone', required: ['to_phone'], properties: { to_phone: { type: 'string' }, to_group: false } },
    { title: 'To a group', required: ['to_group'], properties: { to_group: { type: 'string' }, to_phone: false } },
  ],
  properties: {
    ...messageContentProperties,
    to_phone: {
      ...phoneField,
      description:
        `The recipient; exactly one of to_phone and to_group is given. ${phoneField.description} A person known by LID may be ` +
        `named by it ("<digits>@lid"): the message goes to the phone from_phone's map knows for them (docs/identity.md), and a LID it ` +
        `does not know is 404 contact_not_found. A group's id ("…@g.us") is taken as to_group.`,
    },
    to_group: {
      ...groupIdField,
      description: 'A group from_phone is a member of, to send to instead of a phone; exactly one of to_phone and to_group is given.',
    },
    mentions: {
      type: 'array',
      maxItems: 256,
      items: { type: 'string' },
      description:
        'With to_group: members to mention, by phone. Each must be a member of the group; write "@" and their digits in the text where ' +
        'the mention goes (docs/api.md, "Groups").',
      examples: [['+447700900123']],
    },
    template: ref('TemplateRequest'),
    interactive: ref('InteractiveRequest'),
    link_preview: {
      description:
        'With a text holding a link: `true` has the gateway fetch the page (through the same address guard as media.url) and show its ' +
        'title, description and image, if the account turned link_previews on (else 403 link_previews_disabled); an object gives the ' +
        'preview itself. A page that cannot be fetched sends the text without a preview. Off by default.',
      anyOf: [{ type: 'boolean' }, ref('LinkPreviewRequest')],
    },
    send_at: {
      type: 'string',
      maxLength: 64,
      description:
        'Send no earlier than this time (ISO 8601 with a zone offset, at most WAGW_SEND_AT_HORIZON_DAYS ahead, 30 by default): the ' +
        "message waits in the number's send queue and is answered 202 `queued` (docs/send-governor.md).",
      examples: ['2026-06-01T09:00:00Z'],
    },
    expires_at: {
      type: 'string',
      maxLength: 64,
      description:
        "If the message is still waiting in the number's send queue at this time, it becomes `expired` and is never sent (its unit of " +
        'quota is given back). By default WAGW_SEND_EXPIRY_HOURS (24) after it was queued, or after send_at.',
    },
    wait: {
      type: 'boolean',
      description:
        'When the send governor queues the message, answer only once it has left (200 `sent`), however long that takes; `Prefer: wait=N` ' +
        'waits at most N seconds and then answers 202.',
    },
  },
} as const;

/** The sandbox's receive takes what a person may send besides text and files: a place or contact cards. */
const sandboxReceiveRequestComponent = {
  $id: 'SandboxReceiveRequest',
  type: 'object',
  additionalProperties: false,
  required: ['from_phone', 'to_phone'],
  properties: {
    ...messageContentProperties,
    to_phone: { ...phoneField, description: 'Your sandbox number that receives the message.' },
    group_id: {
      ...groupIdField,
      description:
        'Simulate a message written in this group, which to_phone and from_phone are both members of, rather than a direct one. ' +
        'from_phone must then be a phone outside the gateway or one of your own sandbox numbers (else 403 phone_not_owned).',
    },
    mentions: {
      type: 'array',
      maxItems: 256,
      items: { type: 'string' },
      description: 'With group_id: the members the simulated message mentions, by phone.',
    },
    from_lid: {
      type: 'string',
      description:
        'Simulate a LID-addressed sender: the simulated phone\'s LID ("<digits>@lid"), which the message carries beside from_phone (as ' +
        "WhatsApp's remoteJidAlt does), so the number learns it.",
    },
    withhold_phone: {
      type: 'boolean',
      description:
        'With from_lid: the message names the sender by LID alone, as WhatsApp often does; from_phone only routes it on the simulated ' +
        'network. A later message without this reveals the phone (docs/identity.md).',
    },
    referral: {
      type: 'object',
      additionalProperties: false,
      description:
        "Simulate the first message after tapping a Click-to-WhatsApp ad: its attribution, in the Referral component's names (all " +
        'optional, null as absent; source_id, source_url, source_type or ctwa_clid must be given). The message then carries referral (ADR 0051).',
      properties: {
        source_type: { type: ['string', 'null'], maxLength: 2048 },
        source_id: { type: ['string', 'null'], maxLength: 2048 },
        source_url: { type: ['string', 'null'], maxLength: 2048 },
        headline: { type: ['string', 'null'], maxLength: 2048 },
        body: { type: ['string', 'null'], maxLength: 2048 },
        media_type: { type: ['string', 'null'], enum: ['image', 'video', null] },
        image_url: { type: ['string', 'null'], maxLength: 2048 },
        video_url: { type: ['string', 'null'], maxLength: 2048 },
        thumbnail_url: { type: ['string', 'null'], maxLength: 2048 },
        ctwa_clid: { type: ['string', 'null'], maxLength: 2048 },
      },
    },
    placeholder: {
      type: 'string',
      enum: ['resent', 'never_resent'],
      description:
        "Simulate a message WhatsApp first delivers without its content, as it often does an ad's first message: `resent`, the " +
        "sender's phone sends it again when asked and it arrives once, as itself; `never_resent`, it never does, and the message " +
        'arrives with content_kind unavailable and no text (docs/whatsapp.md).',
    },
    interactive_reply: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id', 'title'],
      description:
        'Simulate a tap on one of your interactive messages, as on the Cloud API: reply_to names the message, and type, id and title ' +
        "the reply button or list row tapped (or, with quick_reply, the payload a template's quick-reply button was sent with). " +
        'The message arrives with its title as the text and interactive_reply beside it; send nothing else with it ' +
        '(docs/cloud-api.md#rehearse-in-the-sandbox).',
      properties: {
        type: { type: 'string', enum: ['button', 'list', 'quick_reply'] },
        id: { type: 'string', minLength: 1, maxLength: 256 },
        title: { type: 'string', minLength: 1, maxLength: 24 },
      },
    },
    simulate_failed_downloads: {
      type: 'integer',
      description:
        'With media: how many downloads of the file fail before one succeeds (0 to 10), to rehearse a file that arrives late. The ' +
        'message webhook then says the media is unavailable, and a message.media event follows once a retry stores it (docs/media.md).',
    },
  },
} as const;

/** What a message answers; null when it is no reply. */
const replyToComponent = {
  $id: 'ReplyTo',
  type: ['object', 'null'],
  description:
    "The message this one answers: message_id when that message is stored here (null otherwise), and WhatsApp's id for it always. Null " +
    'when the message is no reply.',
  required: ['message_id', 'whatsapp_id'],
  properties: { message_id: { type: ['string', 'null'] }, whatsapp_id: { type: 'string' } },
} as const;

/** The group chat of a message, event or change. */
const chatGroupComponent = {
  $id: 'ChatGroup',
  type: 'object',
  description: 'A group chat: its id (as to_group takes it) and its subject (null when the gateway has not learnt it).',
  required: ['id', 'subject'],
  properties: { id: { type: 'string' }, subject: { type: ['string', 'null'] } },
} as const;

const nullableChatGroup = {
  anyOf: [ref('ChatGroup'), { type: 'null' }],
  description: 'The group chat of a group message; null for a direct message.',
} as const;

const nullableText = (description: string) => ({ type: ['string', 'null'], maxLength: 2048, description });

/** The ad or post a person came from: the Cloud API's `referral`, field for field (ADR 0051). */
const referralComponent = {
  $id: 'Referral',
  type: 'object',
  description:
    "On an incoming message written after tapping a Click-to-WhatsApp ad or post: its attribution, from WhatsApp's externalAdReply, " +
    "with the Cloud API's referral field names. Absent on every other message.",
  required: [
    'source_type',
    'source_id',
    'source_url',
    'headline',
    'body',
    'media_type',
    'image_url',
    'video_url',
    'thumbnail_url',
    'ctwa_clid',
  ],
  properties: {
    source_type: nullableText('`ad` or `post`, as WhatsApp names the source.'),
    source_id: nullableText("The ad's or post's id."),
    source_url: nullableText('The URL the person tapped.'),
    headline: nullableText("The ad's headline."),
    body: nullableText("The ad's text."),
    media_type: { type: ['string', 'null'], enum: ['image', 'video', null], description: "The ad's media." },
    image_url: nullableText("The ad's image, when media_type is image."),
    video_url: nullableText("The ad's video, when media_type is video."),
    thumbnail_url: nullableText("The ad's thumbnail."),
    ctwa_clid: nullableText("The click's id (Click-to-WhatsApp click id), which Meta's Conversions API takes to tie the lead to the ad."),
  },
} as const;

export const messageResponseFields = {
  message_id: { type: 'string', examples: ['msg_01jd0k6x9g8p1b6m3v7t2q4w5e'] },
  reply_to: ref('ReplyTo'),
  created_at: timestamp,
  to_phone: {
    type: ['string', 'null'],
    description:
      'E.164: the recipient of a direct message, or our number for a received group message; null for a message we sent to a group.',
  },
  mentions: {
    type: 'array',
    items: { type: 'string' },
    description:
      'Only on a group message: the members it mentions, by phone (by LID where WhatsApp gave no phone); empty when it mentions none.',
  },
  group: nullableChatGroup,
  message: { type: 'string', description: 'The text exactly as it was sent; the caption of a media message.' },
  media: ref('MessageMedia'),
} as const;

const sentMessageRequired = ['message_id', 'created_at', 'from_phone', 'to_phone', 'group', 'message', 'reply_to', 'status'] as const;
const sentMessageProperties = {
  ...messageResponseFields,
  ...structuredFields,
  from_phone: { type: 'string', description: 'E.164.' },
  status: { type: 'string', enum: ['sent'] },
} as const;

/** What a queued send's answer holds beyond the message: when it is due, until when, and why it waits. */
const queuedProperties = {
  ...messageResponseFields,
  ...structuredFields,
  from_phone: { type: 'string', description: 'E.164.' },
  to_phone: { type: ['string', 'null'], description: 'E.164: the recipient; null for a message to a group.' },
  scheduled_for: {
    type: ['string', 'null'],
    format: 'date-time',
    description:
      "When the message is expected to leave, by the number's send policy and its pause; it may leave later (a cap, a pause), never " +
      'earlier. Null while the number is paused until someone resumes it (wait_reason `paused`).',
  },
  expires_at: {
    type: 'string',
    format: 'date-time',
    description: 'If it is still waiting then, it becomes `expired` and is never sent.',
  },
  wait_reason: {
    type: 'string',
    enum: [...WAIT_REASONS],
    description:
      'Why it waits: its own send_at (`scheduled`), the gap between sends, a cap (`per_minute`, `per_hour`, `per_day`, ' +
      '`first_contacts`), the gap per recipient, quiet hours, a pause of the number, or its session being down.',
  },
} as const;

/** A send the governor keeps in the number's queue: answered 202 with when it is due to leave. */
const queuedMessageComponent = {
  $id: 'QueuedMessage',
  type: 'object',
  description:
    "A message waiting in its number's send queue (docs/send-governor.md): stored, its quota unit taken, and sent by the gateway at " +
    'scheduled_for or later; message.status events follow. A poll, a location or contact cards are answered as queued.',
  required: [...sentMessageRequired, 'scheduled_for', 'expires_at', 'wait_reason'],
  properties: { ...queuedProperties, status: { type: 'string', enum: ['queued'] } },
} as const;

/**
 * A queued send whose wait, asked for with `wait` or `Prefer: wait=N`, ended otherwise than sent.
 * Its own model, so that `status !== 'queued'` tells a client's types it is not waiting any more.
 */
const unsentMessageComponent = {
  $id: 'UnsentMessage',
  type: 'object',
  description:
    'A queued message that a send waited for (`wait` or `Prefer: wait=N`) and that ended otherwise than sent: it failed, was cancelled ' +
    'or expired. It will not be sent.',
  required: [...sentMessageRequired, 'scheduled_for', 'expires_at', 'wait_reason'],
  properties: { ...queuedProperties, status: { type: 'string', enum: ['failed', 'cancelled', 'expired'] } },
} as const;

/** The 202 of /send_message: still queued, or, after a wait, how it ended. */
const queuedAnswerComponent = {
  $id: 'QueuedAnswer',
  description: 'The 202 of a send: queued, or after a wait that ended otherwise than sent, how it ended.',
  oneOf: [ref('QueuedMessage'), ref('UnsentMessage')],
} as const;

/** A send to a phone: its recipient is that phone, never null. */
const directSentMessageComponent = {
  $id: 'DirectSentMessage',
  type: 'object',
  required: sentMessageRequired,
  properties: {
    ...sentMessageProperties,
    to_phone: { type: 'string', description: 'E.164: the recipient.' },
    group: { type: 'null' },
  },
} as const;

/** A send to a group: the group is the recipient, and to_phone is null. */
const groupSentMessageComponent = {
  $id: 'GroupSentMessage',
  type: 'object',
  required: [...sentMessageRequired, 'mentions'],
  properties: {
    ...sentMessageProperties,
    to_phone: { type: 'null' },
    group: ref('ChatGroup'),
  },
} as const;

/** The answer of /send_message: our own number is always the sender. */
const sentMessageComponent = {
  $id: 'SentMessage',
  description: 'The message as sent: to a phone, or to a group.',
  oneOf: [ref('DirectSentMessage'), ref('GroupSentMessage')],
} as const;

/** An inbound message: its sender may be known only by LID, and then from_phone is null. */
const receivedMessageComponent = {
  $id: 'ReceivedMessage',
  type: 'object',
  required: ['message_id', 'created_at', 'from_phone', 'from_lid', 'to_phone', 'group', 'message', 'reply_to', 'status'],
  properties: {
    ...messageResponseFields,
    from_phone: { type: ['string', 'null'], description: "E.164; null when WhatsApp gave only the sender's LID." },
    from_lid: {
      type: ['string', 'null'],
      description: 'The sender\'s LID ("<digits>@lid") when the message was LID-addressed; otherwise null.',
    },
    ...structuredFields,
    referral: ref('Referral'),
    status: { type: 'string', enum: ['received'] },
  },
} as const;

export const messageSchemaComponents = [
  mediaRequestComponent,
  locationRequestComponent,
  contactRequestComponent,
  pollRequestComponent,
  templateRequestComponent,
  interactiveRequestComponent,
  linkPreviewRequestComponent,
  pollComponent,
  linkPreviewComponent,
  interactiveReplyComponent,
  referralComponent,
  sendMessageRequestComponent,
  sandboxReceiveRequestComponent,
  replyToComponent,
  chatGroupComponent,
  messageMediaComponent,
  locationComponent,
  contactComponent,
  directSentMessageComponent,
  groupSentMessageComponent,
  sentMessageComponent,
  queuedMessageComponent,
  unsentMessageComponent,
  queuedAnswerComponent,
  receivedMessageComponent,
] as const;
