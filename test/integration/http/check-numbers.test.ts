import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

// POST /check_numbers in the sandbox: answers, the shared cache, the per-number lookup limit,
// and every refusal, at both paths.
for (const dialect of dialects) {
  describe(`checking whether phones use WhatsApp (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_NUMBER_CHECKS_PER_MINUTE: '5' });
      account = await seedAccount(test.gateway, { numbers: 2 });
      other = await seedAccount(test.gateway);
    });

    after(() => test?.close());

    const check = (body: unknown, key = account.apiKey, path = '/check_numbers') => test.post(path, body, key);

    it('answers each phone in order, with its WhatsApp id, and remembers: the second ask is cached and costs no lookup', async () => {
      const first = await check({ from_phone: account.phones[0], phones: ['+1 415 555 0101', '+447700900999'] });
      assert.equal(first.statusCode, 200, first.body);
      assert.deepEqual(first.json().results, [
        { phone: '+14155550101', on_whatsapp: true, wa_id: '14155550101@s.whatsapp.net', cached: false },
        { phone: '+447700900999', on_whatsapp: true, wa_id: '447700900999@s.whatsapp.net', cached: false },
      ]);
      const again = await check({ from_phone: account.phones[0], phones: ['+14155550101'] }, account.apiKey, '/api/check_numbers');
      assert.deepEqual(again.json().results, [
        { phone: '+14155550101', on_whatsapp: true, wa_id: '14155550101@s.whatsapp.net', cached: true },
      ]);
    });

    it('another account’s check is not this account’s memory: cached stays false until this account has asked', async () => {
      const phone = '+14155550188';
      const asked = (key: string, fromPhone: string) =>
        check({ from_phone: fromPhone, phones: [phone] }, key).then((response) => response.json().results[0].cached);
      assert.equal(await asked(other.apiKey, other.phones[0]!), false);
      assert.equal(await asked(other.apiKey, other.phones[0]!), true);
      assert.equal(await asked(account.apiKey, account.phones[0]!), false, 'the neighbour’s check does not show');
      assert.equal(await asked(account.apiKey, account.phones[1]!), true, 'an account’s numbers share its memory');
    });

    it('past the lookup limit a number gets 429 with Retry-After, while remembered phones still answer', async () => {
      const fresh = (index: number) => `+1415555${String(2000 + index).padStart(4, '0')}`;
      const allowed = await check({ from_phone: account.phones[1], phones: [fresh(1), fresh(2), fresh(3), fresh(4), fresh(5)] });
      assert.equal(allowed.statusCode, 200, allowed.body);
      const refused = await check({ from_phone: account.phones[1], phones: [fresh(6)] });
      assert.deepEqual([refused.statusCode, refused.json().error, refused.json().meta.limit_per_minute], [429, 'rate_limited', 5]);
      assert.ok(Number(refused.headers['retry-after']) >= 1, 'Retry-After says when');
      const remembered = await check({ from_phone: account.phones[1], phones: [fresh(1)] });
      assert.deepEqual([remembered.statusCode, remembered.json().results[0].cached], [200, true], 'the cache costs nothing');
      const tooMany = await check({
        from_phone: account.phones[1],
        phones: [fresh(7), fresh(8), fresh(9), fresh(10), fresh(11), fresh(12)],
      });
      assert.deepEqual(
        [tooMany.statusCode, tooMany.json().meta.field],
        [400, 'phones'],
        'more new phones than a minute allows can never pass',
      );
    });

    it('refuses bad requests with the field at fault', async () => {
      const cases: [unknown, number, string, string | undefined][] = [
        [{ from_phone: account.phones[0], phones: [] }, 400, 'invalid_request', 'phones'],
        [
          { from_phone: account.phones[0], phones: Array.from({ length: 51 }, (_, index) => `+1415555${String(3000 + index)}`) },
          400,
          'invalid_request',
          'phones',
        ],
        [{ from_phone: account.phones[0], phones: ['+14155550101', 'call me'] }, 400, 'invalid_phone_number', 'phones[1]'],
        [{ from_phone: 'nope', phones: ['+14155550101'] }, 400, 'invalid_phone_number', 'from_phone'],
        [{ from_phone: account.phones[0] }, 400, 'invalid_request', 'phones'],
        [{ from_phone: account.phones[0], phones: [42] }, 400, 'invalid_request', 'phones[0]'],
        [{ from_phone: other.phones[0], phones: ['+14155550101'] }, 403, 'phone_not_owned', 'from_phone'],
      ];
      for (const [body, status, error, field] of cases) {
        const response = await check(body);
        assert.deepEqual(
          [response.statusCode, response.json().error, response.json().meta?.field],
          [status, error, field],
          JSON.stringify(body).slice(0, 120),
        );
      }
    });

    it('a number whose session is down answers 503 number_not_connected', async () => {
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'disconnected');
      try {
        const response = await check({ from_phone: account.phones[0], phones: ['+14155550177'] });
        assert.deepEqual(
          [response.statusCode, response.json().error, response.json().meta.status],
          [503, 'number_not_connected', 'disconnected'],
        );
      } finally {
        await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'connected');
      }
    });
  });
}
