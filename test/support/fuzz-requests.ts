import fc from 'fast-check';

/**
 * Generators of requests to the public API, from well-formed sends to hostile bytes. They only
 * steer the mix: what each request must get is worked out from its bytes by fuzz-oracle.ts, so a
 * generator that produces something unexpected cannot make the test wrong, only less varied.
 */

/** What the generators need to know about the gateway under test. */
export interface FuzzWorld {
  apiKey: string;
  revokedApiKey: string;
  /** Sandbox numbers of the caller's account, E.164. */
  ownedPhones: string[];
  /** Sandbox numbers of another account of the same gateway. */
  foreignPhones: string[];
  bodyLimitBytes: number;
  maxMessageLength: number;
}

/** Numbers that libphonenumber deems possible, none of them a number of the gateway. */
export const RECIPIENT_PHONES = [
  '+14155550100',
  '+447700900123',
  '+4915112345678',
  '+33612345678',
  '+5511987654321',
  '+819012345678',
  '+61412345678',
  '+8613812345678',
];

/** Digit strings that are no possible number: an unknown country code, or too short for theirs. */
export const IMPOSSIBLE_PHONE_DIGITS = ['999123456789', '1415', '44', '12', '0123456789', '4477'];

/** How a request's Authorization header should fare, as far as the generator knows. */
type AuthIntent = 'valid' | 'missing' | 'invalid' | 'missing-or-invalid';

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  /** Always bytes, so that what the server reads is exactly what was generated. */
  payload: Buffer | undefined;
  authIntent: AuthIntent;
  family: string;
}

const SEPARATORS = ['', '', '', '', ' ', '-', '.', '(', ')'];

const MAX_DIGITS = 15;

/**
 * Numbers written the many ways people write them: separators anywhere, with or without +. The
 * layout is drawn apart from the number, so that no arbitrary is built per generated value.
 */
function formattedPhone(phones: readonly string[]): fc.Arbitrary<string> {
  const layout = fc.record({
    opening: fc.constantFrom('', '', '('),
    plus: fc.boolean(),
    separators: fc.array(fc.constantFrom(...SEPARATORS), { minLength: MAX_DIGITS, maxLength: MAX_DIGITS }),
    padding: fc.constantFrom('', '', ' ', '\t', '\n '),
  });
  return fc.tuple(fc.constantFrom(...phones), layout).map(([e164, { opening, plus, separators, padding }]) => {
    const body = [...e164.slice(1)].map((digit, index) => `${digit}${separators[index]}`).join('');
    return `${padding}${opening}${plus ? '+' : ''}${body}${padding}`;
  });
}

const KNOWN_BAD_PHONES = [
  '',
  '   ',
  'abc',
  '+44 7700 900123 ext 5',
  '++447700900123',
  '+999 123 456 789',
  '+1 415',
  '+',
  '+44',
  '0800 123',
  '４４７７００９００１２３',
  '+44\u200b7700900123',
  '+44\u00a07700900123',
  '٤٤٧٧٠٠٩٠٠١٢٣',
  '+44 7700 900123\u0000',
  '+1415555010O',
  '+44/7700/900123',
  '\ud800+447700900123',
  '+44 7700 900123\u202e',
  'null',
  '+1e10',
];

function badPhone(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...KNOWN_BAD_PHONES),
    fc.constantFrom(...IMPOSSIBLE_PHONE_DIGITS).map((digits) => `+${digits}`),
    // A letter among the digits is refused whatever the digits are.
    fc
      .tuple(
        fc.constantFrom(...RECIPIENT_PHONES),
        fc.nat(),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }).filter((text) => /[^0-9 ().+\-\s]/.test(text)),
      )
      .map(([phone, at, junk]) => phone.slice(0, (at % phone.length) + 1) + junk + phone.slice((at % phone.length) + 1)),
    fc.string({ unit: 'binary', maxLength: 30 }),
  );
}

/** Digit strings whose validity only libphonenumber's metadata decides. */
function anyDigits(): fc.Arbitrary<string> {
  return fc
    .tuple(fc.boolean(), fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 17 }))
    .map(([plus, digits]) => `${plus ? '+' : ''}${digits}`);
}

