/**
 * A session that looks open but has gone quiet (issue 42, item 5), over the real Baileys engine:
 * no traffic, and WhatsApp's side never answers the probe. The session is restarted on a new
 * socket within its bound, with the reason in the number's status, a session.status event and
 * a count in the metrics.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope, accountScope } from '../../../src/domain/tenant-scope.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { waitFor } from '../../support/fake-whatsapp.ts';

const METRICS_TOKEN = 'metrics-token-for-the-quiet-sessions-0123';
const TIMINGS = { watchdogIdleMs: 150, watchdogIntervalMs: 25, probeTimeoutMs: 100 };

for (const dialect of dialects) {
  describe(`a quiet Baileys session (${dialect})`, () => {
    let linked: LinkedBaileysNumber;
    let receiver: WebhookReceiver;

    before(async () => {
      linked = await startLinkedBaileysNumber(
        dialect,
        { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50', WAGW_METRICS_TOKEN: METRICS_TOKEN },
        { baileysTimings: TIMINGS },
      );
      receiver = await WebhookReceiver.start();
      await linked.test.gateway.webhooks.createWebhook(accountScope(linked.accountId), {
        url: receiver.url('/sessions'),
        eventTypes: ['session.status'],
      });
      linked.test.gateway.deliveryWorker.start();
    });
    after(async () => {
      await linked?.close();
      await receiver?.close();
    });

    it('is restarted on a new socket, with the reason in its status, a session.status event and the metric', async () => {
      const quiet = linked.socket;
      // Open, but nothing arrives and the probe is never answered.
      quiet.answerOnWhatsApp = () => new Promise(() => undefined);
      await waitFor('a new socket', () => linked.whatsapp.sockets.length > 1);
      assert.equal(quiet.endCalls.length, 1, 'the quiet socket was ended');

      const [event] = await receiver.waitForRequests(1, (request) => JSON.parse(request.body).status === 'connecting');
      const reason = JSON.parse(event!.body).reason as string;
      assert.match(reason, /^quiet session: no traffic for \d+ min and no answer to a probe within 100 ms; reconnecting$/);
      const number = await linked.test.gateway.numbers.findNumber(operatorScope(), linked.number.id);
      assert.equal(number.status, 'connecting');
      assert.equal(number.statusReason, reason);

      const metrics = await linked.test.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      assert.match(metrics.body, /^wagw_quiet_session_restarts_total\{engine="baileys"\} 1$/m);

      // The new socket opens, and the number is connected again.
      linked.whatsapp.latest.openAs(linked.number.phone.slice(1));
      await waitFor('connected again', () => receiver.requests.some((request) => JSON.parse(request.body).status === 'connected'));
    });
  });
}
