import assert from 'node:assert/strict';
import { waitUntil } from '../../support/waiting.ts';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

/**
 * The document's types are the ones the gateway checks: a query string is read as the types its
 * schema declares (`limit` an integer, `since` a date-time, `direction` an enum), a body is taken
 * as sent with nothing coerced, and a send takes exactly one recipient.
 */
for (const dialect of dialects) {
  describe(`typed parameters, as the document declares them (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway, { numbers: 1 });
    });
    after(() => test?.close());

    const list = (query: string) =>
      test.inject({ method: 'GET', url: `/api/messages?${query}`, headers: { authorization: `Bearer ${account.apiKey}` } });
    const refusal = (response: { statusCode: number; json(): { error?: string; meta?: unknown } }) => [
      response.statusCode,
      response.json().error,
      response.json().meta,
    ];

    it('reads limit=2 from the query string as the integer 2', async () => {
      // Three stored messages, whatever the machine's load: a send refused for a moment (a session
      // still connecting answers 503 with Retry-After) is sent again, as a client would.
      for (const text of ['one', 'two', 'three']) {
        await waitUntil(
          async () => {
            const sent = await test.post(
              '/send_message',
              { from_phone: account.phones[0], to_phone: '+14155550100', message: text },
              account.apiKey,
            );
            if (sent.statusCode === 503) return false;
            assert.equal(sent.statusCode, 200, sent.body);
            return true;
          },
          `"${text}" sent`,
          200,
        );
      }
      const page = await list('limit=2');
      assert.deepEqual([page.statusCode, page.json().messages.length, typeof page.json().next_cursor], [200, 2, 'string']);
    });

    it('refuses a query parameter that is not of its declared type, naming the parameter and the problem', async () => {
      assert.deepEqual(refusal(await list('limit=ten')), [400, 'invalid_request', { field: 'limit', problem: 'not_an_integer' }]);
      assert.deepEqual(refusal(await list('limit=101')), [400, 'invalid_request', { field: 'limit', problem: 'too_large' }]);
      assert.deepEqual(refusal(await list('direction=sideways')), [400, 'invalid_request', { field: 'direction', problem: 'not_allowed' }]);
      const noZone = await list('since=2026-11-25T09:30:00');
      assert.deepEqual(refusal(noZone), [400, 'invalid_request', { field: 'since', problem: 'invalid' }]);
      assert.match(noZone.json().message, /RFC 3339/);
    });

    it('takes a body as sent: a number is not read as the phone it spells', async () => {
      const response = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: 14155550100, message: 'hi' },
        account.apiKey,
      );
      assert.deepEqual(refusal(response), [400, 'invalid_request', { field: 'to_phone', problem: 'not_a_string' }]);
    });

    it('a send names exactly one recipient: neither is missing, both are in conflict', async () => {
      const neither = await test.post('/send_message', { from_phone: account.phones[0], message: 'hi' }, account.apiKey);
      assert.deepEqual(refusal(neither), [400, 'invalid_request', { field: 'to_phone', problem: 'missing' }]);
      const both = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: '+14155550100', to_group: '120363041234567890@g.us', message: 'hi' },
        account.apiKey,
      );
      assert.deepEqual(refusal(both), [400, 'invalid_request', { field: 'to_phone', problem: 'conflict' }]);
      assert.equal(both.json().message, 'Give exactly one of the fields to_phone and to_group.');
    });
  });
}