const ODD_CHARACTERS = [
  '\u200f',
  '\u200e',
  '\u202e',
  '\u2066',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\u00a0',
  '\u3000',
  '\u2028',
  '\u2029',
  '😀',
  '👨‍👩‍👧‍👦',
  '🏳️‍🌈',
  'é',
  'e\u0301',
  '\uffff',
  '\ufffe',
  '\u{10ffff}',
  '\t',
  '\n',
  '\r\n',
  ' ',
  '\u0085',
  '\u001b',
  'ﷺ',
  '𝕏',
  '\u{e0001}',
  '"',
  '\\',
  '</script>',
  '\u0000',
  '\ud800',
  '\udfff',
  '\udc00\ud800',
];
const WHITESPACE = [' ', '\t', '\n', '\r', '\u00a0', '\u3000', '\u2028', '\ufeff', '\u000b', '\u000c'];

function messageText(world: FuzzWorld): fc.Arbitrary<string> {
  const max = world.maxMessageLength;
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }) },
    {
      weight: 2,
      arbitrary: fc
        .array(fc.oneof(fc.constantFrom(...ODD_CHARACTERS), fc.string({ unit: 'grapheme', maxLength: 3 })), { maxLength: 24 })
        .map((parts) => parts.join('')),
    },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...WHITESPACE), { maxLength: 8 }).map((parts) => parts.join('')) },
    // Both sides of the length limit, counted in code points of one to four UTF-8 bytes.
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.integer({ min: -2, max: 2 }), fc.constantFrom('a', 'é', '€', '😀', '\u200b'))
        .map(([delta, unit]) => unit.repeat(max + delta)),
    },
  );
}

/** A body the size of the body limit, give or take a few bytes, or far beyond it. */
function sizedText(world: FuzzWorld): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.oneof(fc.integer({ min: -64, max: 64 }), fc.integer({ min: world.bodyLimitBytes, max: world.bodyLimitBytes * 2 })),
      fc.constantFrom('a', '😀'),
    )
    .map(([delta, unit]) => unit.repeat(Math.max(0, Math.floor((world.bodyLimitBytes + delta - 80) / Buffer.byteLength(unit)))));
}

function phoneFor(world: FuzzWorld, role: 'owned' | 'any'): fc.Arbitrary<string> {
  const owned = formattedPhone(world.ownedPhones);
  const others = formattedPhone([...RECIPIENT_PHONES, ...world.foreignPhones]);
  if (role === 'owned')
    return fc.oneof({ weight: 12, arbitrary: owned }, { weight: 1, arbitrary: others }, { weight: 1, arbitrary: badPhone() });
  return fc.oneof(
    { weight: 8, arbitrary: others },
    { weight: 2, arbitrary: owned },
    { weight: 1, arbitrary: anyDigits() },
    { weight: 1, arbitrary: badPhone() },
  );
}

/** A send or receive body as a value: mostly sound, sometimes with a bad phone or message. */
function messageBody(world: FuzzWorld, receive: boolean): fc.Arbitrary<Record<string, unknown>> {
  return fc.record({
    from_phone: phoneFor(world, receive ? 'any' : 'owned'),
    to_phone: phoneFor(world, receive ? 'owned' : 'any'),
    message: messageText(world),
  });
}

/** Arbitrary JSON and the wrong types that clients send by mistake. */
function wrongValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom(null, true, false, 0, -0, 1e308, -1e-308, Number.MAX_SAFE_INTEGER, [], {}, [''], { toString: 'x' }, 447700900123),
  );
}

const FIELDS = ['from_phone', 'to_phone', 'message'];

