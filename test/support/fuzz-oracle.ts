import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { errorCatalogue, errorCodes, type ErrorCode } from '../../src/domain/errors.ts';
import { type FuzzRequest, type FuzzWorld, IMPOSSIBLE_PHONE_DIGITS, RECIPIENT_PHONES } from './fuzz-requests.ts';

/**
 * What a request must get, worked out from its bytes by the documented rules alone (the README's
 * error table and docs/api.md's order of checks), never by calling the gateway's own code.
 */

export type Outcome = 200 | ErrorCode;
export type RouteName = 'send' | 'receive' | 'health' | 'unknown' | 'bad-url';

export interface Expectation {
  route: RouteName;
  /**
   * Every answer the request may get. More than one where the rules leave it open: which of two
   * broken things is reported first, or whether libphonenumber deems a digit string possible.
   */
  allowed: Set<Outcome>;
  /** For codes that name a field, the fields `meta.field` (and so `details`) may name. */
  fields: Map<ErrorCode, Set<string>>;
  /** What a 200 must echo; a phone is undefined when only the server's metadata knows it. */
  success?: { fromPhone: string | undefined; toPhone: string | undefined; text: string };
}

/** Accumulates the answers that may come before the first check that surely fails. */
class Verdict {
  private readonly allowed = new Set<Outcome>();
  private readonly fields = new Map<ErrorCode, Set<string>>();

  constructor(private readonly route: RouteName) {}

  mayFail(code: ErrorCode, fields?: string[]): void {
    this.allowed.add(code);
    if (fields !== undefined) this.fields.set(code, new Set([...(this.fields.get(code) ?? []), ...fields]));
  }

  fail(codes: ErrorCode | ErrorCode[], fields?: string[]): Expectation {
    for (const code of [codes].flat()) this.mayFail(code, fields);
    return { route: this.route, allowed: this.allowed, fields: this.fields };
  }

  succeed(success?: Expectation['success']): Expectation {
    this.allowed.add(200);
    return { route: this.route, allowed: this.allowed, fields: this.fields, ...(success !== undefined && { success }) };
  }
}

export function routeOf(method: string, url: string): RouteName {
  const queryStart = url.indexOf('?');
  const route = routeOfPath(method, queryStart < 0 ? url : url.slice(0, queryStart));
  // A broken %-escape in the query string of a route that exists is as bad a URL as one in its path.
  if (route === 'unknown' || queryStart < 0) return route;
  try {
    decodeURIComponent(url.slice(queryStart + 1));
  } catch {
    return 'bad-url';
  }
  return route;
}

function routeOfPath(method: string, rawPath: string): RouteName {
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    return 'bad-url';
  }
  // A trailing slash is forgiven.
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  if (path === '/health') return method === 'GET' || method === 'HEAD' ? 'health' : 'unknown';
  if (path === '/send_message' || path === '/api/send_message') return method === 'POST' ? 'send' : 'unknown';
  if (path === '/sandbox/receive' || path === '/api/sandbox/receive') return method === 'POST' ? 'receive' : 'unknown';
  return 'unknown';
}

/** The names of a URL's query parameters, as the server parses them, in order. */
function queryParameterNames(url: string): string[] {
  const queryStart = url.indexOf('?');
  if (queryStart < 0) return [];
  return url
    .slice(queryStart + 1)
    .split('&')
    .filter((part) => part !== '')
    .map((part) => decodeURIComponent(part.split('=')[0]!.replace(/\+/g, ' ')));
}

/** A text the gateway refuses whatever else is wrong: U+0000 or a lone surrogate. */
function hasForbiddenText(text: string): boolean {
  return text.includes('\u0000') || /\p{Cs}/u.test(text);
}

