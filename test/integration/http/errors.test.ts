import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import type { Json } from '../../support/json.ts';

const TO = '+14155550100';

/**
 * Asserts the documented envelope: exactly error, message, request_id (the X-Request-Id) and,
 * optionally, details (a string, as the v0.1.0 contract defines it) and meta (the facts).
 */
function assertError(response: { statusCode: number; json(): Json; headers: Record<string, unknown> }, status: number, code: string) {
  assert.equal(response.statusCode, status, JSON.stringify(response.json()));
  const body = response.json();
  assert.equal(body.error, code);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  for (const key of Object.keys(body))
    assert.ok(['error', 'message', 'details', 'request_id', 'meta'].includes(key), `unexpected key ${key}`);
  assert.ok(!JSON.stringify(body).includes('    at '), 'no stack trace');
  assert.match(String(response.headers['x-request-id']), /.+/);
  assert.equal(body.request_id, response.headers['x-request-id'], 'the body names the request like the header');
  assert.ok(
    body.details === undefined || typeof body.details === 'string',
    `details is a string when present: ${JSON.stringify(body.details)}`,
  );
  assert.ok(
    body.meta === undefined || (typeof body.meta === 'object' && body.meta !== null && !Array.isArray(body.meta)),
    'meta is an object when present',
  );
  if (typeof body.meta?.field === 'string') assert.equal(body.details, body.meta.field, "a field error's details is the field");
  return body;
}