/** Breaks a sound body the way buggy clients do: a field gone, retyped or buried in junk. */
function mutatedBody(sound: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<unknown> {
  const mutation = fc.oneof(
    fc.constantFrom(...FIELDS).map((field) => (body: Record<string, unknown>) => void delete body[field]),
    fc.tuple(fc.constantFrom(...FIELDS), wrongValue()).map(([field, value]) => (body: Record<string, unknown>) => {
      body[field] = value;
    }),
    fc.tuple(fc.string({ maxLength: 12 }), wrongValue()).map(([key, value]) => (body: Record<string, unknown>) => {
      body[key] = value;
    }),
    fc
      .constantFrom('{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}', '{"constructor":1}', '{"prototype":{}}')
      .map((json) => (body: Record<string, unknown>) => {
        body.extra = JSON.parse(json);
      }),
  );
  return fc.tuple(sound, fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.nat(9)).map(([generated, mutations, wrap]) => {
    // Generated values are replayed while shrinking, so they are copied, never changed.
    const body = { ...generated };
    for (const mutate of mutations) mutate(body);
    if (wrap === 0) return [body];
    if (wrap === 1) return { body };
    return body;
  });
}

/** Nesting far past what any parser recursion would survive, inside or instead of the body. */
function deepJson(sound: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<string> {
  return fc.tuple(fc.integer({ min: 1, max: 12_000 }), fc.constantFrom('array', 'object', 'field'), sound).map(([depth, kind, body]) => {
    const nested = kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    return kind === 'field' ? JSON.stringify({ ...body, extra: 0 }).replace('"extra":0', `"extra":${nested}`) : nested;
  });
}

const HUGE_NUMBER_LITERALS = [
  '1e999999',
  '-1e999999',
  '123456789012345678901234567890',
  `1${'0'.repeat(5_000)}`,
  '0.0000000000000000000000001',
  '-0',
  '1E+400',
];

/** Any of the body values above, as JSON text. */
function bodyText(world: FuzzWorld, receive: boolean): fc.Arbitrary<string> {
  const sound = messageBody(world, receive);
  const asJson = (value: fc.Arbitrary<unknown>) =>
    fc.tuple(value, fc.constantFrom(0, 0, 0, 2)).map(([body, indent]) => JSON.stringify(body, null, indent));
  return fc.oneof(
    { weight: 10, arbitrary: asJson(sound) },
    { weight: 5, arbitrary: asJson(mutatedBody(sound)) },
    { weight: 2, arbitrary: asJson(wrongValue()) },
    { weight: 1, arbitrary: fc.json() },
    { weight: 1, arbitrary: deepJson(sound) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(sound, fc.constantFrom(...FIELDS), fc.constantFrom(...HUGE_NUMBER_LITERALS))
        .map(([body, field, literal]) => JSON.stringify({ ...body, [field]: 0 }).replace(`"${field}":0`, `"${field}":${literal}`)),
    },
    { weight: 1, arbitrary: fc.tuple(sound, sizedText(world)).map(([body, text]) => JSON.stringify({ ...body, message: text })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(sound, fc.constantFrom('from_phone', 'to_phone'), fc.integer({ min: 1_000, max: world.bodyLimitBytes }))
        .map(([body, field, length]) => JSON.stringify({ ...body, [field]: '1'.repeat(length) })),
    },
    // Every character outside ASCII written as a \u escape, lone surrogates included.
    {
      weight: 2,
      arbitrary: asJson(sound).map((text) =>
        text.replace(/[^\x20-\x7e]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`),
      ),
    },
    // Prototype keys spelled with escapes, which a plain text search would miss.
    {
      weight: 1,
      arbitrary: fc
        .tuple(asJson(sound), fc.constantFrom('\\u005f\\u005fproto__', '__\\u0070roto\\u005F_', 'constructo\\u0072'))
        .map(([text, key]) => `${text.slice(0, -1)},"${key}":{"prototype":{}}}`),
    },
  );
}

const INVALID_UTF8 = [
  [0xff],
  [0xfe],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xe2, 0x82],
  [0x80],
  [0xc3],
  [0xf0, 0x9f, 0x98],
].map((bytes) => Buffer.from(bytes));

/** Byte-level damage: cut short, invalid UTF-8 spliced in, a byte flipped or dropped, a BOM. */
function damagedBytes(text: fc.Arbitrary<string>): fc.Arbitrary<Buffer> {
  const damage = fc.oneof(
    fc.nat().map((at) => (bytes: Buffer) => bytes.subarray(0, at % (bytes.length + 1))),
    fc.tuple(fc.nat(), fc.constantFrom(...INVALID_UTF8)).map(
      ([at, junk]) =>
        (bytes: Buffer) =>
          Buffer.concat([bytes.subarray(0, at % (bytes.length + 1)), junk, bytes.subarray(at % (bytes.length + 1))]),
    ),
    fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, value]) => (bytes: Buffer) => {
      const copy = Buffer.from(bytes);
      if (copy.length > 0) copy[at % copy.length] = value;
      return copy;
    }),
    fc
      .nat()
      .map(
        (at) => (bytes: Buffer) =>
          Buffer.concat([bytes.subarray(0, at % (bytes.length + 1)), bytes.subarray((at % (bytes.length + 1)) + 1)]),
      ),
    fc.constantFrom(1, 2).map((count) => (bytes: Buffer) => Buffer.concat([Buffer.from('\ufeff'.repeat(count)), bytes])),
    fc.constant((bytes: Buffer) => Buffer.concat([bytes, bytes])),
  );
  return fc
    .tuple(text, fc.array(damage, { minLength: 1, maxLength: 2 }))
    .map(([text, damages]) => damages.reduce<Buffer>((bytes, apply) => apply(bytes), Buffer.from(text)));
}

function payload(world: FuzzWorld, receive: boolean): fc.Arbitrary<Buffer | undefined> {
  const text = bodyText(world, receive);
  return fc.oneof(
    { weight: 16, arbitrary: text.map((json) => Buffer.from(json)) },
    { weight: 4, arbitrary: damagedBytes(text) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(undefined, Buffer.alloc(0), Buffer.from('   \r\n'), Buffer.from('\ufeff'), Buffer.from('null')),
    },
  );
}

const JSON_CONTENT_TYPES = [
  'application/json',
  'Application/JSON',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'application/json; charset=latin1',
  'application/json; charset=iso-8859-1',
  'application/json; charset=utf-16',
  'application/json;;',
  ' application/json ',
];
const OTHER_CONTENT_TYPES = [
  'text/plain',
  'text/plain; charset=utf-8',
  'text/json',
  'multipart/form-data; boundary=----x',
  'application/x-www-form-urlencoded',
  'application/jsonx',
  'application/vnd.api+json',
  'application/octet-stream',
  'application/json-patch+json',
  '',
  '*/*',
  'json',
  ';;;',
  'application/json\u00e9',
];
const TOKEN = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_.'), minLength: 1, maxLength: 12 });

function contentType(): fc.Arbitrary<string | string[] | undefined> {
  return fc.oneof(
    { weight: 20, arbitrary: fc.constant('application/json') },
    { weight: 6, arbitrary: fc.constantFrom(...JSON_CONTENT_TYPES) },
    { weight: 3, arbitrary: fc.constantFrom(...OTHER_CONTENT_TYPES) },
    { weight: 1, arbitrary: fc.tuple(TOKEN, TOKEN).map(([type, subtype]) => `${type}/${subtype}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    // Repeated headers: the server keeps the first Content-Type, as Node does.
    { weight: 1, arbitrary: fc.shuffledSubarray(['application/json', 'text/plain', 'multipart/form-data; boundary=x'], { minLength: 2 }) },
  );
}

function contentEncoding(): fc.Arbitrary<string | string[] | undefined> {
  return fc.oneof(
    { weight: 30, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'identity',
        'IDENTITY',
        ' identity ',
        '',
        'gzip',
        'br',
        'deflate',
        'compress',
        'zstd',
        'gzip, identity',
        'x-junk',
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(['identity', 'gzip'], ['identity', 'identity']).map((values) => [...values]) },
  );
}

interface AuthHeader {
  value: string | string[] | undefined;
  intent: AuthIntent;
}

function authorization(world: FuzzWorld): fc.Arbitrary<AuthHeader> {
  const key = world.apiKey;
  const header = (value: string | string[] | undefined, intent: AuthIntent): AuthHeader => ({ value, intent });
  return fc.oneof(
    { weight: 30, arbitrary: fc.constant(header(`Bearer ${key}`, 'valid')) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(`bearer ${key}`, `BEARER ${key}`, `Bearer  ${key}`, `Bearer\t${key} `)
        .map((value) => header(value, 'valid')),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(undefined, '', 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Bearer \t', key, `Token ${key}`, `Bearer${key}`)
        .map((value) => header(value, 'missing')),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.constantFrom(
            `Bearer ${key.toUpperCase()}`,
            `Bearer ${key}x`,
            `Bearer ${key.slice(0, -1)}`,
            `Bearer ${world.revokedApiKey}`,
            `Bearer ${key} ${key}`,
            `Bearer wagw_live_sk_${'é'.repeat(64)}`,
          ),
          fc
            .string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 })
            .map((hex) => `Bearer wagw_live_sk_${hex}`),
          fc.string({ maxLength: 80 }).map((junk) => `Bearer ${junk.replace(/\s/g, '')}x`),
        )
        .map((value) => header(value, 'invalid')),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }).map((value) => header(value, 'missing-or-invalid')) },
    // Node keeps the first of repeated Authorization headers; the second must change nothing.
    {
      weight: 1,
      arbitrary: fc.constantFrom(header([`Bearer ${key}`, 'Bearer junk'], 'valid'), header(['Bearer junk', `Bearer ${key}`], 'invalid')),
    },
  );
}

const RESERVED_HEADERS = new Set([
  'authorization',
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'host',
  'expect',
  'connection',
  'idempotency-key',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
]);

/** Headers no route reads, with printable values (a header value cannot carry raw control bytes). */
function junkHeaders(): fc.Arbitrary<Record<string, string | string[]>> {
  const value = fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((code) => code !== 0x7f)
      .map((code) => String.fromCharCode(code)),
    maxLength: 40,
  });
  return fc.dictionary(
    TOKEN.filter((name) => !RESERVED_HEADERS.has(name)),
    fc.oneof(value, fc.array(value, { minLength: 2, maxLength: 3 })),
    { maxKeys: 4 },
  );
}