/** The first query parameter (as the server names it) whose name or value the gateway refuses as text. */
function unstorableQueryField(url: string): string | undefined {
  const queryStart = url.indexOf('?');
  if (queryStart < 0) return undefined;
  const seen = new Map<string, number>();
  for (const part of url.slice(queryStart + 1).split('&')) {
    if (part === '') continue;
    const [rawName = '', ...rest] = part.split('=');
    const decode = (text: string) => {
      try {
        return decodeURIComponent(text.replace(/\+/g, ' '));
      } catch {
        return text;
      }
    };
    const name = decode(rawName);
    const index = seen.get(name) ?? 0;
    seen.set(name, index + 1);
    if (hasForbiddenText(name)) return 'body';
    if (hasForbiddenText(decode(rest.join('=')))) return index === 0 ? name : `${name}[${index}]`;
  }
  return undefined;
}

/** The path of a body's first string, key or value, that the gateway refuses as text; it looks 64 levels deep. */
function unstorableBodyField(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === 'string') return hasForbiddenText(value) ? path : undefined;
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unstorableBodyField(item, `${path}[${index}]`, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    if (hasForbiddenText(key)) return path === '' ? 'body' : path;
    const found = unstorableBodyField(item, path === '' ? key : `${path}.${key}`, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

type PhoneClass = { kind: 'valid'; e164: string } | { kind: 'invalid' } | { kind: 'unknown' };

/** Spaces, dashes, dots and parentheses are ignored; a plus may lead; nothing else is allowed. */
function classifyPhone(value: string, world: FuzzWorld): PhoneClass {
  const compact = value.trim().replace(/[ ().-]/g, '');
  if (!/^\+?[0-9]+$/.test(compact)) return { kind: 'invalid' };
  const digits = compact.replace('+', '');
  const known = [...RECIPIENT_PHONES, ...world.ownedPhones, ...world.foreignPhones].find((phone) => phone.slice(1) === digits);
  if (known !== undefined) return { kind: 'valid', e164: known };
  if (digits.length < 3 || IMPOSSIBLE_PHONE_DIGITS.includes(digits)) return { kind: 'invalid' };
  return { kind: 'unknown' };
}

/** A `__proto__` key, or a `constructor` object with a `prototype`, at any depth. */
function hasPrototypeKey(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Object.hasOwn(node, '__proto__')) return true;
    const constructorValue: unknown = Object.hasOwn(node, 'constructor') ? (node as { constructor: unknown }).constructor : undefined;
    if (constructorValue !== null && typeof constructorValue === 'object' && Object.hasOwn(constructorValue, 'prototype')) return true;
    pending.push(...Object.values(node));
  }
  return false;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const FIELDS = ['from_phone', 'to_phone', 'message'] as const;
/** Every body field each operation takes, as docs/api.md lists them; any other is refused as unknown. */
const ROUTE_FIELDS: Partial<Record<RouteName, readonly string[]>> = {
  send: [
    'from_phone',
    'to_phone',
    'to_group',
    'mentions',
    'message',
    'media',
    'reply_to',
    'location',
    'contacts',
    'poll',
    'view_once',
    'link_preview',
  ],
  receive: [
    'from_phone',
    'to_phone',
    'group_id',
    'mentions',
    'message',
    'media',
    'reply_to',
    'location',
    'contacts',
    'poll',
    'view_once',
    'simulate_failed_downloads',
  ],
};

export function expectationFor(request: FuzzRequest, world: FuzzWorld): Expectation {
  const route = routeOf(request.method, request.url);
  const verdict = new Verdict(route);
  if (route === 'bad-url') return verdict.fail('invalid_request');
  if (route === 'unknown') return verdict.fail('not_found');
  // Every query value and name passes the one text check, on every route (ADR 0042).
  const queryField = unstorableQueryField(request.url);
  if (route === 'health') return queryField === undefined ? verdict.succeed() : verdict.fail('invalid_request', [queryField]);

  // 1. auth, before the body is read
  if (request.authIntent === 'missing') return verdict.fail('missing_api_key');
  if (request.authIntent === 'invalid') return verdict.fail('invalid_api_key');
  if (request.authIntent === 'missing-or-invalid') return verdict.fail(['missing_api_key', 'invalid_api_key']);

  // 2. the body: media type, size, coding, UTF-8, JSON, shape
  const contentType = firstValue(request.headers['content-type']);
  const isJson = contentType !== undefined && contentType.split(';')[0]!.trim().toLowerCase() === 'application/json';
  const bytes = request.payload ?? Buffer.alloc(0);
  if (bytes.length === 0) return verdict.fail(isJson ? ['invalid_json', 'invalid_request'] : 'invalid_request');
  if (!isJson) return verdict.fail('invalid_request');
  if (bytes.length > world.bodyLimitBytes) return verdict.fail('payload_too_large');
  const codings = [request.headers['content-encoding'] ?? []]
    .flat()
    .join(',')
    .split(',')
    .map((coding) => coding.trim().toLowerCase());
  if (codings.some((coding) => coding !== '' && coding !== 'identity')) return verdict.fail('invalid_request');
  // JSON is UTF-8: a body labelled as another charset is refused, not read as something else.
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) return verdict.fail('invalid_request', ['Content-Type']);
  let value: unknown;
  try {
    // A leading byte order mark is tolerated, as the decoder's default does.
    value = JSON.parse(strictUtf8.decode(bytes));
  } catch {
    return verdict.fail('invalid_json');
  }
  if (hasPrototypeKey(value)) return verdict.fail('invalid_json');
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return verdict.fail('invalid_request');
  // Then the one text check: the query's first unstorable value, else the body's, whatever else is wrong.
  if (queryField !== undefined) return verdict.fail('invalid_request', [queryField]);
  const bodyField = unstorableBodyField(value, '');
  if (bodyField !== undefined) return verdict.fail('invalid_request', [bodyField]);
  const body = value as Record<string, unknown>;
  const wrongFields = FIELDS.filter((field) => typeof body[field] !== 'string');
  // Which of a wrong field and an unknown one is named first is the validator's choice.
  const unknownFields = Object.keys(body).filter((key) => !ROUTE_FIELDS[route]!.includes(key));
  // Neither route takes a query parameter. The schema checks the body before the query string,
  // but a missing field may be the handler's check, after it: either may be named.
  const parameters = queryParameterNames(request.url).slice(0, 1);
  if (wrongFields.length > 0 || unknownFields.length > 0)
    return verdict.fail('invalid_request', [...wrongFields, ...unknownFields, ...parameters]);
  const text = body.message as string;
  if (parameters.length > 0) return verdict.fail('invalid_request', [parameters[0]!, ...(hasForbiddenText(text) ? ['message'] : [])]);

  // 3. from_phone, then to_phone
  const phones = { from_phone: classifyPhone(body.from_phone as string, world), to_phone: classifyPhone(body.to_phone as string, world) };
  for (const field of ['from_phone', 'to_phone'] as const) {
    if (phones[field].kind === 'invalid') return verdict.fail('invalid_phone_number', [field]);
    if (phones[field].kind === 'unknown') verdict.mayFail('invalid_phone_number', [field]);
  }

  // 4. the message
  if (hasForbiddenText(text)) return verdict.fail('invalid_request', ['message']);
  if (text.trim() === '') return verdict.fail('empty_message');
  if ([...text].length > world.maxMessageLength) return verdict.fail('message_too_long');

  // 5. ownership: the sender of a send, the sandbox number of a receive
  const ownedField = route === 'send' ? phones.from_phone : phones.to_phone;
  if (ownedField.kind !== 'valid' || !world.ownedPhones.includes(ownedField.e164)) return verdict.fail('phone_not_owned');

  // The account is on an unlimited plan and sandbox numbers are always connected: no 429, no 503.
  const e164 = (phone: PhoneClass) => (phone.kind === 'valid' ? phone.e164 : undefined);
  return verdict.succeed({ fromPhone: e164(phones.from_phone), toPhone: e164(phones.to_phone), text });
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const E164_PATTERN = /^\+[1-9][0-9]{3,14}$/;

/**
 * Checks one answer against its expectation and the documented contract. `documentedStatuses`
 * are the statuses the OpenAPI document lists for the route.
 */
export function assertAnswer(
  request: FuzzRequest,
  expected: Expectation,
  response: LightMyRequestResponse,
  documentedStatuses: Set<number>,
): void {
  const status = response.statusCode;
  assert.ok(status < 500, `a ${status}, never a 5xx: ${response.body}`);
  const suppliedId = request.headers['x-request-id'];
  const echoedId = String(response.headers['x-request-id']);
  if (typeof suppliedId === 'string' && SAFE_REQUEST_ID.test(suppliedId))
    assert.equal(echoedId, suppliedId, 'a safe X-Request-Id is echoed');
  else assert.match(echoedId, /^req_[0-9a-z]{26}$/, 'a missing or unsafe X-Request-Id is replaced');
  if (request.method === 'HEAD') {
    // No body to read the code from: the status alone says which answer it was.
    assert.equal(status, expected.allowed.has(200) ? 200 : expected.route === 'bad-url' || expected.route === 'health' ? 400 : 404);
    return;
  }
  assert.match(String(response.headers['content-type']), /^application\/json/);
  if (status === 200) {
    assert.ok(expected.allowed.has(200), `200, but expected one of ${[...expected.allowed].join(', ')}: ${response.body}`);
    assertSuccessBody(expected, response.json());
    return;
  }
  const envelope = response.json() as Record<string, unknown>;
  assert.deepEqual(
    Object.keys(envelope).filter((key) => !['error', 'message', 'details', 'request_id', 'meta'].includes(key)),
    [],
    'the envelope has only error, message, details, request_id and meta',
  );
  assert.equal(envelope.request_id, response.headers['x-request-id'], 'request_id is the X-Request-Id');
  const code = envelope.error as ErrorCode;
  assert.ok(Object.hasOwn(errorCodes, code), `an error code from the table: ${String(code)}`);
  assert.equal(status, errorCodes[code], `the status of ${code} is the table's`);
  assert.ok(documentedStatuses.has(status), `${status} is documented for ${expected.route}`);
  assert.ok(
    expected.allowed.has(code),
    `${code} (${JSON.stringify(envelope.meta)}), but expected one of ${[...expected.allowed].join(', ')}`,
  );
  assert.equal(typeof envelope.message, 'string');
  assert.ok((envelope.message as string).length > 0);
  // The v0.1.0 contract's details is a string; the facts are in meta.
  assert.ok(
    envelope.details === undefined || typeof envelope.details === 'string',
    `details is a string when present, not ${JSON.stringify(envelope.details)}`,
  );
  const meta = envelope.meta as Record<string, unknown> | undefined;
  assert.ok(meta === undefined || (typeof meta === 'object' && meta !== null && !Array.isArray(meta)), 'meta is an object when present');
  if (typeof meta?.field === 'string') assert.equal(envelope.details, meta.field, "a field error's details is the field");
  // Only the keys the catalogue declares for the code, so clients can rely on them.
  const declared = 'meta' in errorCatalogue[code] ? Object.keys(errorCatalogue[code].meta as object) : [];
  for (const key of Object.keys(meta ?? {}))
    assert.ok(declared.includes(key), `${code} carries ${key}, which the catalogue does not declare`);
  const namedFields = expected.fields.get(code);
  if (namedFields !== undefined)
    assert.ok(namedFields.has(meta?.field as string), `${code} names one of ${[...namedFields].join(', ')}, not ${JSON.stringify(meta)}`);
}

function assertSuccessBody(expected: Expectation, answer: Record<string, unknown>): void {
  if (expected.route === 'health') {
    assert.deepEqual(answer, { ok: true });
    return;
  }
  const success = expected.success!;
  assert.match(String(answer.message_id), /^msg_[0-9a-z]{26}$/);
  assert.equal(new Date(String(answer.created_at)).toISOString(), answer.created_at);
  assert.equal(answer.message, success.text, 'the text comes back byte for byte');
  assert.equal(answer.status, expected.route === 'send' ? 'sent' : 'received');
  for (const [field, phone] of [
    ['from_phone', success.fromPhone],
    ['to_phone', success.toPhone],
  ] as const) {
    if (phone !== undefined) assert.equal(answer[field], phone, `${field} in E.164`);
    else assert.match(String(answer[field]), E164_PATTERN, `${field} in E.164`);
  }
  if (expected.route === 'receive') assert.equal(answer.from_lid, null);
}
