import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { countPendingDeliveries, listAttempts, pruneDeliveryHistory } from '../../../src/store/repositories/deliveries.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { eventually, startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

for (const dialect of dialects) {
  describe(`webhook health and retention (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let receiver: WebhookReceiver;

    before(async () => {
      test = await startDeliveringGateway(dialect, webhookEnv({ WAGW_WEBHOOK_RETRY_SCHEDULE: '60' }));
      account = await seedAccount(test.gateway);
      receiver = await WebhookReceiver.start();
    });
    after(async () => {
      await test.close();
      await receiver.close();
    });

    const receive = () =>
      test.post('/sandbox/receive', { from_phone: uniquePhone(), to_phone: account.phones[0], message: 'ping' }, account.apiKey);

    it('a webhook that has failed without a success for five days is disabled, with the reason', async () => {
      receiver.responder = () => ({ status: 500 });
      const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(account.accountId), { url: receiver.url('/failing') });
      // The failing run began six days ago; the next failure must end it.
      await test.gateway.store.db
        .updateTable('webhooks')
        .set({ failing_since: Date.now() - 6 * DAY_MS })
        .where('id', '=', webhook.id)
        .execute();
      assert.equal((await receive()).statusCode, 200);
      const disabled = await eventually(async () => {
        const current = await test.gateway.webhooks.getWebhook(operatorScope(), webhook.id);
        return current.enabled ? undefined : current;
      }, 'the webhook to be disabled');
      assert.match(disabled.disabledReason ?? '', /failed since .* \(5 days\)/);
      await test.gateway.webhooks.deleteWebhook(operatorScope(), webhook.id);
    });

    it('a failure starts a failing run and a success ends it, so a webhook that recovers is never disabled', async () => {
      let answer = 500;
      receiver.responder = () => ({ status: answer });
      const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(account.accountId), { url: receiver.url('/flaky') });
      assert.equal((await receive()).statusCode, 200);
      const failing = await eventually(
        async () => (await test.gateway.webhooks.getWebhook(operatorScope(), webhook.id)).failingSince ?? undefined,
        'a failing run',
      );
      assert.ok(Date.now() - failing.getTime() < 60_000);
      answer = 200;
      assert.equal((await receive()).statusCode, 200);
      await eventually(
        async () => ((await test.gateway.webhooks.getWebhook(operatorScope(), webhook.id)).failingSince === null ? true : undefined),
        'the run to end',
      );
      assert.equal((await test.gateway.webhooks.getWebhook(operatorScope(), webhook.id)).enabled, true);
      await test.gateway.webhooks.deleteWebhook(operatorScope(), webhook.id);
    });

    it('attempts, finished deliveries and their events older than the retention are pruned; pending work is kept', async () => {
      receiver.responder = () => ({ status: 200 });
      const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(account.accountId), { url: receiver.url('/kept') });
      assert.equal((await receive()).statusCode, 200);
      const [delivered] = await eventually(async () => {
        const deliveries = await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id);
        return deliveries[0]?.delivery.state === 'delivered' ? deliveries : undefined;
      }, 'a delivered delivery');
      // A failure with a 60 s retry delay leaves a delivery pending for the rest of the test.
      receiver.responder = () => ({ status: 503 });
      assert.equal((await receive()).statusCode, 200);
      await eventually(async () => {
        const deliveries = await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id);
        return deliveries.some((entry) => entry.delivery.state === 'pending' && entry.attempts.length === 1) ? true : undefined;
      }, 'a failed first attempt');
      const pendingBefore = await countPendingDeliveries(test.gateway.store.db);
      assert.ok(pendingBefore >= 1, 'a delivery is pending');

      await pruneDeliveryHistory(test.gateway.store.db, new Date(Date.now() - DAY_MS));
      assert.equal((await listAttempts(test.gateway.store.db, delivered!.delivery.id)).length, 1, 'recent history is kept');

      await pruneDeliveryHistory(test.gateway.store.db, new Date(Date.now() + DAY_MS));
      assert.equal((await listAttempts(test.gateway.store.db, delivered!.delivery.id)).length, 0);
      const remaining = await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id);
      assert.deepEqual(
        remaining.map((entry) => entry.delivery.state),
        ['pending'],
        'only the pending delivery is left',
      );
      assert.equal(await countPendingDeliveries(test.gateway.store.db), pendingBefore);
    });
  });
}