function requestId(): fc.Arbitrary<string | string[] | undefined> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/) },
    {
      weight: 1,
      arbitrary: fc.oneof(fc.string({ maxLength: 140 }), fc.constant('x'.repeat(129)), fc.constant(['abc', 'def'] as string[])),
    },
  );
}

const MESSAGE_PATHS = ['/send_message', '/api/send_message', '/sandbox/receive', '/api/sandbox/receive'];

/** Where a request goes: mostly a message route, sometimes a slip, a bad URL or /health. */
function target(): fc.Arbitrary<{ method: string; path: string }> {
  const query = fc.oneof(
    { weight: 8, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.constantFrom('?', '?a=1', '?__proto__[x]=1', '?%zz', '?a=%ff%fe', '?message=hi&message=ho') },
  );
  const path = fc.oneof(
    { weight: 30, arbitrary: fc.constantFrom(...MESSAGE_PATHS) },
    { weight: 2, arbitrary: fc.constantFrom('/send_message/', '/api/send_message/', '/sandbox/receive/', '/send%5Fmessage') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '/send-message',
        '/SEND_MESSAGE',
        '//send_message',
        '/api',
        '/api/send_message/x',
        '/sandbox',
        '/nope',
        '/send_message%ff',
        '/%',
        '/send_message%',
      ),
    },
  );
  return fc.oneof(
    { weight: 30, arbitrary: fc.tuple(path, query).map(([route, search]) => ({ method: 'POST', path: route + search })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'), fc.constantFrom(...MESSAGE_PATHS))
        .map(([method, route]) => ({ method, path: route })),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'DELETE'), query)
        .map(([method, search]) => ({ method, path: `/health${search}` })),
    },
  );
}

