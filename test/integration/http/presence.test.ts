import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import type { SandboxSimulator } from '../../../src/engines/sandbox/sandbox-simulator.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { waitForValue } from '../../support/waiting.ts';

const CONTACT = '+14155550133';

// Presence on the sandbox: a subscription hears the simulated contact online, and show_online is
// shown through the number's session.
for (const dialect of dialects) {
  describe(`presence on a sandbox number (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;
    let receiver: WebhookReceiver;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      account = await seedAccount(test.gateway);
      other = await seedAccount(test.gateway);
      receiver = await WebhookReceiver.start();
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: receiver.url('/presence'),
        eventTypes: ['presence.update'],
      });
      test.gateway.deliveryWorker.start();
    });
    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    it('a subscription is answered, and presence.update hears the contact available', async () => {
      const response = await test.post(
        '/presence/subscribe',
        { from_phone: account.phones[0], to_phone: '+1 415 555 0133' },
        account.apiKey,
      );
      assert.deepEqual(
        [response.statusCode, response.json()],
        [200, { from_phone: account.phones[0], to_phone: CONTACT, subscribed: true }],
      );
      const [request] = await receiver.waitForRequests(1);
      const event = JSON.parse(request!.body);
      assert.deepEqual(
        [event.event, event.phone, event.contact_phone, event.contact_lid, event.group, event.presence, event.last_seen],
        ['presence.update', account.phones[0], CONTACT, null, null, 'available', null],
      );
    });

    it('GET /presence/{phone_or_lid} reads back what the number last heard; nothing heard is presence null', async () => {
      const read = (who: string, key = account.apiKey, from = account.phones[0]!) =>
        test.inject({
          method: 'GET',
          url: `/api/presence/${encodeURIComponent(who)}?from_phone=${encodeURIComponent(from)}`,
          headers: { authorization: `Bearer ${key}` },
        });
      const quiet = await read('+14155550134');
      assert.deepEqual(
        [quiet.statusCode, quiet.json()],
        [
          200,
          { from_phone: account.phones[0], phone: '+14155550134', lid: null, presence: null, group: null, last_seen: null, heard_at: null },
        ],
      );
      const subscribed = await test.post(
        '/presence/subscribe',
        { from_phone: account.phones[0], to_phone: '14155550135@c.us' },
        account.apiKey,
      );
      assert.deepEqual([subscribed.statusCode, subscribed.json().to_phone], [200, '+14155550135'], subscribed.body);
      // The simulated contact's first report follows the answer.
      const heard = await waitForValue(async () => {
        const response = await test.inject({
          method: 'GET',
          url: `/presence/14155550135@s.whatsapp.net?from_phone=${encodeURIComponent(account.phones[0]!)}`,
          headers: { authorization: `Bearer ${account.apiKey}` },
        });
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json() as {
          phone: string;
          presence: string | null;
          group: unknown;
          last_seen: string | null;
          heard_at: string;
        };
        return body.presence === null ? undefined : body;
      }, 'the contact to be heard');
      assert.deepEqual([heard.phone, heard.presence, heard.group, heard.last_seen], ['+14155550135', 'available', null, null]);
      assert.ok(Date.parse(heard.heard_at) <= Date.now(), heard.heard_at);
      const notYours = await read('+14155550135', other.apiKey);
      assert.deepEqual([notYours.statusCode, notYours.json().error], [403, 'phone_not_owned']);
      const notAPerson = await read('someone');
      assert.deepEqual([notAPerson.statusCode, notAPerson.json().error], [400, 'invalid_phone_number']);
    });

    it('show_online is stored, shown through the session at once, and answered with the number', async () => {
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
      const shown = () => (test.gateway.supervisor.simulatorFor(number) as SandboxSimulator).shownOnline(number);
      assert.equal(shown(), undefined);
      const on = await test.inject({
        method: 'PATCH',
        url: `/api/numbers/${encodeURIComponent(account.phones[0]!)}`,
        payload: { show_online: true },
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.deepEqual([on.statusCode, on.json().show_online], [200, true], on.body);
      assert.equal(shown(), true);
      assert.equal((await test.gateway.numbers.findNumber(operatorScope(), number.id)).showOnline, true);

      // A session that is down keeps the setting for its next connection rather than refusing it.
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), number.id, 'disconnected');
      try {
        const off = await test.inject({
          method: 'PATCH',
          url: `/numbers/${number.id}`,
          payload: { show_online: false },
          headers: { authorization: `Bearer ${account.apiKey}` },
        });
        assert.deepEqual([off.statusCode, off.json().show_online], [200, false], off.body);
      } finally {
        await test.gateway.numbers.setSimulatedStatus(operatorScope(), number.id, 'connected');
      }
    });

    it("refuses bad phones, another account's number and a session that is down", async () => {
      const cases: [object, number, string][] = [
        [{ from_phone: account.phones[0], to_phone: 'nope' }, 400, 'invalid_phone_number'],
        [{ from_phone: account.phones[0] }, 400, 'invalid_request'],
        [{ from_phone: account.phones[0], to_phone: CONTACT, silently: true }, 400, 'invalid_request'],
        [{ from_phone: other.phones[0], to_phone: CONTACT }, 403, 'phone_not_owned'],
      ];
      for (const [body, status, error] of cases) {
        const response = await test.post('/presence/subscribe', body, account.apiKey);
        assert.deepEqual([response.statusCode, response.json().error], [status, error], JSON.stringify(body));
      }
      const shownByStranger = await test.inject({
        method: 'PATCH',
        url: `/numbers/${encodeURIComponent(account.phones[0]!)}`,
        payload: { show_online: true },
        headers: { authorization: `Bearer ${other.apiKey}` },
      });
      assert.deepEqual([shownByStranger.statusCode, shownByStranger.json().error], [404, 'number_not_found']);
      await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'disconnected');
      try {
        const down = await test.post('/presence/subscribe', { from_phone: account.phones[0], to_phone: CONTACT }, account.apiKey);
        assert.deepEqual([down.statusCode, down.json().error], [503, 'number_not_connected']);
      } finally {
        await test.gateway.numbers.setSimulatedStatus(operatorScope(), account.phones[0]!, 'connected');
      }
    });
  });
}
