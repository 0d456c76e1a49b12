import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import { payloadOf, webhookEnv } from '../../support/delivery-support.ts';

const METRICS_TOKEN = 'metrics-token-for-the-sandbox-quiet-session';

// A session that looks open and delivers nothing, rehearsed on the sandbox (issue 42 item 6):
// the number shows connected while what is sent to it waits on the network; at the rehearsal's
// end it is restarted as the Baileys watchdog restarts a quiet session (its reason, the event and
// the metric), and what waited arrives.
for (const dialect of dialects) {
  describe(`a sandbox session that goes quiet (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let account: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { ...webhookEnv(), WAGW_METRICS_TOKEN: METRICS_TOKEN }, { sandboxDeliveryWaitMs: 50 });
      test.gateway.deliveryWorker.start();
      receiver = await WebhookReceiver.start();
      account = await seedAccount(test.gateway, { numbers: 2 });
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: receiver.url(),
        eventTypes: ['session.status', 'message'],
      });
    });

    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    it('looks connected, holds what is sent to it, and is restarted at the end with the reason, the event and the metric', async () => {
      const [quietPhone, otherPhone] = account.phones as [string, string];
      const rehearsed = await test.post(
        '/sandbox/restrict',
        { phone: quietPhone, kind: 'quiet_session', lift_after_seconds: 1 },
        account.apiKey,
      );
      assert.equal(rehearsed.statusCode, 200, rehearsed.body);
      const quiet = await test.gateway.numbers.findNumber(operatorScope(), quietPhone);
      assert.equal(quiet.status, 'connected', 'it looks open');

      const sent = await test.post(
        '/send_message',
        { from_phone: otherPhone, to_phone: quietPhone, message: 'are you there?' },
        account.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);

      const isStatus = (status: string) => (request: ReceivedRequest) =>
        payloadOf(request).event === 'session.status' && payloadOf(request).phone === quietPhone && payloadOf(request).status === status;
      const [connecting] = await receiver.waitForRequests(1, isStatus('connecting'));
      assert.match(String(payloadOf(connecting!).reason), /^quiet session: no traffic for 1 s and no answer to a probe/);
      assert.ok(Date.now() >= Date.parse(rehearsed.json().until), 'not before the rehearsal ends');
      await receiver.waitForRequests(1, isStatus('connected'));
      const [arrived] = await receiver.waitForRequests(
        1,
        (request) => payloadOf(request).event === 'message' && payloadOf(request).to_phone === quietPhone,
      );
      assert.equal(payloadOf(arrived!).message, 'are you there?', 'what waited on the network arrives after the restart');

      const metrics = await test.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      assert.match(metrics.body, /^wagw_quiet_session_restarts_total\{engine="sandbox"\} 1$/m);
      assert.equal((await test.gateway.numbers.findNumber(operatorScope(), quietPhone)).status, 'connected');
    });
  });
}
