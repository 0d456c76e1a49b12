import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { errorCodes, type ErrorCode } from '../../../src/domain/errors.ts';
import { startListeningGateway, type ListeningGateway } from '../listening-gateway.ts';
import { RawHttpConnection, request, sleep, waitFor, withTimeout, type RawResponse } from '../raw-http.ts';
import { dialects } from '../../support/databases.ts';
import { seedFuzzCaller } from '../../support/fuzz-world.ts';
import { assertAnswer, expectationFor, routeOf, type Expectation } from '../../support/fuzz-oracle.ts';
import { describeRequest, fuzzRequest, type FuzzRequest, type FuzzWorld } from '../../support/fuzz-requests.ts';
import { ignoreCutOff } from '../../support/ignore.ts';

/**
 * What `inject` cannot do: requests written byte by byte on a real socket, through Node's HTTP
 * parser. Bodies cut short of their Content-Length, repeated framing headers, a missing Host and
 * odd Expect headers must end in a documented 4xx or a closed socket, never a 5xx or a 200 for
 * half a body, and the server must go on serving everyone else.
 */
const RUNS_PER_DIALECT = Number(process.env.WAGW_FUZZ_SOCKET_RUNS ?? 150);
const SEED = Number(process.env.WAGW_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const BODY_LIMIT_BYTES = 65_536;
const MAX_MESSAGE_LENGTH = 4_096;
/** Long enough for any answer the server would give to a partial request to have arrived. */
const HOLD_MS = 100;

type Framing =
  | 'plain'
  | 'chunked'
  | 'expect-continue'
  | 'expect-other'
  | 'no-host'
  | 'repeated-length'
  | 'length-and-chunked'
  | 'bad-chunk';
type Delivery = 'whole' | 'cut-then-end' | 'cut-then-reset' | 'cut-then-hold';

/** Header values as they go on the wire: Latin-1 text without control characters. */
function fitsOnTheWire(generated: FuzzRequest): boolean {
  return (
    Object.values(generated.headers)
      .flat()
      .every((value) => /^[\t\x20-\x7e\x80-\xff]*$/.test(value)) && generated.method !== 'HEAD'
  );
}

/** The request as the server will see it: Node trims the whitespace around header values. */
function asParsed(generated: FuzzRequest): FuzzRequest {
  const trim = (value: string) => value.replace(/^[ \t]+|[ \t]+$/g, '');
  const headers = Object.fromEntries(
    Object.entries(generated.headers).map(([name, value]) => [name, Array.isArray(value) ? value.map(trim) : trim(value)]),
  );
  return { ...generated, headers };
}

function wireBytes(port: number, generated: FuzzRequest, framing: Framing, extraLength: number): { head: Buffer; body: Buffer } {
  const payload = generated.payload ?? Buffer.alloc(0);
  const chunked = framing === 'chunked' || framing === 'length-and-chunked' || framing === 'bad-chunk';
  const lines = [`${generated.method} ${generated.url} HTTP/1.1`];
  if (framing !== 'no-host') lines.push(`Host: 127.0.0.1:${port}`);
  for (const [name, value] of Object.entries(generated.headers)) for (const single of [value].flat()) lines.push(`${name}: ${single}`);
  if (!chunked || framing === 'length-and-chunked') lines.push(`Content-Length: ${payload.length + extraLength}`);
  if (framing === 'repeated-length') lines.push(`Content-Length: ${payload.length + 1}`);
  if (chunked) lines.push('Transfer-Encoding: chunked');
  if (framing === 'expect-continue') lines.push('Expect: 100-continue');
  if (framing === 'expect-other') lines.push('Expect: a-pony');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  if (!chunked) return { head, body: payload };
  const size = framing === 'bad-chunk' ? 'zz' : payload.length.toString(16);
  const chunks = payload.length === 0 ? '' : `${size}\r\n${payload.toString('latin1')}\r\n`;
  return { head, body: Buffer.from(`${chunks}0\r\n\r\n`, 'latin1') };
}

/** Framing that Node's parser refuses before any route is looked up. */
function refusedByTheParser(framing: Framing): boolean {
  return framing === 'repeated-length' || framing === 'length-and-chunked';
}

/** What a framing problem changes in the expectation of a whole request. */
function expectationOnTheWire(generated: FuzzRequest, framing: Framing, world: FuzzWorld): Expectation | 'lenient' {
  if (framing === 'bad-chunk') return 'lenient';
  const route = routeOf(generated.method, generated.url);
  const refusedAs = (code: ErrorCode): Expectation => ({ route, allowed: new Set([code]), fields: new Map() });
  if (refusedByTheParser(framing)) return refusedAs('invalid_request');
  if (framing === 'no-host') return refusedAs(route === 'unknown' ? 'not_found' : 'invalid_request');
  return expectationFor(asParsed(generated), world);
}

/** The next final answer on the connection, past any 100 Continue. */
async function finalResponse(connection: RawHttpConnection): Promise<RawResponse> {
  for (;;) {
    const response = await connection.nextResponse(10_000);
    if (response.statusCode >= 200) return response;
  }
}

/** The final answer the server has sent so far, if any, past any 100 Continue. */
async function answerSoFar(connection: RawHttpConnection): Promise<RawResponse | undefined> {
  for (;;) {
    const response = await connection.nextResponse(1).catch(() => undefined);
    if (response === undefined || response.statusCode >= 200) return response;
  }
}

function asInjectResponse(response: RawResponse): LightMyRequestResponse {
  return {
    statusCode: response.statusCode,
    headers: response.headers,
    body: response.body,
    json: () => JSON.parse(response.body),
  } as unknown as LightMyRequestResponse;
}

/**
 * Anything the server said to a request it could not have read whole: a documented 4xx, or the
 * 200 of /health, which never reads a body.
 */
function assertNoAnswerButA4xx(generated: FuzzRequest, connection: RawHttpConnection, response: RawResponse | undefined): void {
  if (response === undefined) return;
  if (response.statusCode === 200 && routeOf(generated.method, generated.url) === 'health') return;
  assert.ok(
    response.statusCode >= 400 && response.statusCode < 500,
    `a ${response.statusCode} to a request without its whole body: ${response.body}`,
  );
  const envelope = JSON.parse(response.body) as { error: ErrorCode };
  assert.equal(response.statusCode, errorCodes[envelope.error], `${envelope.error} with the table's status`);
  assert.ok(connection.bytesReceived > 0);
}

for (const dialect of dialects) {
  describe(`fuzzed requests on a real socket (${dialect})`, () => {
    let test: ListeningGateway;
    let world: FuzzWorld;

    before(async () => {
      test = await startListeningGateway(dialect, {
        WAGW_BODY_LIMIT_BYTES: String(BODY_LIMIT_BYTES),
        WAGW_MAX_MESSAGE_LENGTH: String(MAX_MESSAGE_LENGTH),
        WAGW_SANDBOX_RECEIVES_PER_MINUTE: '1000000',
      });
      ({ world } = await seedFuzzCaller(test.gateway, {
        foreignPhones: test.sender.phones,
        bodyLimitBytes: BODY_LIMIT_BYTES,
        maxMessageLength: MAX_MESSAGE_LENGTH,
      }));
    });
    after(() => test.close());

    it(`${RUNS_PER_DIALECT} requests, whole or cut short, end in a documented 4xx, a 200 if whole and valid, or a closed socket`, async () => {
      const cases = fc.record({
        request: fuzzRequest(world).filter(fitsOnTheWire),
        framing: fc.constantFrom<Framing>(
          'plain',
          'plain',
          'chunked',
          'expect-continue',
          'expect-other',
          'no-host',
          'repeated-length',
          'length-and-chunked',
          'bad-chunk',
        ),
        delivery: fc.constantFrom<Delivery>('whole', 'whole', 'cut-then-end', 'cut-then-reset', 'cut-then-hold'),
        missingBytes: fc.integer({ min: 1, max: 2_000 }),
        cutAt: fc.nat(),
      });
      const property = fc.asyncProperty(cases, async ({ request: generated, framing, delivery, missingBytes, cutAt }) => {
        const whole = delivery === 'whole';
        const { head, body } = wireBytes(test.port, generated, framing, whole ? 0 : missingBytes);
        const connection = await RawHttpConnection.open(test.port);
        try {
          await connection.write(head);
          // Cut short by at least one byte, so that no request here is ever complete.
          const sent = whole ? body : body.subarray(0, cutAt % Math.max(1, body.length));
          if (sent.length > 0) await connection.write(sent).catch(ignoreCutOff);
          if (whole) {
            const expected = expectationOnTheWire(generated, framing, world);
            if (expected === 'lenient') {
              await withTimeout(connection.closed, 5_000, 'the server to close a connection with a broken chunk').catch(ignoreCutOff);
              assertNoAnswerButA4xx(generated, connection, await answerSoFar(connection));
            } else {
              const response = await finalResponse(connection);
              assert.ok(response.statusCode < 500, `a ${response.statusCode}: ${response.body}`);
              // A request Node's parser refuses is not HTTP, so none of its headers is read.
              const seen = refusedByTheParser(framing) ? { ...asParsed(generated), headers: {} } : asParsed(generated);
              assertAnswer(seen, expected, asInjectResponse(response), new Set([200, ...Object.values(errorCodes)]));
            }
          } else if (delivery === 'cut-then-end') {
            connection.socket.end();
            await withTimeout(connection.closed, 5_000, 'the server to close a connection whose body ended early');
            assertNoAnswerButA4xx(generated, connection, await answerSoFar(connection));
          } else {
            if (delivery === 'cut-then-hold') await sleep(HOLD_MS);
            assertNoAnswerButA4xx(generated, connection, await answerSoFar(connection));
          }
        } catch (error) {
          throw new Error(`${(error as Error).message}\n${framing}, ${delivery}\n${describeRequest(generated)}`, { cause: error });
        } finally {
          connection.close();
        }
        const health = await request(test.port, { method: 'GET', path: '/health', timeoutMs: 5_000 });
        assert.equal(health.statusCode, 200, 'the next request is served');
      });
      try {
        await fc.assert(property, { numRuns: RUNS_PER_DIALECT, seed: SEED });
      } catch (error) {
        (error as Error).message = `Reproduce with WAGW_FUZZ_SEED=${SEED}\n${(error as Error).message}`;
        throw error;
      }
    });

    it('each framing the fuzzer once found answered outside the envelope gets its documented answer', async () => {
      const send: FuzzRequest = {
        method: 'POST',
        url: '/send_message',
        headers: { authorization: `Bearer ${world.apiKey}`, 'content-type': 'application/json' },
        payload: Buffer.from(JSON.stringify({ from_phone: world.ownedPhones[0], to_phone: '+14155550100', message: 'hi' })),
        authIntent: 'valid',
        family: 'POST /send_message',
      };
      const findings: [Framing, number, string | undefined][] = [
        ['no-host', 400, 'invalid_request'],
        ['expect-other', 200, undefined],
        ['length-and-chunked', 400, 'invalid_request'],
      ];
      for (const [framing, status, code] of findings) {
        const { head, body } = wireBytes(test.port, send, framing, 0);
        const connection = await RawHttpConnection.open(test.port);
        try {
          await connection.write(Buffer.concat([head, body]));
          const response = await finalResponse(connection);
          assert.equal(response.statusCode, status, `${framing}: ${response.body}`);
          assert.match(response.headers['x-request-id'] ?? '', /^req_/, `${framing} answers with a request id`);
          if (code !== undefined) assert.equal(JSON.parse(response.body).error, code);
        } finally {
          connection.close();
        }
      }
    });

    it('afterwards a send succeeds and no connection is left behind', async () => {
      const response = await request(test.port, {
        method: 'POST',
        path: '/send_message',
        apiKey: world.apiKey,
        body: { from_phone: world.ownedPhones[0], to_phone: '+14155550100', message: 'still serving' },
      });
      assert.equal(response.statusCode, 200, response.body);
      await waitFor(async () => (await test.openConnections()) === 0, 5_000, 'every fuzzed connection to be closed');
    });
  });
}
