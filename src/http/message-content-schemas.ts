// What a message carries, as a send's request gives it and as an answer shows it: a file, a place,
// contact cards, a poll, a template, an interactive message, a link preview. Shared schemas
// registered by $id with the message models (message-schemas.ts).
import { mediaKinds } from '../domain/media.ts';
import { ref } from './schema-refs.ts';

export const mediaRequestComponent = {
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
export const locationRequestComponent = {
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
export const contactRequestComponent = {
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
export const pollRequestComponent = {
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

/** A message template to send, on a Cloud API number or a sandbox number rehearsing one (docs/cloud-api.md#templates). */
export const templateRequestComponent = {
  $id: 'TemplateRequest',
  type: 'object',
  additionalProperties: false,
  description:
    "An approved message template of the number's WhatsApp Business Account, instead of a text: the only message WhatsApp carries " +
    "outside a person's 24-hour window. Its header and body placeholders ({{1}}, {{2}}, …) are filled, in order, by the parameters, " +
    'a media header by header_media and buttons by button_parameters, all checked against the template before anything is sent. Cloud API numbers, and sandbox numbers, which rehearse them (docs/cloud-api.md#rehearse-in-the-sandbox); a Baileys number answers 422 capability_not_supported.',
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
    header_media: {
      ...ref('MediaRequest'),
      description:
        "The file of an image, video or document header, given as a send's media is (url, id or data); the gateway uploads it to " +
        'Meta. Required by a media header, refused by any other.',
    },
    button_parameters: {
      type: 'array',
      maxItems: 10,
      description:
        'The parameters of the buttons that take one, by their index among the template’s buttons (from 0): the suffix of a URL ' +
        'button ending in {{1}} (required), or the payload a quick-reply button’s tap brings back (optional).',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['index', 'type', 'value'],
        properties: {
          index: { type: 'integer', minimum: 0, maximum: 9 },
          type: { type: 'string', enum: ['url', 'quick_reply'] },
          value: { type: 'string', minLength: 1, maxLength: 1000, examples: ['4521'] },
        },
      },
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

/** Reply buttons, a list or a call-to-action link, on a Cloud API number or a sandbox number rehearsing one (docs/cloud-api.md#interactive-messages). */
export const interactiveRequestComponent = {
  $id: 'InteractiveRequest',
  type: 'object',
  additionalProperties: false,
  description:
    'An interactive message instead of a text: its body, an optional text header and footer, and exactly one of buttons (1 to 3 reply ' +
    'buttons), list (rows behind a button, 1 to 10 in all) and cta_url (a button that opens a link). A tap comes back as a message ' +
    'whose text is the title, replying to this one. Cloud API numbers, and sandbox numbers, which rehearse them (POST /sandbox/receive rehearses the tap); a Baileys number answers 422 capability_not_supported.',
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
export const linkPreviewRequestComponent = {
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
export const messageMediaComponent = {
  $id: 'MessageMedia',
  type: 'object',
  description: 'The file a message carries.',
  required: ['id', 'kind', 'mime_type', 'size', 'sha256', 'filename', 'url'],
  properties: {
    ...mediaFileProperties,
    url: { type: 'string', description: 'Where a key of the account downloads it (GET /media/{id}).' },
  },
} as const;

export const locationComponent = {
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

export const contactComponent = {
  $id: 'Contact',
  type: 'object',
  description: 'A contact card, its phones in E.164.',
  required: ['name', 'phones', 'vcard'],
  properties: { name: { type: 'string' }, phones: { type: 'array', items: { type: 'string' } }, vcard: { type: ['string', 'null'] } },
} as const;

export const pollComponent = {
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

export const linkPreviewComponent = {
  $id: 'LinkPreview',
  type: 'object',
  description: 'The preview shown under a text with a link (the thumbnail is sent, not kept).',
  required: ['url', 'title', 'description'],
  properties: { url: { type: 'string' }, title: { type: 'string' }, description: { type: ['string', 'null'] } },
} as const;

export const interactiveReplyComponent = {
  $id: 'InteractiveReply',
  type: 'object',
  description:
    "Only on an incoming message of a Cloud API number (or a tap rehearsed on a sandbox number) that is a tap on a reply button, a list row or a template's quick-reply " +
    'button: which one. The message is its title; branch on the id (docs/cloud-api.md#interactive-messages).',
  required: ['type', 'id', 'title'],
  properties: {
    type: {
      type: 'string',
      enum: ['button', 'list', 'quick_reply'],
      description: "A reply button's, a list row's, or a template button's.",
    },
    id: { type: 'string', description: "The id the button or row was sent with (a quick-reply button's payload)." },
    title: { type: 'string', description: 'What the person tapped, as it read.' },
  },
} as const;

/** What a message carries besides text and a file, in one shape for sent and received messages. */
export const structuredFields = {
  location: ref('Location'),
  contacts: { type: 'array', description: 'Contact cards, for a contact message.', items: ref('Contact') },
  poll: ref('Poll'),
  view_once: { type: 'boolean', enum: [true], description: 'Present, and true, on a file that can be opened once.' },
  link_preview: ref('LinkPreview'),
  interactive_reply: ref('InteractiveReply'),
} as const;
