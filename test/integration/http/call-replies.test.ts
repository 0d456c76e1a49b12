import assert from 'node:assert/strict';
import { waitUntil } from '../../support/waiting.ts';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { callEventsOf } from '../../support/call-events.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';

const PERSISTENT = '+14155550177';
const ANOTHER = '+14155550178';

for (const dialect of dialects) {
  describe(`replies to rejected calls are bounded (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let receiver: WebhookReceiver;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      account = await seedAccount(test.gateway);
      receiver = await WebhookReceiver.start();
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), { url: receiver.url('/calls'), eventTypes: ['call'] });
      test.gateway.deliveryWorker.start();
    });
    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    const ring = async (from: string) => {
      const response = await test.post(
        '/sandbox/call',
        { from_phone: from, to_phone: account.phones[0], rings_for_seconds: 1 },
        account.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body);
      await callEventsOf(receiver, response.json().call_id, 2);
    };
    const repliesTo = async (phone: string) =>
      (
        await test.gateway.store.db
          .selectFrom('messages')
          .select('id')
          .where('from_phone', '=', account.phones[0]!)
          .where('to_phone', '=', phone)
          .execute()
      ).length;

    it('a caller who rings five times is replied to once', async () => {
      const set = await test.inject({
        method: 'PATCH',
        url: `/numbers/${encodeURIComponent(account.phones[0]!)}`,
        payload: { reject_calls: true, call_reply_text: 'Please write instead.' },
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.equal(set.statusCode, 200, set.body);
      for (let call = 0; call < 5; call++) await ring(PERSISTENT);
      // Another caller's reply, sent after the five calls were handled, marks that they all were.
      await ring(ANOTHER);
      await waitUntil(async () => (await repliesTo(ANOTHER)) > 0, "the other caller's reply", 25);
      assert.equal(await repliesTo(ANOTHER), 1);
      assert.equal(await repliesTo(PERSISTENT), 1, 'one reply, not one per call');
    });
  });
}
