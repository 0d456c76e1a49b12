/**
 * The one error type of the gateway and its catalogue of codes. Every failure that reaches a
 * client is an AppError; its HTTP status comes from the catalogue, never from the throw site.
 * The catalogue is the single source of the error tables in the README and docs/api.md (a test
 * compares them) and of the OpenAPI document's error responses (docs/adr/0012).
 *
 * `meta` lists the keys an error of that code may carry, with what each holds: machine-readable
 * facts, never prose (prose goes in `message`). The body's `details` is not declared per code:
 * the v0.1.0 contract made it a string, so it is derived from the meta by `detailsOf`.
 */
interface CatalogueEntry {
  /** Answered by the public API (the README's table lists these); the rest belong to the CLI and dashboard. */
  publicApi?: boolean;
  status: number;
  meaning: string;
  meta?: Readonly<Record<string, string>>;
}

const FIELD = { field: 'the request field at fault' } as const;

export const errorCatalogue = {
  // The public API's requests.
  invalid_json: { publicApi: true, status: 400, meaning: 'The body is not valid JSON (or not UTF-8); the message says where.' },
  invalid_request: {
    publicApi: true,
    status: 400,
    meaning:
      'The request cannot be read: the body is not an object, a field is missing, of the wrong type, out of its bounds (the message ' +
      'names the bound) or not one the operation takes (at any depth), the Content-Type is not JSON or names a charset other than UTF-8, a media type (`media.mime_type`, ' +
      "an upload's Content-Type) is not well formed, the body is compressed, the text holds U+0000 or an unpaired surrogate, the URL " +
      'has a malformed %-escape, a query parameter is missing or not one the operation takes, Host is missing, or it is not valid ' +
      'HTTP.',
    meta: {
      ...FIELD,
      problem:
        '"missing", "unknown" (a field or query parameter the operation does not take), "not_a_string" (or not_a_number, not_an_integer, ' +
        'not_an_array, not_an_object, for the few fields of those types), "too_small" or "too_large" (a number), "too_short" or ' +
        '"too_long" (a text), "too_few" or "too_many" (a list), "not_allowed" (not one of the listed values), "conflict" (both of two ' +
        'fields of which exactly one is given, as to_phone and to_group), "not_a_media_type" or "invalid" for a field; absent ' +
        'otherwise',
    },
  },
  invalid_phone_number: { publicApi: true, status: 400, meaning: 'A phone is not a valid international number.', meta: FIELD },
  empty_message: { publicApi: true, status: 400, meaning: 'The message is empty or only whitespace.', meta: FIELD },
  message_too_long: {
    publicApi: true,
    status: 400,
    meaning: 'The message is longer than the configured maximum.',
    meta: { ...FIELD, limit: 'the most characters (code points) allowed' },
  },
  invalid_media: {
    publicApi: true,
    status: 400,
    meaning:
      'The media object is not usable: not exactly one of url, id and data, a url that is not absolute http(s), data that is not base64, ' +
      'an empty file, or an unknown kind.',
    meta: FIELD,
  },
  media_type_mismatch: {
    publicApi: true,
    status: 400,
    meaning: "The declared mime_type (or upload Content-Type) contradicts the file's bytes.",
    meta: { ...FIELD, declared: 'the type the request claimed', detected: 'the type the bytes show, or null when they show none' },
  },
  media_kind_mismatch: {
    publicApi: true,
    status: 400,
    meaning: "The file's type cannot be sent as the requested kind (a PDF as an image, say).",
    meta: { ...FIELD, kind: 'the kind asked for', mime_type: "the file's type, from its bytes" },
  },
  media_url_blocked: {
    publicApi: true,
    status: 400,
    meaning: '`media.url` leads only to addresses the gateway may not reach (private, loopback, reserved), directly or by a redirect.',
    meta: { ...FIELD, host: "the URL's host", resolved_addresses: 'what it resolved to, when known' },
  },
  media_too_large: {
    publicApi: true,
    status: 400,
    meaning: 'The file is over the size limit of its kind.',
    meta: { kind: 'the kind whose limit applies (`any` before the kind is known)', limit_bytes: 'the largest file of that kind' },
  },
  invalid_interactive: {
    publicApi: true,
    status: 400,
    meaning:
      '`interactive` is not one WhatsApp shows: exactly one of buttons (1 to 3, titles up to 20 characters), list (1 to 10 rows, ' +
      'titles up to 24) and cta_url (an http(s) URL, its text up to 20), a body of 1 to 1,024 characters, and unique ids.',
    meta: FIELD,
  },
  invalid_template_parameters: {
    publicApi: true,
    status: 400,
    meaning:
      "A template send's parameters do not fit the template: its header and body take exactly as many text parameters as their " +
      'highest {{n}}, an image, video or document header takes its file (of that kind) in header_media and any other header none, and ' +
      'button_parameters name buttons that take one (by index and type, once each), with every URL button ending in {{1}} given its ' +
      'suffix; nothing was sent.',
    meta: {
      field: 'the request field at fault',
      expected: "how many parameters that part of the template takes; absent for a header's file or a button",
    },
  },
  recipient_not_on_whatsapp: {
    publicApi: true,
    status: 400,
    meaning: 'The recipient does not use WhatsApp (real numbers only; the answer is remembered for an hour); nothing was sent.',
    meta: FIELD,
  },
  invalid_reply_to: {
    publicApi: true,
    status: 400,
    meaning:
      '`reply_to` names no message of this conversation: unknown, of another account, of another of your numbers or another chat, or ' +
      'never sent.',
    meta: FIELD,
  },
  message_not_in_chat: {
    publicApi: true,
    status: 400,
    meaning: 'The message is not in a chat of `from_phone` (it belongs to another of your numbers), or was never sent.',
    meta: FIELD,
  },
  invalid_mention: {
    publicApi: true,
    status: 400,
    meaning: 'A phone in `mentions` is not a member of the group (or it is `from_phone` itself).',
    meta: FIELD,
  },
  invalid_poll: {
    publicApi: true,
    status: 400,
    meaning:
      '`poll` is not one WhatsApp shows: it needs a question (1 to 255 characters), 2 to 12 options that are unique and not blank (each ' +
      'up to 100 characters), and a `selectable_count` from 1 to the number of options.',
    meta: FIELD,
  },
  invalid_poll_vote: {
    publicApi: true,
    status: 400,
    meaning:
      'A simulated vote names a message that is no poll, an option the poll does not have, or more options than the poll lets one voter ' +
      'choose.',
    meta: FIELD,
  },
  invalid_contact: {
    publicApi: true,
    status: 400,
    meaning:
      'A contact card is neither `{name, phones}` nor `{vcard}`, or its vCard is not one card (BEGIN:VCARD … END:VCARD) with a VERSION ' +
      'and a non-empty FN, within 10,000 characters.',
    meta: FIELD,
  },
  invalid_emoji: {
    publicApi: true,
    status: 400,
    meaning:
      "`emoji` is not exactly one emoji by Unicode's emoji rules (skin tones, ZWJ sequences, flags and keycaps of 0-9, # and * " +
      'included), nor empty to remove the reaction.',
    meta: FIELD,
  },
  invalid_send_policy: {
    publicApi: true,
    status: 400,
    meaning:
      'A send policy cannot be used: max_gap_ms below min_gap_ms, a quiet-hours time not "HH:MM", or a time zone that is not an IANA name.',
    meta: FIELD,
  },
  invalid_schedule: {
    publicApi: true,
    status: 400,
    meaning:
      '`send_at` or `expires_at` cannot be kept: `send_at` is past the scheduling horizon (WAGW_SEND_AT_HORIZON_DAYS), or `expires_at` ' +
      'is not after `send_at` and now.',
    meta: { ...FIELD, horizon_days: 'the scheduling horizon, for send_at' },
  },
  invalid_idempotency_key: {
    publicApi: true,
    status: 400,
    meaning: 'The Idempotency-Key header is not 1 to 255 printable ASCII characters.',
    meta: FIELD,
  },
  missing_api_key: { publicApi: true, status: 401, meaning: 'No API key was sent as "Authorization: Bearer <key>".' },
  invalid_api_key: { publicApi: true, status: 401, meaning: 'The API key is malformed, unknown or revoked.' },
  missing_operator_token: {
    publicApi: true,
    status: 401,
    meaning: 'An operator API call (/admin/…) came without an operator token as "Authorization: Bearer <token>" (docs/operator-api.md).',
  },
  invalid_operator_token: {
    publicApi: true,
    status: 401,
    meaning: 'The operator token is malformed, unknown or revoked; an API key is not an operator token.',
  },
  sender_blocked: {
    publicApi: true,
    status: 409,
    meaning:
      'The receiving sandbox number has blocked from_phone (POST /blocklist): as on WhatsApp, its messages are not delivered; nothing ' +
      'was received.',
    meta: FIELD,
  },
  missing_scope: {
    publicApi: true,
    status: 403,
    meaning:
      "The API key lacks the scope the operation needs (`read`, `send` or `webhooks`); a key's scopes are chosen when it is made " +
      '(docs/api.md, Scopes).',
    meta: { required_scope: 'the scope the operation needs', key_scopes: 'the scopes the key has' },
  },
  phone_not_owned: {
    publicApi: true,
    status: 403,
    meaning: "The number is not one of the key's account (or not a sandbox number, for the sandbox).",
    meta: FIELD,
  },
  not_group_member: {
    publicApi: true,
    status: 403,
    meaning:
      '`from_phone` is not, or is no longer, a member of the group, which your account knows through this or another of its numbers; it ' +
      'cannot send there or act on it.',
    meta: { ...FIELD, group_id: 'the group' },
  },
  not_group_admin: {
    publicApi: true,
    status: 403,
    meaning: '`from_phone` is a member of the group but not an admin, and only admins may change it.',
    meta: { group_id: 'the group' },
  },
  link_previews_disabled: {
    publicApi: true,
    status: 403,
    meaning:
      '`link_preview: true` asks the gateway to fetch the page, which this account has not turned on (PATCH /account/settings, ' +
      '`link_previews`); give the preview as an object instead, or turn fetching on.',
    meta: FIELD,
  },
  not_found: { publicApi: true, status: 404, meaning: 'There is no such path or method.' },
  message_not_found: { publicApi: true, status: 404, meaning: 'There is no such message in your account.', meta: FIELD },
  template_not_found: {
    publicApi: true,
    status: 404,
    meaning: 'The business account has no approved template of this name in this language (it may be pending, paused or rejected).',
    meta: FIELD,
  },
  group_not_found: {
    publicApi: true,
    status: 404,
    meaning: '`from_phone` is not in such a group: the id is unknown, malformed, or of a group the number does not belong to.',
    meta: FIELD,
  },
  contact_not_found: {
    publicApi: true,
    status: 404,
    meaning:
      '`from_phone` knows no such person: no message was exchanged with them and they are not saved, by that phone or LID; another ' +
      "account's people are not found either.",
    meta: FIELD,
  },
  chat_not_found: {
    publicApi: true,
    status: 404,
    meaning: '`from_phone` has no such chat: no message was exchanged with that phone, LID or group.',
    meta: FIELD,
  },
  media_not_found: {
    publicApi: true,
    status: 404,
    meaning: 'There is no such media in your account, or its retention ended.',
    meta: FIELD,
  },
  request_in_progress: {
    publicApi: true,
    status: 409,
    meaning: 'A request with this Idempotency-Key is still being answered.',
    meta: { message_id: 'the message the first request is sending, once known' },
  },
  send_outcome_unknown: {
    publicApi: true,
    status: 409,
    meaning: 'A crash cut off the send with this Idempotency-Key after the engine took it; it was not repeated.',
    meta: { message_id: 'the message whose outcome is unknown', error_code: 'what was recorded for it, or null' },
  },
  send_not_recorded: {
    publicApi: true,
    status: 503,
    meaning:
      "WhatsApp accepted the message, but the gateway's database would not record it, even after retrying for a few seconds; do not send " +
      'it again. Its status is `unknown` (error_code `outcome_unknown`) until the gateway records it as sent or a receipt arrives.',
    meta: {
      message_id: 'the message WhatsApp accepted',
      retry_after_seconds: 'when a retry with the same Idempotency-Key may find the record',
    },
  },
  headers_timeout: { publicApi: true, status: 408, meaning: 'The request headers did not arrive within WAGW_HEADERS_TIMEOUT_MS.' },
  payload_too_large: {
    publicApi: true,
    status: 413,
    meaning: 'The request body is over the body limit.',
    meta: { limit_bytes: 'the largest body accepted' },
  },
  storage_quota_exceeded: {
    publicApi: true,
    status: 413,
    meaning:
      'The file would take the account past the media storage its plan may hold (its unexpired uploads and sent files); uploads no ' +
      'message uses expire, and a smaller file may still fit.',
    meta: { plan: "the account's plan", used_bytes: 'bytes the account holds now', limit_bytes: 'bytes the plan may hold' },
  },
  range_not_satisfiable: {
    publicApi: true,
    status: 416,
    meaning: 'The Range asks for bytes outside the file.',
    meta: { size: "the file's size in bytes" },
  },
  media_url_unreachable: {
    publicApi: true,
    status: 422,
    meaning:
      '`media.url` could not be fetched: the host does not resolve, refuses, is silent past the time-outs, redirects too often, or ' +
      'answers other than 2xx.',
    meta: {
      ...FIELD,
      host: "the URL's host",
      reason: '`dns`, `refused`, `connect_timeout`, `idle_timeout`, `tls`, `network` or `status`',
      upstream_status: "the upstream's HTTP status, for `status`; null otherwise",
    },
  },
  message_not_editable: {
    publicApi: true,
    status: 409,
    meaning:
      'The message cannot be changed so: only our own sent text or caption can be edited, and only within 15 minutes of sending; only ' +
      'our own sent messages can be revoked, within about two days (60 hours); a revoked message cannot be changed; only received ' +
      'messages are marked read.',
    meta: {
      reason: '`not_ours`, `not_sent`, `revoked`, `no_text`, `edit_window_closed`, `revoke_window_closed` or `not_received`',
      limit_seconds: 'the window, for a closed one',
    },
  },
  session_action_refused: {
    publicApi: true,
    status: 409,
    meaning:
      "The number's session is not in a state for this action: only a failed, conflicting or disconnected session is restarted (a " +
      'logged-out one is linked instead), and only a running session is logged out.',
  },
  capability_not_supported: {
    publicApi: true,
    status: 422,
    meaning:
      "The number's engine cannot do this (Meta's Cloud API has no groups, edits or polls, say; Baileys sends no " +
      'templates or interactive messages); nothing was done. docs/cloud-api.md lists what each engine has.',
    meta: { engine: 'the engine that serves the number (sandbox, baileys or cloud)', capability: 'what it cannot do' },
  },
  window_closed: {
    publicApi: true,
    status: 422,
    meaning:
      "The recipient's 24-hour customer-service window on this Cloud API number is closed (they have not written in the last 24 hours), " +
      'so WhatsApp takes only a template; nothing was sent and Meta was not asked.',
    meta: { field: 'the request field at fault', window_closed_at: 'when the window closed (ISO 8601), or null when they never wrote' },
  },
  message_not_cancellable: {
    publicApi: true,
    status: 409,
    meaning:
      "Only a message still waiting in its number's queue (status `queued` with `scheduled_for`) can be cancelled; this one has left the " +
      'queue.',
    meta: { status: "the message's status now" },
  },
  idempotency_key_reused: { publicApi: true, status: 422, meaning: 'This Idempotency-Key was used with a different body.' },
  quota_exceeded: {
    publicApi: true,
    status: 429,
    meaning: 'The account has used its monthly volume.',
    meta: {
      plan: "the account's plan",
      used: 'messages sent this month',
      limit: 'messages a month',
      resets_at: 'when the next month starts, ISO 8601',
    },
  },
  queue_full: {
    publicApi: true,
    status: 429,
    meaning:
      "The number's send queue holds as much message content as it may (WAGW_SEND_QUEUE_MAX_KIB_PER_NUMBER): the message would have " +
      'to wait, and there is no room for it. Room comes back as waiting messages leave (sent, cancelled or expired).',
    meta: {
      limit_bytes: "the content the number's queue may hold, in bytes",
      queued_bytes: 'the content it holds now',
      retry_after_seconds: 'when its first waiting message is due to leave, as in Retry-After',
    },
  },
  rate_limited: {
    publicApi: true,
    status: 429,
    meaning: 'Too many requests of this kind; try again after Retry-After.',
    meta: { limit_per_minute: 'the rate allowed', retry_after_seconds: 'when to try again, as in Retry-After' },
  },
  upload_rate_exceeded: {
    publicApi: true,
    status: 429,
    meaning: 'The account has uploaded as many bytes as its plan allows in the window (POST /media); try again after Retry-After.',
    meta: {
      plan: "the account's plan",
      limit_bytes: 'bytes allowed per window',
      window_seconds: 'the window',
      retry_after_seconds: 'when to try again, as in Retry-After',
    },
  },
  media_fetch_budget_exceeded: {
    publicApi: true,
    status: 429,
    meaning:
      'The gateway has fetched as many bytes of `media.url` files and link previews for the account as its plan allows in the ' +
      'window, or as many link-preview fetches for the number as it may make (`meta.field` is `link_preview`); try again after ' +
      'Retry-After.',
    meta: {
      plan: "the account's plan",
      limit_bytes: 'bytes fetched allowed per window',
      limit_fetches: "the number's link-preview fetches allowed per window",
      field: "`link_preview`, when the number's preview fetches are spent",
      window_seconds: 'the window',
      retry_after_seconds: 'when to try again, as in Retry-After',
    },
  },
  cloud_api_refused: {
    publicApi: true,
    status: 502,
    meaning:
      "Meta's Cloud API refused the request or failed (an expired access token, a parameter it does not take, its own outage); " +
      'nothing was sent. The message gives its words.',
    meta: { graph_code: "Meta's error code", fbtrace_id: "Meta's trace id, for its support" },
  },
  internal_error: { publicApi: true, status: 500, meaning: 'Something failed on our side; the request_id names it in our log.' },
  storage_unavailable: {
    publicApi: true,
    status: 503,
    meaning:
      "The gateway's database cannot be reached or cannot write at the moment (it is restarting, or its disk is full); nothing was " +
      'stored. Try again after Retry-After.',
    meta: { retry_after_seconds: 'when to try again, as in Retry-After' },
  },
  number_not_connected: {
    publicApi: true,
    status: 503,
    meaning: "The sending number's WhatsApp session is not connected.",
    meta: {
      from_phone: 'the number',
      to_phone: 'the number, for a simulated incoming message',
      status: 'its session status (`no_owner` while no node serves the number: a takeover, a handover, a stopping gateway)',
      retry_after_seconds: 'when to try again, also in Retry-After',
    },
  },
  number_paused: {
    publicApi: true,
    status: 503,
    meaning:
      'The sending number is paused: WhatsApp restricted it (463), put it under a reach-out time lock, rate-limited it or logged it out, ' +
      'or it was paused by hand (POST /numbers/{id}/pause); nothing was sent. It resumes at `until`, or by POST /numbers/{id}/resume.',
    meta: {
      from_phone: 'the number',
      reason: 'restricted, reachout_timelock, rate_limited, logged_out or manual',
      until: 'when the pause lifts by itself (ISO 8601), or null when that is not known',
      retry_after_seconds: 'until `until`, also in Retry-After; 60 when `until` is null',
    },
  },
  overloaded: {
    publicApi: true,
    status: 503,
    meaning:
      'The node is working on as many sends as it takes at once (WAGW_MAX_PENDING_SENDS); nothing was stored or sent. Try again after ' +
      'Retry-After.',
    meta: {
      pending_sends: 'the sends in progress on the node',
      limit: 'WAGW_MAX_PENDING_SENDS',
      retry_after_seconds: 'when to try again, as in Retry-After',
    },
  },
  insufficient_storage: {
    publicApi: true,
    status: 503,
    meaning:
      "The gateway's disk is close to full (below WAGW_MEDIA_MIN_FREE_BYTES / _PERCENT free), so it stores no new file until space is " +
      'freed; the database keeps the last space.',
    meta: { retry_after_seconds: 'when to try again, also in Retry-After' },
  },
  // The operator CLI and the dashboard.
  body_timeout: {
    status: 408,
    meaning:
      'A form sent without signing in (sign-in, an invite) did not finish its body within WAGW_UNAUTHENTICATED_BODY_TIMEOUT_MS; the ' +
      'connection is closed.',
    meta: { limit_ms: 'the time the body had' },
  },
  invalid_argument: {
    status: 400,
    meaning: 'A value given to the CLI or a dashboard form is not acceptable.',
    meta: { ...FIELD, limit: 'the bound it broke, when there is one' },
  },
  weak_password: {
    publicApi: true,
    status: 400,
    meaning: 'A password is too short or too easy to guess.',
    meta: {
      ...FIELD,
      score: 'its strength, 0 to 4',
      minimum_score: 'the least accepted',
      minimum_length: 'the fewest characters accepted',
    },
  },
  invalid_webhook_url: {
    publicApi: true,
    status: 400,
    meaning: 'A webhook URL is not an absolute http(s) URL, or its host does not resolve.',
  },
  webhook_url_blocked: {
    publicApi: true,
    status: 400,
    meaning: 'A webhook URL leads only to addresses webhooks may not reach (private, loopback, reserved).',
    meta: { host: "the URL's host", port: 'its port', resolved_addresses: 'what the host resolved to' },
  },
  invalid_event_type: { publicApi: true, status: 400, meaning: 'A webhook event type is unknown, or none was given.' },
  invalid_webhook_signature: {
    status: 401,
    meaning:
      "A delivery to a Cloud API number's callback whose X-Hub-Signature-256 is missing or is not the HMAC of its body with the " +
      "number's app secret, or a verification handshake with the wrong verify token.",
  },
  sign_in_failed: { status: 401, meaning: 'The email or password is incorrect.' },
  forbidden: { status: 403, meaning: "The signed-in user's role does not allow this." },
  invalid_csrf_token: { status: 403, meaning: 'A dashboard form was sent without a valid CSRF token.' },
  account_not_found: { publicApi: true, status: 404, meaning: 'There is no such account (in your scope).' },
  user_not_found: { publicApi: true, status: 404, meaning: 'There is no such user (in your scope).', meta: FIELD },
  number_not_found: { publicApi: true, status: 404, meaning: 'There is no such number (in your scope).', meta: FIELD },
  api_key_not_found: { publicApi: true, status: 404, meaning: 'There is no such API key (in your scope).' },
  operator_token_not_found: { status: 404, meaning: 'There is no such operator token.' },
  webhook_not_found: { publicApi: true, status: 404, meaning: 'There is no such webhook (in your scope).' },
  not_an_event_stream: {
    publicApi: true,
    status: 409,
    meaning: 'The webhook delivers to a URL or a broker; only an event stream is read over a WebSocket.',
    meta: { webhook_id: 'the webhook named' },
  },
  delivery_not_found: { publicApi: true, status: 404, meaning: 'There is no such webhook delivery (in your scope).' },
  invite_not_found: { status: 404, meaning: 'The invite link is unknown, used or expired.' },
  phone_already_registered: { publicApi: true, status: 409, meaning: 'The number is already on this gateway.' },
  email_already_registered: { publicApi: true, status: 409, meaning: 'A user with this email exists.' },
  last_owner: { publicApi: true, status: 409, meaning: 'The change would leave the account without an owner.' },
  user_is_operator: {
    publicApi: true,
    status: 409,
    meaning: 'The user is also an operator of the gateway; take their operator rights away in the console before removing them.',
  },
  link_failed: {
    status: 409,
    meaning: 'Linking a real number ended without a link.',
    meta: { status: "the number's session status at the end" },
  },
  webhook_limit_reached: {
    publicApi: true,
    status: 409,
    meaning: 'The account has as many webhooks as it may.',
    meta: { limit: 'webhooks an account may have' },
  },
  sign_in_throttled: {
    status: 429,
    meaning: 'Too many failed attempts; wait before trying again.',
    meta: { retry_after_seconds: 'when to try again, as in Retry-After' },
  },
  // Between nodes.
  // Not 421 Misdirected Request: fetch repeats a request answered 421 on a new connection, with
  // the same signed headers, which the node then refuses as a replay.
  number_moved: {
    status: 409,
    meaning:
      'A call forwarded to a node that no longer serves the number (it is handing it over, or has): the forwarding node looks for ' +
      'its owner again. Never answered to a client.',
  },
  // GET /metrics, for the monitoring system.
  invalid_metrics_token: { publicApi: true, status: 401, meaning: 'GET /metrics needs the configured metrics token as a bearer token.' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

/** Each code's HTTP status. */
export const errorCodes = Object.fromEntries(Object.entries(errorCatalogue).map(([code, entry]) => [code, entry.status])) as Record<
  ErrorCode,
  number
>;

/**
 * Machine-readable facts about an error: which field, which limit, when to retry. Each code's
 * keys are fixed by the catalogue, so a client can read them without parsing prose.
 */
type ErrorMetaValue = string | number | boolean | null | readonly string[];
export type ErrorMeta = Readonly<Record<string, ErrorMetaValue>>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly meta: ErrorMeta | undefined;

  constructor(code: ErrorCode, message: string, meta?: ErrorMeta) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.meta = meta;
  }
}