for (const dialect of dialects) {
  describe(`every row of the error table (${dialect})`, () => {
    let test: TestGateway;
    let caller: SeededAccount;
    let from: string;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_MAX_MESSAGE_LENGTH: '100' });
      caller = await seedAccount(test.gateway, { numbers: 2 });
      from = caller.phones[0]!;
    });
    after(() => test.close());

    const send = (body: unknown, key: string | null = caller.apiKey, headers?: Record<string, string>) =>
      test.post('/send_message', body, key ?? undefined, headers);

    it('400 invalid_json: the body is not valid JSON', async () => {
      assertError(await send('{"from_phone": '), 400, 'invalid_json');
      assertError(await send(''), 400, 'invalid_json');
      assertError(await send(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])), 400, 'invalid_json');
    });

    it('400 invalid_request: not an object, a field missing or not a string, or not JSON', async () => {
      assert.equal(assertError(await send([]), 400, 'invalid_request').message, 'The body must be a JSON object, not an array.');
      assert.equal(assertError(await send('"a string"'), 400, 'invalid_request').message, 'The body must be a JSON object, not a string.');
      assert.equal(assertError(await send('null'), 400, 'invalid_request').message, 'The body must be a JSON object, not null.');
      assert.deepEqual(assertError(await send({ from_phone: from, message: 'x' }), 400, 'invalid_request').meta, {
        field: 'to_phone',
        problem: 'missing',
      });
      assert.deepEqual(assertError(await send({ from_phone: 447700900123, to_phone: TO, message: 'x' }), 400, 'invalid_request').meta, {
        field: 'from_phone',
        problem: 'not_a_string',
      });
      assert.deepEqual(assertError(await send({ from_phone: from, to_phone: TO, message: null }), 400, 'invalid_request').meta, {
        field: 'message',
        problem: 'not_a_string',
      });
      assert.deepEqual(assertError(await send({ from_phone: from, to_phone: TO, message: ['x'] }), 400, 'invalid_request').meta, {
        field: 'message',
        problem: 'not_a_string',
      });
      const plain = await test.inject({
        method: 'POST',
        url: '/send_message',
        headers: { authorization: `Bearer ${caller.apiKey}`, 'content-type': 'text/plain' },
        payload: 'hello',
      });
      const refusedPlain = assertError(plain, 400, 'invalid_request');
      assert.match(refusedPlain.message, /application\/json/);
      assert.deepEqual(refusedPlain.meta, { field: 'Content-Type' });
      const latin1 = await send({ from_phone: from, to_phone: TO, message: 'x' }, caller.apiKey, {
        'content-type': 'application/json; charset=iso-8859-1',
      });
      assert.deepEqual(assertError(latin1, 400, 'invalid_request').meta, { field: 'Content-Type' });
      const utf8 = await send({ from_phone: from, to_phone: TO, message: 'x' }, caller.apiKey, {
        'content-type': 'application/json; charset=UTF-8',
      });
      assert.equal(utf8.statusCode, 200, utf8.body);
      const noBody = await test.inject({ method: 'POST', url: '/send_message', headers: { authorization: `Bearer ${caller.apiKey}` } });
      assertError(noBody, 400, 'invalid_request');
    });

    it('400 invalid_request: a value out of its bounds is told its bound, not a type', async () => {
      const link = (expiresInSeconds: number) =>
        test.post('/media/med_unknown/link', { expires_in_seconds: expiresInSeconds }, caller.apiKey);
      const tooShort = assertError(await link(0), 400, 'invalid_request');
      assert.deepEqual(
        [tooShort.message, tooShort.meta],
        ['The field expires_in_seconds must be at least 1.', { field: 'expires_in_seconds', problem: 'too_small' }],
      );
      const tooLong = assertError(await link(7 * 24 * 3600 + 1), 400, 'invalid_request');
      assert.deepEqual(
        [tooLong.message, tooLong.meta],
        ['The field expires_in_seconds must be at most 604800.', { field: 'expires_in_seconds', problem: 'too_large' }],
      );
      const upload = await test.inject({
        method: 'POST',
        url: `/media?filename=${'a'.repeat(256)}`,
        headers: { authorization: `Bearer ${caller.apiKey}`, 'content-type': 'text/plain' },
        payload: 'hello',
      });
      const longName = assertError(upload, 400, 'invalid_request');
      assert.deepEqual(
        [longName.message, longName.meta],
        ['The query parameter filename must be at most 255 characters long.', { field: 'filename', problem: 'too_long' }],
      );
    });

    it('400 invalid_request: a field inside an object is named by its path, and a union by the branch the value meant', async () => {
      const refusal = async (url: string, body: unknown, method: 'POST' | 'PATCH' = 'POST') => {
        const answer = assertError(
          await test.inject({
            method,
            url,
            headers: { authorization: `Bearer ${caller.apiKey}` },
            ...(body !== undefined && { payload: body as object }),
          }),
          400,
          'invalid_request',
        );
        return [answer.message, answer.meta];
      };
      const direct = { from_phone: from, to_phone: TO };
      assert.deepEqual(await refusal('/send_message', { ...direct, poll: { options: ['a', 'b'] } }), [
        'The field poll.question is missing.',
        { field: 'poll.question', problem: 'missing' },
      ]);
      assert.deepEqual((await refusal('/send_message', { ...direct, poll: { question: 'Which?' } }))[1], {
        field: 'poll.options',
        problem: 'missing',
      });
      assert.deepEqual((await refusal('/send_message', { ...direct, location: { longitude: 1 } }))[1], {
        field: 'location.latitude',
        problem: 'missing',
      });
      // link_preview is true/false or an object: an incomplete object is told what it lacks, not that it is no boolean.
      assert.deepEqual(
        (await refusal('/send_message', { ...direct, message: 'see https://example.com', link_preview: { description: 'a' } }))[1],
        {
          field: 'link_preview.title',
          problem: 'missing',
        },
      );
      assert.deepEqual(await refusal('/send_message', { ...direct, message: 'x', link_preview: 3 }), [
        'The field link_preview must be a boolean or an object.',
        { field: 'link_preview', problem: 'not_a_boolean' },
      ]);
      // send_policy is a preset's name, a policy or null: a policy's own fault is told.
      assert.deepEqual(await refusal(`/numbers/${encodeURIComponent(from)}`, { send_policy: { min_gap_ms: -1 } }, 'PATCH'), [
        'The field send_policy.min_gap_ms must be at least 0.',
        { field: 'send_policy.min_gap_ms', problem: 'too_small' },
      ]);
      assert.equal(
        (await refusal(`/numbers/${encodeURIComponent(from)}`, { send_policy: 5 }, 'PATCH'))[0],
        'The field send_policy must be a string, an object or null.',
      );
    });

    it("400 invalid_request about the whole body names the operation's own fields, never a send's", async () => {
      const refusal = async (url: string, body: unknown, method: 'POST' | 'PATCH' = 'POST') =>
        assertError(
          await test.inject({
            method,
            url,
            headers: { authorization: `Bearer ${caller.apiKey}` },
            ...(body !== undefined && { payload: body as object }),
          }),
          400,
          'invalid_request',
        ).message;
      const number = `/numbers/${encodeURIComponent(from)}`;
      assert.equal(
        await refusal(number, {}, 'PATCH'),
        'The body sets nothing: give at least one of auto_read, reject_calls, call_reply_text, show_online, send_policy.',
      );
      assert.equal(await refusal('/typing', undefined), 'The body must be a JSON object with from_phone, to_phone, state.');
      assert.equal(await refusal('/presence/subscribe', undefined), 'The body must be a JSON object with from_phone, to_phone.');
      assert.equal(await refusal(`${number}/pause`, undefined), 'The body must be a JSON object.');
    });

    it('404 number_not_found for a path {id} names it', async () => {
      const missing = await test.inject({
        method: 'PATCH',
        url: '/numbers/num_00000000000000000000000000',
        headers: { authorization: `Bearer ${caller.apiKey}` },
        payload: { auto_read: true },
      });
      const body = assertError(missing, 404, 'number_not_found');
      assert.deepEqual([body.details, body.meta], ['id', { field: 'id' }]);
    });

    it('400 invalid_phone_number: details and meta name the field', async () => {
      for (const bad of ['12', 'abc', '+44 7700 900123 ext 5', '++447700900123', '+999123456789', '']) {
        const body = assertError(await send({ from_phone: from, to_phone: bad, message: 'x' }), 400, 'invalid_phone_number');
        assert.deepEqual(body.meta, { field: 'to_phone' }, `for "${bad}"`);
      }
      assert.deepEqual(assertError(await send({ from_phone: '0800 123', to_phone: TO, message: 'x' }), 400, 'invalid_phone_number').meta, {
        field: 'from_phone',
      });
    });

    it('400 empty_message: empty or only whitespace', async () => {
      for (const message of ['', '   ', '\n\t \r\n']) {
        assertError(await send({ from_phone: from, to_phone: TO, message }), 400, 'empty_message');
      }
    });

    it('400 message_too_long: meta gives the limit', async () => {
      const body = assertError(await send({ from_phone: from, to_phone: TO, message: 'a'.repeat(101) }), 400, 'message_too_long');
      assert.deepEqual(body.meta, { field: 'message', limit: 100 });
      const atLimit = await send({ from_phone: from, to_phone: TO, message: '€'.repeat(100) });
      assert.equal(atLimit.statusCode, 200, 'exactly the limit is accepted');
    });

    it('401 missing_api_key: no Authorization header, or not Bearer', async () => {
      assertError(await send({ from_phone: from, to_phone: TO, message: 'x' }, null), 401, 'missing_api_key');
      assertError(
        await send({ from_phone: from, to_phone: TO, message: 'x' }, null, { authorization: `Basic ${caller.apiKey}` }),
        401,
        'missing_api_key',
      );
      assertError(
        await send({ from_phone: from, to_phone: TO, message: 'x' }, null, { authorization: caller.apiKey }),
        401,
        'missing_api_key',
      );
    });

    it('401 invalid_api_key: malformed, unknown or revoked', async () => {
      const body = { from_phone: from, to_phone: TO, message: 'x' };
      assertError(await send(body, 'wagw_live_sk_short'), 401, 'invalid_api_key');
      assertError(await send(body, caller.apiKey.toUpperCase()), 401, 'invalid_api_key');
      assertError(await send(body, `wagw_live_sk_${'0'.repeat(64)}`), 401, 'invalid_api_key');
      const revoked = await test.gateway.apiKeys.createKey({ accountId: caller.accountId });
      await test.gateway.apiKeys.revokeKey(operatorScope(), revoked.apiKey.id);
      assertError(await send(body, revoked.plaintext), 401, 'invalid_api_key');
    });

    it("403 phone_not_owned: from_phone is not a number of the caller's account", async () => {
      const other = await seedAccount(test.gateway);
      assertError(await send({ from_phone: other.phones[0], to_phone: TO, message: 'x' }), 403, 'phone_not_owned');
      assertError(await send({ from_phone: '+12025550123', to_phone: TO, message: 'x' }), 403, 'phone_not_owned');
    });

    it('404 not_found: an unknown path, in the envelope', async () => {
      assertError(await test.inject({ method: 'GET', url: '/nowhere' }), 404, 'not_found');
      assertError(await test.inject({ method: 'GET', url: '/send_message' }), 404, 'not_found');
    });

    it('413 payload_too_large: the body is over the limit', async () => {
      const body = assertError(await send({ from_phone: from, to_phone: TO, message: 'a'.repeat(1024 * 1024) }), 413, 'payload_too_large');
      assert.deepEqual(body.meta, { limit_bytes: 1048576 });
      assert.equal(body.details, 'limit_bytes: 1048576', 'without a field, details puts the facts in words');
    });

    it('429 quota_exceeded: meta gives plan, used, limit and the reset instant', async () => {
      const capped = await seedAccount(test.gateway, { monthlyLimit: 1 });
      const body = { from_phone: capped.phones[0], to_phone: TO, message: 'x' };
      assert.equal((await send(body, capped.apiKey)).statusCode, 200);
      const refused = assertError(await send(body, capped.apiKey), 429, 'quota_exceeded');
      assert.equal(refused.meta.plan, 'starter');
      assert.equal(refused.meta.used, 1);
      assert.equal(refused.meta.limit, 1);
      assert.match(refused.meta.resets_at, /^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    });

    it('503 number_not_connected: meta gives the session status, and when to retry as every 503 does', async () => {
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), caller.phones[1]!, 'disconnected');
      const refused = await send({ from_phone: caller.phones[1], to_phone: TO, message: 'x' });
      const body = assertError(refused, 503, 'number_not_connected');
      assert.deepEqual(body.meta, { from_phone: body.meta.from_phone, status: 'disconnected', retry_after_seconds: 2 });
      assert.equal(refused.headers['retry-after'], '2');
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), caller.phones[1]!, 'connected');
      assert.equal((await send({ from_phone: caller.phones[1], to_phone: TO, message: 'x' })).statusCode, 200);
    });

    it('/health answers 503 stopping, with Retry-After, once the node begins to stop, at both prefixes', async () => {
      const stopping = await startTestGateway(dialect);
      try {
        assert.equal((await stopping.inject({ method: 'GET', url: '/health' })).statusCode, 200);
        await stopping.gateway.runtime.stop();
        for (const url of ['/health', '/api/health']) {
          const health = await stopping.inject({ method: 'GET', url });
          assert.equal(health.statusCode, 503, url);
          assert.deepEqual(health.json(), { ok: false, stopping: true });
          assert.equal(health.headers['retry-after'], '5');
        }
      } finally {
        await stopping.app.close();
        await stopping.database.drop();
      }
    });

    it('500 internal_error: masked, with the request id in the body', async () => {
      const broken = await startTestGateway(dialect);
      const account = await seedAccount(broken.gateway);
      await broken.gateway.store.close();
      const response = await broken.post('/send_message', { from_phone: account.phones[0], to_phone: TO, message: 'x' }, account.apiKey);
      const body = assertError(response, 500, 'internal_error');
      assert.equal(body.meta, undefined);
      assert.equal(body.request_id, response.headers['x-request-id']);
      const health = await broken.inject({ method: 'GET', url: '/health' });
      assert.equal(health.statusCode, 503);
      assert.deepEqual(health.json(), { ok: false });
      assert.equal(health.headers['retry-after'], '5', "every 503 says when to ask again, /health's too");
      const logged = broken.logLines.map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message: string } });
      const healthFailure = logged.find((line) => line.msg === 'the database did not answer the health check');
      assert.ok(healthFailure, 'a failing health check logs why');
      assert.equal(healthFailure.level, 50);
      assert.ok(healthFailure.err?.message, 'the log line carries the database error');
      await broken.app.close();
      await broken.database.drop();
    });
  });

  describe(`the order of checks: auth, body, ownership, quota, engine (${dialect})`, () => {
    let test: TestGateway;
    let caller: SeededAccount;
    let other: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      caller = await seedAccount(test.gateway, { monthlyLimit: 0 });
      other = await seedAccount(test.gateway);
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), caller.phones[0]!, 'disconnected');
    });
    after(() => test.close());

    it('a bad key outranks a bad body', async () => {
      assertError(await test.post('/send_message', '{broken', 'nope'), 401, 'invalid_api_key');
      assertError(await test.post('/send_message', '{broken', undefined), 401, 'missing_api_key');
    });

    it('a bad body outranks a number of another account', async () => {
      assertError(
        await test.post('/send_message', { from_phone: other.phones[0], to_phone: TO, message: ' ' }, caller.apiKey),
        400,
        'empty_message',
      );
    });

    it("another account's number outranks an exhausted quota", async () => {
      assertError(
        await test.post('/send_message', { from_phone: other.phones[0], to_phone: TO, message: 'x' }, caller.apiKey),
        403,
        'phone_not_owned',
      );
    });

    it('an exhausted quota outranks a disconnected session', async () => {
      assertError(
        await test.post('/send_message', { from_phone: caller.phones[0], to_phone: TO, message: 'x' }, caller.apiKey),
        429,
        'quota_exceeded',
      );
    });
  });
}
