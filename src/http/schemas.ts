import type { InteractiveInput } from '../domain/interactive.ts';
import { errorCatalogue, type ErrorCode } from '../domain/errors.ts';
import { ref } from './schema-refs.ts';

/**
 * JSON schemas of the public API. They drive validation, the response serializers and the
 * OpenAPI document, so the docs cannot drift from what the server does. The models are shared
 * schemas (message-schemas.ts, openapi-components.ts); the routes take them by reference.
 */
export const messageRequestSchema = ref('SendMessageRequest');
export const sandboxReceiveRequestSchema = ref('SandboxReceiveRequest');
export const sentMessageResponseSchema = ref('SentMessage');
export const queuedMessageResponseSchema = ref('QueuedAnswer');
export const receivedMessageResponseSchema = ref('ReceivedMessage');

/** The error envelope; each operation's statuses narrow `error` to their codes. */
export const errorComponent = {
  $id: 'Error',
  type: 'object',
  description: 'Every error answers in this envelope.',
  required: ['error', 'message', 'request_id'],
  properties: {
    error: { type: 'string', description: 'A code of the error catalogue (docs/api.md): what went wrong, for a program.' },
    message: { type: 'string', description: 'What went wrong, for a person.' },
    details: {
      type: 'string',
      description:
        'Additional detail, present when available: the field at fault ("to_phone", "media.url", "mentions[0]"), or the facts of `meta` ' +
        'in words.',
    },
    request_id: { type: 'string', description: "The X-Request-Id of this response, which names its line in the gateway's log." },
    meta: {
      type: 'object',
      description: 'Machine-readable facts about the error; each code has fixed keys (see the error catalogue in docs/api.md).',
      // 'array' comes first: the serializer tries the types in order, and as a string first a list
      // would be written joined by commas ("a,b") instead of as a list.
      additionalProperties: { type: ['array', 'string', 'number', 'boolean', 'null'] },
    },
  },
} as const;

/**
 * The send's optional Idempotency-Key header. Only its type is checked here, so that every
 * header passes the schema; its rules (1–255 printable ASCII) give their own error code.
 */
/**
 * A list's `offset`, for clients that page by position as WAHA and Evolution API do. Bounded:
 * the database walks the skipped rows, where a cursor starts at its place whatever the depth.
 */
export const pageOffsetParameter = {
  type: 'integer',
  minimum: 0,
  maximum: 10_000,
  description:
    "How many items to skip before the page starts: from the list's first item, or from cursor's place when both are given " +
    '(0 to 10,000; 0 by default). next_cursor goes on from the page either way, and is the cheaper way to go deep.',
} as const;

/** The longest `Prefer: wait=N` a send may ask for (a day, a queued message's default life); longer is refused. */
export const MAX_PREFER_WAIT_SECONDS = 86_400;

export const idempotencyKeyHeadersSchema = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      description:
        "Makes retries safe: the same key with the same body within 24 hours answers the first request's response, and sends nothing " +
        'more. 1 to 255 printable ASCII characters, unique per message; shared by /send_message and /api/send_message.',
      examples: ['order-7731-reminder'],
    },
    prefer: {
      type: 'string',
      description:
        '`wait=N`: when the send governor queues the message, wait up to N seconds for it to leave and answer 200 `sent`; after N ' +
        `seconds the answer is 202 \`queued\` (RFC 7240). N is at most ${MAX_PREFER_WAIT_SECONDS} (a day); more is refused with 400.`,
      examples: ['wait=30'],
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

/** The public API's codes of the catalogue that answer with this status; the CLI's and dashboard's are not the API's. */
function codesWithStatus(status: number): ErrorCode[] {
  return (Object.keys(errorCatalogue) as ErrorCode[]).filter((code) => {
    const entry: { status: number; publicApi?: boolean } = errorCatalogue[code];
    return entry.status === status && entry.publicApi === true;
  });
}

/**
 * An operation's error responses, from the catalogue: each status lists its codes with their
 * meanings, and narrows the `Error` envelope to exactly those codes, so the document cannot
 * drift from them.
 */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, errorResponseOf(codesWithStatus(status))]));
}

/** One error answer: the Error envelope with `error` narrowed to `codes` (of one status), each told. */
export function errorResponseOf(codes: readonly ErrorCode[]) {
  const description = codes.map((code) => `\`${code}\`: ${errorCatalogue[code].meaning}`).join(' ');
  return { description, allOf: [ref('Error'), { type: 'object', properties: { error: { type: 'string', enum: codes } } }] };
}

export interface MessageRequestBody {
  from_phone: string;
  to_phone?: string;
  to_group?: string;
  mentions?: string[];
  message?: string;
  media?: { id?: string; data?: string; url?: string; filename?: string; mime_type?: string; kind?: string };
  reply_to?: string;
  location?: LocationRequestBody;
  contacts?: ContactRequestBody[];
  poll?: PollRequestBody;
  template?: TemplateRequestBody;
  interactive?: InteractiveInput;
  view_once?: boolean;
  link_preview?: boolean | LinkPreviewRequestBody;
  send_at?: string;
  expires_at?: string;
  wait?: boolean;
}

export interface LocationRequestBody {
  latitude: number;
  longitude: number;
  name?: string;
  address?: string;
}

export interface ContactRequestBody {
  name?: string;
  phones?: string[];
  organization?: string;
  emails?: string[];
  vcard?: string;
}

export interface TemplateRequestBody {
  name: string;
  language: string;
  header_parameters?: string[];
  body_parameters?: string[];
  header_media?: MessageRequestBody['media'];
  button_parameters?: { index: number; type: 'url' | 'quick_reply'; value: string }[];
}

export interface PollRequestBody {
  question: string;
  options: string[];
  selectable_count?: number;
}

interface LinkPreviewRequestBody {
  url?: string;
  title: string;
  description?: string;
  thumbnail_media_id?: string;
}

export interface SandboxReceiveBody
  extends Omit<
    MessageRequestBody,
    'to_group' | 'mentions' | 'link_preview' | 'send_at' | 'expires_at' | 'wait' | 'template' | 'interactive'
  > {
  to_phone: string;
  group_id?: string;
  mentions?: string[];
  simulate_failed_downloads?: number;
  from_lid?: string;
  withhold_phone?: boolean;
  referral?: Record<string, unknown>;
  placeholder?: 'resent' | 'never_resent';
  interactive_reply?: { type: 'button' | 'list' | 'quick_reply'; id: string; title: string };
}
