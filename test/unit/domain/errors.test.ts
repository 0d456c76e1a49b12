import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError, errorCodes, httpStatusFor, toEnvelope, type ErrorCode } from '../../../src/domain/errors.ts';

describe('error codes and their HTTP statuses', () => {
  it('every code maps to a client or server error status', () => {
    const codes = Object.keys(errorCodes) as ErrorCode[];
    assert.ok(codes.length > 0);
    for (const code of codes) {
      const status = httpStatusFor(code);
      assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code} → ${status}`);
    }
  });

  it('every code is a lower snake_case identifier', () => {
    for (const code of Object.keys(errorCodes)) assert.match(code, /^[a-z]+(_[a-z]+)*$/);
  });

  describe('the send API codes have the statuses docs/api.md and the README promise', () => {
    const documented: [ErrorCode, number][] = [
      ['invalid_json', 400],
      ['invalid_request', 400],
      ['invalid_phone_number', 400],
      ['empty_message', 400],
      ['message_too_long', 400],
      ['missing_api_key', 401],
      ['invalid_api_key', 401],
      ['phone_not_owned', 403],
      ['not_found', 404],
      ['payload_too_large', 413],
      ['quota_exceeded', 429],
      ['number_not_connected', 503],
      ['internal_error', 500],
    ];
    for (const [code, status] of documented) {
      it(`${code} is ${status}`, () => {
        assert.equal(httpStatusFor(code), status);
      });
    }
  });

  it('the CLI-only conflicts are 409 and its missing things 404', () => {
    assert.equal(httpStatusFor('phone_already_registered'), 409);
    assert.equal(httpStatusFor('email_already_registered'), 409);
    for (const code of ['account_not_found', 'user_not_found', 'number_not_found', 'api_key_not_found'] as const) {
      assert.equal(httpStatusFor(code), 404, code);
    }
  });
});

describe('AppError and its envelope', () => {
  it('an AppError is an Error carrying its code, message and meta', () => {
    const error = new AppError('quota_exceeded', 'No volume left.', { plan: 'starter' });
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'AppError');
    assert.equal(error.code, 'quota_exceeded');
    assert.equal(error.message, 'No volume left.');
    assert.deepEqual(error.meta, { plan: 'starter' });
  });

  it('the envelope leaves details and meta out entirely when there are no facts', () => {
    const envelope = toEnvelope(new AppError('not_found', 'No such route.'), 'req_1');
    assert.deepEqual(envelope, { error: 'not_found', message: 'No such route.', request_id: 'req_1' });
    assert.equal(Object.hasOwn(envelope, 'details'), false);
    assert.equal(Object.hasOwn(envelope, 'meta'), false);
    assert.equal(JSON.stringify(envelope), '{"error":"not_found","message":"No such route.","request_id":"req_1"}');
  });

  it("a field error's details is the field's name, a string as the v0.1.0 contract has it; the facts go in meta", () => {
    assert.deepEqual(toEnvelope(new AppError('invalid_phone_number', 'Bad phone.', { field: 'to_phone' }), 'req_2'), {
      error: 'invalid_phone_number',
      message: 'Bad phone.',
      details: 'to_phone',
      request_id: 'req_2',
      meta: { field: 'to_phone' },
    });
    assert.equal(toEnvelope(new AppError('invalid_mention', 'Not a member.', { field: 'mentions[0]' }), 'req_2').details, 'mentions[0]');
  });

  it('without a field, details puts the facts in words and leaves out the null ones', () => {
    const envelope = toEnvelope(
      new AppError('media_url_blocked', 'Blocked.', { host: 'example.test', resolved_addresses: ['10.0.0.1', '10.0.0.2'], port: null }),
      'req_4',
    );
    assert.equal(envelope.details, 'host: example.test; resolved_addresses: 10.0.0.1, 10.0.0.2');
  });

  it('the envelope holds only error, message, details, request_id and meta, never a stack', () => {
    const envelope = toEnvelope(new AppError('quota_exceeded', 'No volume left.', { limit: 10 }), 'req_3');
    assert.deepEqual(Object.keys(envelope), ['error', 'message', 'details', 'request_id', 'meta']);
    assert.equal(envelope.details, 'limit: 10');
  });
});
