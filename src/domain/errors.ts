/**
 * The one error type of the gateway and its code table. Every failure that reaches a client is an
 * AppError, and its HTTP status comes from `httpStatusFor`, never from the throw site.
 */
export const errorCodes = {
  invalid_json: 400,
  invalid_request: 400,
  invalid_phone_number: 400,
  empty_message: 400,
  recipient_not_on_whatsapp: 400,
  message_too_long: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  phone_not_owned: 403,
  not_found: 404,
  payload_too_large: 413,
  quota_exceeded: 429,
  number_not_connected: 503,
  internal_error: 500,
  // Sends with an Idempotency-Key (docs/adr/0010).
  invalid_idempotency_key: 400,
  request_in_progress: 409,
  send_outcome_unknown: 409,
  idempotency_key_reused: 422,
  // Used by the operator CLI and the dashboard rather than the public send API.
  invalid_argument: 400,
  account_not_found: 404,
  user_not_found: 404,
  number_not_found: 404,
  api_key_not_found: 404,
  phone_already_registered: 409,
  email_already_registered: 409,
  webhook_not_found: 404,
  delivery_not_found: 404,
  invalid_webhook_url: 400,
  webhook_url_blocked: 400,
  invalid_event_type: 400,
  // The dashboard's own failures.
  sign_in_failed: 401,
  sign_in_throttled: 429,
  forbidden: 403,
  invalid_csrf_token: 403,
  invite_not_found: 404,
  last_owner: 409,
  // The operator CLI's linking of a real number.
  link_failed: 409,
  // GET /metrics, for the monitoring system rather than API clients.
  invalid_metrics_token: 401,
  // A password that is too short or too easy to guess, wherever one is set.
  weak_password: 400,
  // Limits on what one account can make the gateway do.
  webhook_limit_reached: 409,
  rate_limited: 429,
  // A client that did not finish sending its request headers within WAGW_HEADERS_TIMEOUT_MS.
  headers_timeout: 408,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorCodes;

/**
 * Machine-readable facts about an error: which field, which limit, when to retry. Each code's
 * keys are fixed, so a client can read them without parsing prose. (A plain string is the older
 * form, being retired code by code.)
 */
export type ErrorDetailValue = string | number | boolean | null | readonly string[];
export type ErrorDetails = Readonly<Record<string, ErrorDetailValue>>;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | string | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails | string) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export function httpStatusFor(code: ErrorCode): number {
  return errorCodes[code];
}

/** The JSON body of every error response. */
export interface ErrorEnvelope {
  error: ErrorCode;
  message: string;
  details?: ErrorDetails | string;
}

export function toEnvelope(error: AppError): ErrorEnvelope {
  const envelope: ErrorEnvelope = { error: error.code, message: error.message };
  if (error.details !== undefined) envelope.details = error.details;
  return envelope;
}
