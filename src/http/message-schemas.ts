import { WAIT_REASONS } from '../messaging/governor/decision.ts';
import { mediaKinds } from '../domain/media.ts';

/**
 * The message models of the public API, as named shared schemas: registered once with Fastify
 * (openapi-components.ts), referenced by $id from the routes, and so written once into the
 * document's components.
 */
export function ref<Name extends string>(name: Name) {
  return { $ref: `${name}#` } as const;
}

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

const mediaRequestComponent = {
  $id: 'MediaRequest',
  type: 'object',
  additionalProperties: false,
  description:
    'A file to send, with `message` as its caption. Exactly one of `url` (fetched by the gateway, through the same address guard as ' +
    'webhooks), `id` (an upload from POST /media) and `data` (base64, within the body limit). The type and kind come from the bytes ' +
    '(docs/media.md).',
  properties: {
    url: { type: 'string', description: 'An http(s) URL the gateway fetches the file from.' },
    id: { type: 'string', description: 'A media_id of your account, from POST /media.' },
    data: { type: 'string', description: 'The file, base64 encoded.' },
    filename: { type: 'string', description: 'The name the recipient sees, for a document.' },
    mime_type: { type: 'string', description: 'What you believe the file is; refused if the bytes say otherwise.' },
    kind: {
      type: 'string',
      description: 'image, video, audio, voice, document or sticker: how to present it, when not the one its type suggests.',
    },
  },
} as const;

/** A place to share, as a send and a simulated receive take it. */
const locationRequestComponent = {
  $id: 'LocationRequest',
  type: 'object',
  additionalProperties: false,
  description:
    'A place: latitude (±90) and longitude (±180) in degrees, with an optional name and address. `message`, if given, is its comment.',
  required: ['latitude', 'longitude'],
  properties: {
    latitude: { type: 'number' },
    longitude: { type: 'number' },
    name: { type: 'string', maxLength: 1000 },
    address: { type: 'string', maxLength: 1000 },
  },
} as const;

/** A contact card to share: built from fields, or given whole. */
const contactRequestComponent = {
  $id: 'ContactRequest',
  type: 'object',
  additionalProperties: false,
  description:
    'One card: either `name` with `phones` (and optionally `organization` and `emails`), from which the gateway writes a vCard 3.0, or ' +
    '`vcard`, a whole card of your own (checked: one card with a VERSION and an FN, up to 10,000 characters).',
  properties: {
    name: { type: 'string', maxLength: 1000, description: 'The name shown on the card.' },
    phones: {
      type: 'array',
      maxItems: 20,
      items: { type: 'string' },
      description: 'Its phones, international; each becomes a TEL with its WhatsApp id.',
    },
    organization: { type: 'string', maxLength: 1000 },
    emails: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 320 } },
    vcard: { type: 'string', description: 'A vCard given whole, instead of the fields.' },
  },
} as const;

/** A poll to send. */
const pollRequestComponent = {
  $id: 'PollRequest',
  type: 'object',
  additionalProperties: false,
  description:
    'A poll: the question, 2 to 12 unique options, and how many of them one voter may choose (1 by default, at most the number of ' +
    'options). Votes arrive as poll.vote events, and GET /messages/{id} shows the tally.',
  required: ['question', 'options'],
  properties: {
    question: { type: 'string', description: '1 to 255 characters.', examples: ['Which day suits you?'] },
    options: {
      type: 'array',
      items: { type: 'string' },
      description: '2 to 12 options, unique, each 1 to 100 characters.',
      examples: [['Monday', 'Tuesday']],
    },
    selectable_count: {
      type: 'integer',
      description: 'How many options one voter may choose: 1 (the default) up to the number of options.',
    },
  },
} as const;

/** A message template to send, on a Cloud API number (docs/cloud-api.md#templates). */
const templateRequestComponent = {
  $id: 'TemplateRequest',
  type: 'object',
  additionalProperties: false,
  description:
    "An approved message template of the number's WhatsApp Business Account, instead of a text: the only message WhatsApp carries " +
    "outside a person's 24-hour window. Its header and body placeholders ({{1}}, {{2}}, …) are filled, in order, by the parameters, " +
    'checked against the template before anything is sent. Cloud API numbers only; other engines answer 422 capability_not_supported.',
  required: ['name', 'language'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 512, examples: ['order_ready'] },
    language: {
      type: 'string',
      minLength: 2,
      maxLength: 15,
      description: "The template's language code, as approved.",
      examples: ['en_US'],
    },
    header_parameters: {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', minLength: 1, maxLength: 1024 },
      description: 'The text of each placeholder of a text header, in order; absent or empty when it has none.',
    },
    body_parameters: {
      type: 'array',
      maxItems: 100,
      items: { type: 'string', minLength: 1, maxLength: 1024 },
      description: 'The text of each placeholder of the body, in order.',
      examples: [['Ada', '4521']],
    },
  },
} as const;

const choiceSchema = (titleLength: number) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['id', 'title'],
    properties: {
      id: { type: 'string', description: 'Up to 256 characters; it comes back with the tap.' },
      title: { type: 'string', description: `Up to ${titleLength} characters.` },
      ...(titleLength === 24 && { description: { type: 'string', description: 'Up to 72 characters.' } }),
    },
  }) as const;

