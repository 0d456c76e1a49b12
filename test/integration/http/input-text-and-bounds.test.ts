import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

/**
 * Input no field may carry, and preferences with a bound (issue 38, items 8 to 10): one text check
 * for every field, JSON or form, and a Prefer: wait that cannot overflow a timer.
 */
for (const dialect of dialects) {
  describe(`refused text and bounded input (${dialect})`, { concurrency: true }, () => {
    let test: TestGateway;
    let seeded: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      seeded = await seedAccount(test.gateway);
    });
    after(() => test.close());

    const call = (method: 'POST' | 'PATCH', url: string, body: unknown, headers: Record<string, string> = {}) =>
      test.inject({
        method,
        url,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}`, ...headers },
        payload: JSON.stringify(body),
      });
    const numberUrl = () => `/numbers/${encodeURIComponent(seeded.phones[0]!)}`;

    it('U+0000 and a lone surrogate in any free-text field are refused with a 400 naming the field, on both databases alike', async () => {
      for (const bad of ['nul\u0000', 'lone \ud800']) {
        for (const [method, url, body, field] of [
          ['PATCH', numberUrl(), { call_reply_text: bad }, 'call_reply_text'],
          ['POST', `${numberUrl()}/pause`, { reason: bad }, 'reason'],
          ['POST', '/groups', { from_phone: seeded.phones[0], subject: bad, participants: ['+14155550100'] }, 'subject'],
          [
            'POST',
            '/send_message',
            { from_phone: seeded.phones[0], to_phone: '+14155550100', poll: { question: 'q', options: ['a', bad] } },
            'poll.options[1]',
          ],
        ] as const) {
          const response = await call(method, url, body);
          assert.equal(response.statusCode, 400, `${field} ${JSON.stringify(bad)}: ${response.body}`);
          assert.equal(response.json().error, 'invalid_request');
          assert.equal(response.json().details, field);
        }
      }
      const settings = await test.inject({ method: 'GET', url: numberUrl(), headers: { authorization: `Bearer ${seeded.apiKey}` } });
      assert.equal(settings.json().call_reply_text ?? null, null, 'nothing was stored');
    });

    it('a query parameter holding U+0000 is refused the same way', async () => {
      const response = await test.inject({
        method: 'GET',
        url: '/messages?limit=%00',
        headers: { authorization: `Bearer ${seeded.apiKey}` },
      });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().details, 'limit');
    });

    it('Prefer: wait=N past a day is refused with 400 naming Prefer; a day is taken', async () => {
      const body = { from_phone: seeded.phones[0], to_phone: '+14155550100', message: 'hi' };
      for (const prefer of ['wait=3000000', 'wait=86401', `wait=${'9'.repeat(12)}`]) {
        const refused = await call('POST', '/send_message', body, { prefer });
        assert.equal(refused.statusCode, 400, `${prefer}: ${refused.body}`);
        assert.equal(refused.json().details, 'Prefer');
      }
      assert.equal((await call('POST', '/send_message', body, { prefer: 'wait=86400' })).statusCode, 200);
    });

    it("a quiet-hours time zone is stored in its canonical spelling, whatever the letters' case", async () => {
      const other = await seedAccount(test.gateway);
      const response = await test.inject({
        method: 'PATCH',
        url: `/numbers/${encodeURIComponent(other.phones[0]!)}`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${other.apiKey}` },
        payload: JSON.stringify({ send_policy: { quiet_hours: { start: '22:00', end: '06:00', time_zone: 'eUROPE/bERLIN' } } }),
      });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().send_policy.policy.quiet_hours.time_zone, 'Europe/Berlin');
    });
  });
}