/** One whole request: a target, its headers and its body. */
export function fuzzRequest(world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  // Built once: making arbitraries is far dearer than drawing from them.
  const payloads = { send: payload(world, false), receive: payload(world, true) };
  const headers = fc.record({
    auth: authorization(world),
    contentType: contentType(),
    contentEncoding: contentEncoding(),
    requestId: requestId(),
    junk: junkHeaders(),
  });
  return target().chain(({ method, path }) =>
    fc
      .tuple(headers, path.includes('/sandbox') ? payloads.receive : payloads.send)
      .map(([{ auth, contentType: type, contentEncoding: encoding, requestId: id, junk }, bytes]) => {
        const headers: Record<string, string | string[]> = { ...junk };
        if (auth.value !== undefined) headers.authorization = auth.value;
        if (type !== undefined) headers['content-type'] = type;
        if (encoding !== undefined) headers['content-encoding'] = encoding;
        if (id !== undefined) headers['x-request-id'] = id;
        const request: FuzzRequest = { method, url: path, headers, payload: bytes, authIntent: auth.intent, family: `${method} ${path}` };
        // A failure report shows this summary rather than every byte of a 100 KiB body.
        return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) });
      }),
  );
}

/** How a request reads in a failure report: the bytes of a long body are summarised. */
export function describeRequest(request: FuzzRequest): string {
  const body =
    request.payload === undefined
      ? '(none)'
      : request.payload.length > 300
        ? `${request.payload.length} bytes: ${JSON.stringify(request.payload.subarray(0, 300).toString('latin1'))}…`
        : JSON.stringify(request.payload.toString('latin1'));
  return `${request.method} ${request.url}\nheaders: ${JSON.stringify(request.headers)}\nauth: ${request.authIntent}\nbody: ${body}`;
}