/** Reply buttons, a list or a call-to-action link, on a Cloud API number (docs/cloud-api.md#interactive-messages). */
const interactiveRequestComponent = {
  $id: 'InteractiveRequest',
  type: 'object',
  additionalProperties: false,
  description:
    'An interactive message instead of a text: its body, an optional text header and footer, and exactly one of buttons (1 to 3 reply ' +
    'buttons), list (rows behind a button, 1 to 10 in all) and cta_url (a button that opens a link). A tap comes back as a message ' +
    'whose text is the title, replying to this one. Cloud API numbers only; other engines answer 422 capability_not_supported.',
  required: ['body'],
  properties: {
    body: { type: 'string', description: '1 to 1,024 characters.' },
    header: { type: 'string', description: 'A text header, up to 60 characters.' },
    footer: { type: 'string', description: 'Up to 60 characters.' },
    buttons: { type: 'array', maxItems: 3, items: choiceSchema(20) },
    list: {
      type: 'object',
      additionalProperties: false,
      required: ['button', 'sections'],
      properties: {
        button: { type: 'string', description: 'The text of the button that opens the list, up to 20 characters.' },
        sections: {
          type: 'array',
          maxItems: 10,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['rows'],
            properties: { title: { type: 'string' }, rows: { type: 'array', maxItems: 10, items: choiceSchema(24) } },
          },
        },
      },
    },
    cta_url: {
      type: 'object',
      additionalProperties: false,
      required: ['display_text', 'url'],
      properties: { display_text: { type: 'string', description: 'Up to 20 characters.' }, url: { type: 'string', maxLength: 2048 } },
    },
  },
} as const;

/** A link preview given by the caller, shown as is. */
const linkPreviewRequestComponent = {
  $id: 'LinkPreviewRequest',
  type: 'object',
  additionalProperties: false,
  description:
    'A preview given whole, so the gateway fetches nothing: the title (required), an optional description, the URL it is for (the first ' +
    "link of the text by default) and a thumbnail (an image upload's media_id, made small as WhatsApp wants).",
  required: ['title'],
  properties: {
    url: {
      type: 'string',
      description: 'The link the preview is for; it must appear in the text. The first http(s) link of the text by default.',
    },
    title: { type: 'string', description: '1 to 300 characters.' },
    description: { type: 'string', description: 'Up to 1,000 characters.' },
    thumbnail_media_id: { type: 'string', description: 'An image of your account (POST /media) to show beside the preview.' },
  },
} as const;

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

/** What describes a file, wherever a message carries one. */
export const mediaFileProperties = {
  id: { type: 'string' },
  kind: { type: 'string', enum: mediaKinds },
  mime_type: { type: 'string' },
  size: { type: 'integer' },
  sha256: { type: 'string' },
  filename: { type: ['string', 'null'] },
} as const;

/** A message's file as the answers describe it. */
const messageMediaComponent = {
  $id: 'MessageMedia',
  type: 'object',
  description: 'The file a message carries.',
  required: ['id', 'kind', 'mime_type', 'size', 'sha256', 'filename', 'url'],
  properties: {
    ...mediaFileProperties,
    url: { type: 'string', description: 'Where a key of the account downloads it (GET /media/{id}).' },
  },
} as const;

const locationComponent = {
  $id: 'Location',
  type: 'object',
  description: 'A shared place, for a location message.',
  required: ['latitude', 'longitude', 'name', 'address', 'url'],
  properties: {
    latitude: { type: 'number' },
    longitude: { type: 'number' },
    name: { type: ['string', 'null'] },
    address: { type: ['string', 'null'] },
    url: { type: ['string', 'null'] },
  },
} as const;

const contactComponent = {
  $id: 'Contact',
  type: 'object',
  description: 'A contact card, its phones in E.164.',
  required: ['name', 'phones', 'vcard'],
  properties: { name: { type: 'string' }, phones: { type: 'array', items: { type: 'string' } }, vcard: { type: ['string', 'null'] } },
} as const;

const pollComponent = {
  $id: 'Poll',
  type: 'object',
  description:
    'A poll: its question, options and how many one voter may choose. GET /messages/{id} adds `results`: the voters counted and each ' +
    "option's votes, from each voter's current selection.",
  required: ['question', 'options', 'selectable_count'],
  properties: {
    question: { type: 'string' },
    options: { type: 'array', items: { type: 'string' } },
    selectable_count: { type: 'integer' },
    results: {
      type: 'object',
      required: ['voters', 'options'],
      properties: {
        voters: { type: 'integer', description: 'People whose current selection is not empty.' },
        options: {
          type: 'array',
          items: { type: 'object', required: ['option', 'votes'], properties: { option: { type: 'string' }, votes: { type: 'integer' } } },
        },
      },
    },
  },
} as const;

const linkPreviewComponent = {
  $id: 'LinkPreview',
  type: 'object',
  description: 'The preview shown under a text with a link (the thumbnail is sent, not kept).',
  required: ['url', 'title', 'description'],
  properties: { url: { type: 'string' }, title: { type: 'string' }, description: { type: ['string', 'null'] } },
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

/** What a message carries besides text and a file, in one shape for sent and received messages. */
export const structuredFields = {
  location: ref('Location'),
  contacts: { type: 'array', description: 'Contact cards, for a contact message.', items: ref('Contact') },
  poll: ref('Poll'),
  view_once: { type: 'boolean', enum: [true], description: 'Present, and true, on a file that can be opened once.' },
  link_preview: ref('LinkPreview'),
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
