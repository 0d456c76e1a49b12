import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { ErrorCode } from '../../../src/domain/errors.ts';
import { listMessages } from '../../../src/store/repositories/message-pages.ts';
import { withTimeout } from '../../process/raw-http.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { seedFuzzCaller } from '../../support/fuzz-world.ts';
import { assertAnswer, expectationFor, type Outcome, type RouteName } from '../../support/fuzz-oracle.ts';
import { describeRequest, fuzzRequest, type FuzzRequest, type FuzzWorld } from '../../support/fuzz-requests.ts';

// Runs alone: its thousands of requests hold the event loop for most of a second at a time.

/**
 * Property-based requests against the real app through `inject`: every answer is a 200 for a
 * valid request or the documented 4xx in the error envelope, never a 5xx, a crash or a hang.
 *
 * WAGW_FUZZ_SEED replays a run (the seed is printed on failure); WAGW_FUZZ_RUNS changes the
 * number of requests per dialect. The default, 5,000 on each dialect, makes 10,000 per run: on
 * the two shared cores of a test machine, 10,000 on each took two minutes or more per dialect,
 * most of it waiting for the fsync of the accepted sends. The limits are lowered from their
 * defaults so that bodies on both sides of them are cheap enough to send thousands of times.
 */
const RUNS_PER_DIALECT = Number(process.env.WAGW_FUZZ_RUNS ?? 5_000);
const SEED = Number(process.env.WAGW_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const BODY_LIMIT_BYTES = 65_536;
const MAX_MESSAGE_LENGTH = 4_096;
const ANSWER_TIMEOUT_MS = 10_000;

/** Every answer the generators can provoke; each must turn up in a full run, or the mix has rotted. */
const REACHABLE: Outcome[] = [
  200,
  'invalid_json',
  'invalid_request',
  'invalid_phone_number',
  'empty_message',
  'message_too_long',
  'missing_api_key',
  'invalid_api_key',
  'phone_not_owned',
  'not_found',
  'payload_too_large',
];
const OPENAPI_PATHS: Record<string, string> = { send: '/send_message', receive: '/sandbox/receive', health: '/health' };

interface Accepted {
  id: string;
  route: 'send' | 'receive';
  text: string;
  toPhone: string;
}

function plain(method: string, url: string, headers: Record<string, string>, payload: Buffer | undefined): FuzzRequest {
  return { method, url, headers, payload, authIntent: 'valid', family: `${method} ${url}` };
}

for (const dialect of dialects) {
  describe(`fuzzed requests to the public API (${dialect})`, () => {
    let test: TestGateway;
    let caller: SeededAccount;
    let other: SeededAccount;
    let world: FuzzWorld;
    const documentedStatuses = new Map<RouteName, Set<number>>();
    const accepted: Accepted[] = [];
    const seen = new Map<Outcome, number>();

    before(async () => {
      test = await startTestGateway(dialect, {
        WAGW_BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES),
        WAGW_MAX_MESSAGE_LENGTH: String(MAX_MESSAGE_LENGTH),
        // The fuzzer sends thousands of simulated messages as one account; the rate limit has tests of its own.
        WAGW_SANDBOX_RECEIVES_PER_MINUTE: '1000000',
        LOG_LEVEL: 'warn',
      });
      other = await seedAccount(test.gateway, { numbers: 1 });
      ({ caller, world } = await seedFuzzCaller(test.gateway, {
        foreignPhones: other.phones,
        bodyLimitBytes: BODY_LIMIT_BYTES,
        maxMessageLength: MAX_MESSAGE_LENGTH,
      }));
      const openapi = test.app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
      for (const [route, path] of Object.entries(OPENAPI_PATHS)) {
        const operation = Object.values(openapi.paths[path] ?? {})[0];
        assert.ok(operation !== undefined, `the OpenAPI document describes ${path}`);
        documentedStatuses.set(route as RouteName, new Set(Object.keys(operation.responses).map(Number)));
      }
      // Requests that reach no route answer with the router's own two codes.
      documentedStatuses.set('unknown', new Set([404]));
      documentedStatuses.set('bad-url', new Set([400]));
    });
    after(() => test.close());

    it(`${RUNS_PER_DIALECT} generated requests each get a 200 if valid, else the documented 4xx in the envelope`, async (t) => {
      const property = fc.asyncProperty(fuzzRequest(world), async (request) => {
        const expected = expectationFor(request, world);
        const response = await withTimeout(
          test.inject({
            method: request.method as 'POST',
            url: request.url,
            headers: request.headers,
            ...(request.payload !== undefined && { payload: request.payload }),
          }),
          ANSWER_TIMEOUT_MS,
          `an answer to ${request.family}`,
        );
        try {
          assertAnswer(request, expected, response, documentedStatuses.get(expected.route)!);
        } catch (error) {
          const context = `${describeRequest(request)}\nexpected one of: ${[...expected.allowed].join(', ')}`;
          throw new Error(`${(error as Error).message}\n${context}`, { cause: error });
        }
        // A HEAD answer has no body; its status was checked against the expected answer above.
        const outcome: Outcome =
          response.statusCode === 200 ? 200 : request.method === 'HEAD' ? [...expected.allowed][0]! : (response.json().error as ErrorCode);
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
        if (response.statusCode === 200 && (expected.route === 'send' || expected.route === 'receive')) {
          const answer = response.json();
          accepted.push({ id: answer.message_id, route: expected.route, text: answer.message, toPhone: answer.to_phone });
        }
      });
      try {
        await fc.assert(property, { numRuns: RUNS_PER_DIALECT, seed: SEED });
      } catch (error) {
        (error as Error).message = `Reproduce with WAGW_FUZZ_SEED=${SEED}\n${(error as Error).message}`;
        throw error;
      }
      t.diagnostic(
        `seed ${SEED}; answers: ${[...seen]
          .sort((a, b) => b[1] - a[1])
          .map(([outcome, count]) => `${outcome} ${count}`)
          .join(', ')}`,
      );
      if (RUNS_PER_DIALECT >= 2_000) {
        assert.deepEqual(
          REACHABLE.filter((outcome) => !seen.has(outcome)),
          [],
          'every reachable answer turned up',
        );
        assert.ok((seen.get(200) ?? 0) >= RUNS_PER_DIALECT * 0.1, 'valid requests are a good share of the mix');
      }
    });

    it('each request the fuzzer once found mishandled gets its documented answer', async () => {
      const key = `Bearer ${world.apiKey}`;
      const body = Buffer.from(JSON.stringify({ from_phone: world.ownedPhones[0], to_phone: '+14155550100', message: 'hi' }));
      const json = { authorization: key, 'content-type': 'application/json' };
      const findings: [string, FuzzRequest, Outcome][] = [
        ['a malformed %-escape in the path', plain('POST', '/send_message%ff', json, body), 'invalid_request'],
        ['a malformed %-escape in the query string', plain('POST', '/send_message?phone=%ZZ', json, body), 'invalid_request'],
        ['a query string escape that is not UTF-8', plain('GET', '/health?a=%E0%A4%A', {}, undefined), 'invalid_request'],
        ['a method the path does not serve, with a JSON type and no body', plain('OPTIONS', '/send_message', json, undefined), 'not_found'],
        ['an unknown path with a body over the limit', plain('POST', '/nope', json, Buffer.alloc(BODY_LIMIT_BYTES + 1, 0x20)), 'not_found'],
        [
          'a Content-Type the router cannot parse, on an unknown path',
          plain('POST', '/SEND_MESSAGE', { ...json, 'content-type': ';;;' }, Buffer.from('{}')),
          'not_found',
        ],
        ['a compressed body', plain('POST', '/send_message', { ...json, 'content-encoding': 'gzip' }, body), 'invalid_request'],
        ['two byte order marks', plain('POST', '/send_message', json, Buffer.concat([Buffer.from('\ufeff\ufeff'), body])), 'invalid_json'],
        ['one byte order mark', plain('POST', '/send_message', json, Buffer.concat([Buffer.from('\ufeff'), body])), 200],
        [
          'a key followed by more words',
          { ...plain('POST', '/send_message', { ...json, authorization: `${key} ${world.apiKey}` }, body), authIntent: 'invalid' },
          'invalid_api_key',
        ],
      ];
      for (const [finding, request, outcome] of findings) {
        const expected = expectationFor(request, world);
        assert.deepEqual([...expected.allowed], [outcome], `the oracle agrees on ${finding}`);
        const response = await test.inject({
          method: request.method as 'POST',
          url: request.url,
          headers: request.headers,
          ...(request.payload !== undefined && { payload: request.payload }),
        });
        assertAnswer(request, expected, response, documentedStatuses.get(expected.route)!);
        if (response.statusCode === 200)
          accepted.push({ id: response.json().message_id, route: 'send', text: 'hi', toPhone: '+14155550100' });
      }
    });

    it('the server still answers /health after the run, and logged no unexpected failure', async () => {
      const response = await test.inject({ method: 'GET', url: '/health' });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), { ok: true });
      assert.deepEqual(
        test.logLines.filter((line) => JSON.parse(line).level >= 50),
        [],
        'no error was logged',
      );
    });

    it('every 200 left exactly one stored message, and no refused request left any', async () => {
      const db = test.gateway.store.db;
      const all = { limit: 1_000_000 };
      const outbound = await listMessages(db, { accountId: caller.accountId, direction: 'outbound', ...all });
      const sends = accepted.filter((answer) => answer.route === 'send');
      assert.deepEqual(outbound.map((message) => message.id).sort(), sends.map((answer) => answer.id).sort());
      const sentTexts = new Map(sends.map((answer) => [answer.id, answer.text]));
      for (const message of outbound) assert.equal(message.text, sentTexts.get(message.id), 'stored byte for byte');

      // A send to a sandbox number of the gateway also arrives there, as an incoming message.
      const inbound = await listMessages(db, { accountId: caller.accountId, direction: 'inbound', ...all });
      const receives = accepted.filter((answer) => answer.route === 'receive');
      const sendsToOwnNumbers = sends.filter((answer) => caller.phones.includes(answer.toPhone)).length;
      assert.equal(inbound.length, receives.length + sendsToOwnNumbers);
      const inboundIds = new Set(inbound.map((message) => message.id));
      assert.deepEqual(
        receives.filter((answer) => !inboundIds.has(answer.id)),
        [],
        'every received message is stored',
      );
      const otherInbound = await listMessages(db, { accountId: other.accountId, ...all });
      assert.equal(otherInbound.length, sends.filter((answer) => other.phones.includes(answer.toPhone)).length);
    });
  });
}
