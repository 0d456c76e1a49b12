/**
 * The one error type of the gateway and its catalogue of codes. Every failure that reaches a
 * client is an AppError; its HTTP status comes from the catalogue, never from the throw site.
 * The catalogue is the single source of the error tables in the README and docs/api.md (a test
 * compares them) and of the OpenAPI document's error responses (docs/adr/0012).
 *
 * `details` lists the keys an error of that code may carry, with what each holds: machine-readable
 * facts, never prose (prose goes in `message`).
 */
interface CatalogueEntry {
  /** Answered by the public API (the README's table lists these); the rest belong to the CLI and dashboard. */
  publicApi?: boolean;
  status: number;
  meaning: string;
  details?: Readonly<Record<string, string>>;
}

const FIELD = { field: 'the request field at fault' } as const;

export const errorCatalogue = {
  // The public API's requests.
  invalid_json: { publicApi: true, status: 400, meaning: 'The body is not valid JSON (or not UTF-8); the message says where.' },
  invalid_request: { publicApi: true, status: 400, meaning: 'The request cannot be read: the body is not an object, a field is missing or not a string, the Content-Type is not JSON, the body is compressed, the text holds U+0000 or an unpaired surrogate, the URL has a malformed %-escape, a query parameter is missing or not one the operation takes, Host is missing, or it is not valid HTTP.', details: { ...FIELD, problem: '"missing", "unknown" (a field or query parameter the operation does not take), or "not_a_string" (or not_a_number, not_an_array, not_an_object, for the few fields of those types) for a field; absent otherwise' } },
  invalid_phone_number: { publicApi: true, status: 400, meaning: 'A phone is not a valid international number.', details: FIELD },
  empty_message: { publicApi: true, status: 400, meaning: 'The message is empty or only whitespace.', details: FIELD },
  message_too_long: { publicApi: true, status: 400, meaning: 'The message is longer than the configured maximum.', details: { ...FIELD, limit: 'the most characters (code points) allowed' } },
  invalid_media: { publicApi: true, status: 400, meaning: 'The media object is not usable: not exactly one of url, id and data, a url that is not absolute http(s), data that is not base64, an empty file, or an unknown kind.', details: FIELD },
  media_type_mismatch: { publicApi: true, status: 400, meaning: 'The declared mime_type (or upload Content-Type) contradicts the file\'s bytes.', details: { ...FIELD, declared: 'the type the request claimed', detected: 'the type the bytes show, or null when they show none' } },
  media_kind_mismatch: { publicApi: true, status: 400, meaning: 'The file\'s type cannot be sent as the requested kind (a PDF as an image, say).', details: { ...FIELD, kind: 'the kind asked for', mime_type: 'the file\'s type, from its bytes' } },
  media_url_blocked: { publicApi: true, status: 400, meaning: '`media.url` leads only to addresses the gateway may not reach (private, loopback, reserved), directly or by a redirect.', details: { ...FIELD, host: 'the URL\'s host', resolved_addresses: 'what it resolved to, when known' } },
  media_too_large: { publicApi: true, status: 400, meaning: 'The file is over the size limit of its kind.', details: { kind: 'the kind whose limit applies (`any` before the kind is known)', limit_bytes: 'the largest file of that kind' } },
  recipient_not_on_whatsapp: { publicApi: true, status: 400, meaning: 'The recipient does not use WhatsApp (real numbers only; the answer is remembered for an hour); nothing was sent.', details: FIELD },
  invalid_reply_to: { publicApi: true, status: 400, meaning: '`reply_to` names no message of this conversation: unknown, of another account, of another of your numbers or another chat, or never sent.', details: FIELD },
  message_not_in_chat: { publicApi: true, status: 400, meaning: 'The message is not in a chat of `from_phone` (it belongs to another of your numbers), or was never sent.', details: FIELD },
  invalid_mention: { publicApi: true, status: 400, meaning: 'A phone in `mentions` is not a member of the group (or it is `from_phone` itself).', details: FIELD },
  invalid_emoji: { publicApi: true, status: 400, meaning: '`emoji` is not one emoji (a single grapheme, skin tones and sequences included), nor empty to remove the reaction.', details: FIELD },
  invalid_idempotency_key: { publicApi: true, status: 400, meaning: 'The Idempotency-Key header is not 1 to 255 printable ASCII characters.', details: FIELD },
  missing_api_key: { publicApi: true, status: 401, meaning: 'No API key was sent as "Authorization: Bearer <key>".' },
  invalid_api_key: { publicApi: true, status: 401, meaning: 'The API key is malformed, unknown or revoked.' },
  phone_not_owned: { publicApi: true, status: 403, meaning: 'The number is not one of the key\'s account (or not a sandbox number, for the sandbox).', details: FIELD },
  not_group_member: { publicApi: true, status: 403, meaning: '`from_phone` is not, or is no longer, a member of the group, which your account knows through this or another of its numbers; it cannot send there or act on it.', details: { ...FIELD, group_id: 'the group' } },
  not_group_admin: { publicApi: true, status: 403, meaning: '`from_phone` is a member of the group but not an admin, and only admins may change it.', details: { group_id: 'the group' } },
  not_found: { publicApi: true, status: 404, meaning: 'There is no such path or method.' },
  message_not_found: { publicApi: true, status: 404, meaning: 'There is no such message in your account.', details: FIELD },
  group_not_found: { publicApi: true, status: 404, meaning: '`from_phone` is not in such a group: the id is unknown, malformed, or of a group the number does not belong to.', details: FIELD },
  media_not_found: { publicApi: true, status: 404, meaning: 'There is no such media in your account, or its retention ended.', details: FIELD },
  request_in_progress: { publicApi: true, status: 409, meaning: 'A request with this Idempotency-Key is still being answered.', details: { message_id: 'the message the first request is sending, once known' } },
  send_outcome_unknown: { publicApi: true, status: 409, meaning: 'A crash cut off the send with this Idempotency-Key after the engine took it; it was not repeated.', details: { message_id: 'the message whose outcome is unknown', error_code: 'what was recorded for it, or null' } },
  headers_timeout: { publicApi: true, status: 408, meaning: 'The request headers did not arrive within WAGW_HEADERS_TIMEOUT_MS.' },
  payload_too_large: { publicApi: true, status: 413, meaning: 'The request body is over the body limit.', details: { limit_bytes: 'the largest body accepted' } },
  range_not_satisfiable: { publicApi: true, status: 416, meaning: 'The Range asks for bytes outside the file.', details: { size: 'the file\'s size in bytes' } },
  media_url_unreachable: { publicApi: true, status: 422, meaning: '`media.url` could not be fetched: the host does not resolve, refuses, is silent past the time-outs, redirects too often, or answers other than 2xx.', details: { ...FIELD, host: 'the URL\'s host', reason: '`dns`, `refused`, `connect_timeout`, `idle_timeout`, `tls`, `network` or `status`', upstream_status: 'the upstream\'s HTTP status, for `status`; null otherwise' } },
  message_not_editable: { publicApi: true, status: 409, meaning: 'The message cannot be changed so: only our own sent text or caption can be edited, and only within 15 minutes of sending; only our own sent messages can be revoked, within about two days (60 hours); a revoked message cannot be changed; only received messages are marked read.', details: { reason: '`not_ours`, `not_sent`, `revoked`, `no_text`, `edit_window_closed`, `revoke_window_closed` or `not_received`', limit_seconds: 'the window, for a closed one' } },
  idempotency_key_reused: { publicApi: true, status: 422, meaning: 'This Idempotency-Key was used with a different body.' },
  quota_exceeded: { publicApi: true, status: 429, meaning: 'The account has used its monthly volume.', details: { plan: 'the account\'s plan', used: 'messages sent this month', limit: 'messages a month', resets_at: 'when the next month starts, ISO 8601' } },
  rate_limited: { publicApi: true, status: 429, meaning: 'Too many requests of this kind; try again after Retry-After.', details: { limit_per_minute: 'the rate allowed', retry_after_seconds: 'when to try again, as in Retry-After' } },
  internal_error: { publicApi: true, status: 500, meaning: 'Something failed on our side; the request_id names it in our log.' },
  storage_unavailable: { publicApi: true, status: 503, meaning: 'The gateway\'s database cannot be reached or cannot write at the moment (it is restarting, or its disk is full); nothing was stored. Try again after Retry-After.', details: { retry_after_seconds: 'when to try again, as in Retry-After' } },
  number_not_connected: { publicApi: true, status: 503, meaning: 'The sending number\'s WhatsApp session is not connected (or WhatsApp restricted the account, 463).', details: { from_phone: 'the number', to_phone: 'the number, for a simulated incoming message', status: 'its session status (`no_owner` while another node takes the number over)', retry_after_seconds: 'when to try again, also in Retry-After (during a takeover)' } },
  // The operator CLI and the dashboard.
  invalid_argument: { status: 400, meaning: 'A value given to the CLI or a dashboard form is not acceptable.', details: { ...FIELD, limit: 'the bound it broke, when there is one' } },
  weak_password: { status: 400, meaning: 'A password is too short or too easy to guess.', details: { ...FIELD, score: 'its strength, 0 to 4', minimum_score: 'the least accepted', minimum_length: 'the fewest characters accepted' } },
  invalid_webhook_url: { status: 400, meaning: 'A webhook URL is not an absolute http(s) URL, or its host does not resolve.' },
  webhook_url_blocked: { status: 400, meaning: 'A webhook URL leads only to addresses webhooks may not reach (private, loopback, reserved).', details: { host: 'the URL\'s host', port: 'its port', resolved_addresses: 'what the host resolved to' } },
  invalid_event_type: { status: 400, meaning: 'A webhook event type is unknown, or none was given.' },
  sign_in_failed: { status: 401, meaning: 'The email or password is incorrect.' },
  forbidden: { status: 403, meaning: 'The signed-in user\'s role does not allow this.' },
  invalid_csrf_token: { status: 403, meaning: 'A dashboard form was sent without a valid CSRF token.' },
  account_not_found: { status: 404, meaning: 'There is no such account (in your scope).' },
  user_not_found: { status: 404, meaning: 'There is no such user (in your scope).' },
  number_not_found: { publicApi: true, status: 404, meaning: 'There is no such number (in your scope).', details: FIELD },
  api_key_not_found: { status: 404, meaning: 'There is no such API key (in your scope).' },
  webhook_not_found: { status: 404, meaning: 'There is no such webhook (in your scope).' },
  delivery_not_found: { status: 404, meaning: 'There is no such webhook delivery (in your scope).' },
  invite_not_found: { status: 404, meaning: 'The invite link is unknown, used or expired.' },
  phone_already_registered: { status: 409, meaning: 'The number is already on this gateway.' },
  email_already_registered: { status: 409, meaning: 'A user with this email exists.' },
  last_owner: { status: 409, meaning: 'The change would leave the account without an owner.' },
  link_failed: { status: 409, meaning: 'Linking a real number ended without a link.', details: { status: 'the number\'s session status at the end' } },
  webhook_limit_reached: { status: 409, meaning: 'The account has as many webhooks as it may.', details: { limit: 'webhooks an account may have' } },
  sign_in_throttled: { status: 429, meaning: 'Too many failed attempts; wait before trying again.', details: { retry_after_seconds: 'when to try again, as in Retry-After' } },
  // GET /metrics, for the monitoring system.
  invalid_metrics_token: { publicApi: true, status: 401, meaning: 'GET /metrics needs the configured metrics token as a bearer token.' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

/** Each code's HTTP status. */
export const errorCodes = Object.fromEntries(Object.entries(errorCatalogue).map(([code, entry]) => [code, entry.status])) as Record<ErrorCode, number>;

/**
 * Machine-readable facts about an error: which field, which limit, when to retry. Each code's
 * keys are fixed by the catalogue, so a client can read them without parsing prose.
 */
export type ErrorDetailValue = string | number | boolean | null | readonly string[];
export type ErrorDetails = Readonly<Record<string, ErrorDetailValue>>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export function httpStatusFor(code: ErrorCode): number {
  return errorCatalogue[code].status;
}

/** The JSON body of every error response. */
export interface ErrorEnvelope {
  error: ErrorCode;
  message: string;
  details?: ErrorDetails;
  /** The same id as the X-Request-Id header, so that a pasted error body names its log line. */
  request_id: string;
}

export function toEnvelope(error: AppError, requestId: string): ErrorEnvelope {
  // Written in the order a person reads them: the code, the words, the facts, the request.
  return { error: error.code, message: error.message, ...(error.details !== undefined && { details: error.details }), request_id: requestId };
}
