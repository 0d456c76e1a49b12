import { errorCatalogue, type ErrorCode } from '../../domain/errors.ts';
import { errorResponseOf } from '../schemas.ts';

/** What every keyed operation can answer: no key or a bad one, a database that is out for the moment, and our own failure. */
export const KEYED_ERRORS = [
  'missing_api_key',
  'invalid_api_key',
  'storage_unavailable',
  'internal_error',
] as const satisfies readonly ErrorCode[];
/** What a JSON body, or any request line, can be refused for. */
export const REQUEST_ERRORS = ['invalid_json', 'invalid_request', 'payload_too_large'] as const satisfies readonly ErrorCode[];
/** What a read through from_phone can answer: the key, the request, and from_phone not a phone or not the account's. */
export const NUMBER_READ_ERRORS = [
  ...KEYED_ERRORS,
  ...REQUEST_ERRORS,
  'invalid_phone_number',
  'phone_not_owned',
] as const satisfies readonly ErrorCode[];
/**
 * What a rehearsal on a sandbox number can answer: the key, the request, the phone not a phone or
 * not the account's, the account's number on another engine (its people write from the real
 * network), the account's rehearsals per minute spent, or its session down.
 */
export const SANDBOX_ERRORS = [
  ...KEYED_ERRORS,
  ...REQUEST_ERRORS,
  'invalid_phone_number',
  'phone_not_owned',
  'capability_not_supported',
  'rate_limited',
  'number_not_connected',
] as const satisfies readonly ErrorCode[];
/**
 * What acting through a number's session can answer: not the account's, down, held back by
 * WhatsApp, or not a capability of its engine (a Cloud API number has no groups; Meta refused).
 */
export const SESSION_ERRORS = [
  'invalid_phone_number',
  'phone_not_owned',
  'number_not_connected',
  'rate_limited',
  'capability_not_supported',
  'cloud_api_refused',
] as const satisfies readonly ErrorCode[];

/**
 * An operation's error responses: one per status its codes have, each allowing exactly the
 * operation's codes of that status and saying what each means (the envelope is schemas.ts's).
 */
export function errorResponsesFor(codes: readonly ErrorCode[]): Record<number, object> {
  const unique = [...new Set(codes)];
  const statuses = [...new Set(unique.map((code) => errorCatalogue[code].status))].sort((a, b) => a - b);
  return Object.fromEntries(
    statuses.map((status) => [status, errorResponseOf(unique.filter((code) => errorCatalogue[code].status === status))]),
  );
}