/** from_phone names no number of the caller's account: one wording wherever a request's number is resolved. */
export function phoneNotOwned(): AppError {
  return new AppError('phone_not_owned', 'from_phone is not a number of your account.', { field: 'from_phone' });
}

export function httpStatusFor(code: ErrorCode): number {
  return errorCatalogue[code].status;
}

/** The JSON body of every error response: the v0.1.0 contract's three fields, the request, and the facts. */
export interface ErrorEnvelope {
  error: ErrorCode;
  message: string;
  /** A short string, as the v0.1.0 contract defines it: see `detailsOf`. */
  details?: string;
  /** The same id as the X-Request-Id header, so that a pasted error body names its log line. */
  request_id: string;
  meta?: ErrorMeta;
}

/**
 * The contract's `details`, derived from the meta so that no throw site writes it: the field at
 * fault when there is one ("to_phone", "media.url", "mentions[0]"); otherwise the facts in words
 * ("kind: image; limit_bytes: 4096"); absent when there are none.
 */
function detailsOf(meta: ErrorMeta | undefined): string | undefined {
  if (meta === undefined) return undefined;
  if (typeof meta.field === 'string') return meta.field;
  const facts = Object.entries(meta)
    .filter(([, value]) => value !== null)
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(', ') : String(value)}`);
  return facts.length === 0 ? undefined : facts.join('; ');
}

/** What `detailsOf` gives for a code, in words, for the generated error tables. */
export function detailsDescriptionOf(code: ErrorCode): string {
  const entry: CatalogueEntry = errorCatalogue[code];
  if (entry.meta === undefined) return 'absent';
  return 'field' in entry.meta ? "the field's name, when `meta.field` is given" : 'the `meta` facts in words';
}

export function toEnvelope(error: AppError, requestId: string): ErrorEnvelope {
  // Written in the order a person reads them: the code, the words, the detail, the request, the facts.
  const details = detailsOf(error.meta);
  return {
    error: error.code,
    message: error.message,
    ...(details !== undefined && { details }),
    request_id: requestId,
    ...(error.meta !== undefined && { meta: error.meta }),
  };
}
