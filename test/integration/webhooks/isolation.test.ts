import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import type { WebhookAttempt } from '../../../src/domain/webhooks.ts';
import { sessionStatusPayload } from '../../../src/domain/event-payloads.ts';
import { claimDueDeliveries } from '../../../src/store/repositories/delivery-claims.ts';
import { CLAIMS_ONLY, enqueueEvent } from '../../../src/webhooks/outbox.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import {
  eventually,
  payloadOf,
  receiveIncoming,
  startDeliveringGateway,
  subscribeFresh,
  webhookEnv,
} from '../../support/delivery-support.ts';

/** Gateway-side times come from two clocks and whole milliseconds; overlaps this small are not real. */
const CLOCK_TOLERANCE_MS = 20;

/**
 * An endpoint that either holds every request open or answers each after a short delay, and
 * counts the requests it holds open at once.
 */
class ScriptedEndpoint {
  mode: 'hang' | 'answer_slowly' = 'hang';
  requests = 0;
  mostOpenAtOnce = 0;
  private open = 0;
  private readonly server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      this.requests += 1;
      if (this.mode === 'hang') return;
      this.open += 1;
      this.mostOpenAtOnce = Math.max(this.mostOpenAtOnce, this.open);
      setTimeout(() => {
        this.open -= 1;
        response.writeHead(200).end('ok');
      }, 100);
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function attemptsOf(test: TestGateway, webhookId: string): Promise<WebhookAttempt[]> {
  const deliveries = await test.gateway.webhooks.listDeliveries(operatorScope(), webhookId);
  return deliveries.flatMap((entry) => entry.attempts).sort((a, b) => a.attemptedAt.getTime() - b.attemptedAt.getTime());
}

const endsAt = (attempt: WebhookAttempt) => attempt.attemptedAt.getTime() + attempt.durationMs;

for (const dialect of dialects) {
  // One after another, though each describe below has a gateway of its own: the timeout probe's
  // first wave must be in flight at once, and two other gateways' work on the same event loop once
  // spread it out past its 600 ms timeout (seen in CI).
  describe(`webhook endpoints are isolated from each other (${dialect})`, () => {
    // Each test claims from its database's whole outbox.
    describe(`a claim sees every endpoint with due work (${dialect})`, () => {
      let test: TestGateway;

      before(async () => {
        test = await startTestGateway(dialect, webhookEnv());
      });
      after(async () => test.close());

      it('one claim takes a newer delivery of a quiet endpoint past hundreds of older ones of a busy endpoint', async () => {
        const busy = await seedAccount(test.gateway);
        const quiet = await seedAccount(test.gateway);
        const busyWebhook = (
          await test.gateway.webhooks.createWebhook(accountScope(busy.accountId), {
            url: 'http://127.0.0.1:9/busy',
            eventTypes: ['session.status'],
          })
        ).webhook;
        const quietWebhook = (
          await test.gateway.webhooks.createWebhook(accountScope(quiet.accountId), {
            url: 'http://127.0.0.1:9/quiet',
            eventTypes: ['session.status'],
          })
        ).webhook;
        const start = Date.now() - 60_000;
        await test.gateway.committer.run(async (trx) => {
          for (let index = 0; index < 400; index++) {
            const at = new Date(start + index);
            await enqueueEvent(trx, CLAIMS_ONLY, busy.accountId, sessionStatusPayload(busy.phones[0]!, 'connected', null, at), at);
          }
          const at = new Date(start + 1_000);
          await enqueueEvent(trx, CLAIMS_ONLY, quiet.accountId, sessionStatusPayload(quiet.phones[0]!, 'connected', null, at), at);
        });

        const now = Date.now();
        const { deliveries: claimed } = await claimDueDeliveries(test.gateway.store.db, {
          now,
          claimedUntil: now + 60_000,
          limit: 10,
          perWebhookLimit: 4,
          // The busy endpoint has two requests in flight of its four.
          freeSlotsByWebhook: new Map([[busyWebhook.id, 2]]),
        });
        assert.equal(
          claimed.filter((delivery) => delivery.webhookId === busyWebhook.id).length,
          2,
          'the busy endpoint gets only its free slots',
        );
        assert.equal(
          claimed.filter((delivery) => delivery.webhookId === quietWebhook.id).length,
          1,
          'the quiet endpoint is served in the same claim',
        );
      });

      it('one claim fills its whole room from many endpoints with a delivery each, oldest first', async () => {
        const endpoints = 60;
        const limit = 55;
        const start = Date.now() - 120_000;
        const webhookIdsOldestFirst: string[] = [];
        for (let index = 0; index < endpoints; index++) {
          const account = await test.gateway.accounts.createAccount({ name: `Endpoint ${index}` });
          const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(account.id), {
            url: `http://127.0.0.1:9/${index}`,
            eventTypes: ['session.status'],
          });
          webhookIdsOldestFirst.push(webhook.id);
          // Queued newest first, so that neither insertion order nor id order gives the answer away.
          const at = new Date(start + (endpoints - index) * 10);
          await test.gateway.committer.run((trx) =>
            enqueueEvent(trx, CLAIMS_ONLY, account.id, sessionStatusPayload('+447700900123', 'connected', null, at), at),
          );
        }
        webhookIdsOldestFirst.reverse();

        const now = Date.now();
        const { deliveries: claimed } = await claimDueDeliveries(test.gateway.store.db, {
          now,
          claimedUntil: now + 60_000,
          limit,
          perWebhookLimit: 4,
          freeSlotsByWebhook: new Map(),
        });
        assert.deepEqual(new Set(claimed.map((delivery) => delivery.webhookId)), new Set(webhookIdsOldestFirst.slice(0, limit)));
      });
    });

    describe(`hanging endpoints cannot use up the worker (${dialect})`, () => {
      const maxInFlight = 8;
      const perEndpoint = 4;
      let test: TestGateway;
      const receivers: WebhookReceiver[] = [];

      before(async () => {
        // Longer than any wait of the suite, so nothing hung is cut off while the test looks, however
        // slow the machine.
        test = await startDeliveringGateway(
          dialect,
          webhookEnv({
            WAGW_WEBHOOK_TIMEOUT_MS: '600000',
            WAGW_WEBHOOK_MAX_IN_FLIGHT: String(maxInFlight),
            WAGW_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: String(perEndpoint),
          }),
        );
      });
      after(async () => {
        // Closing the receivers first ends the hung requests, so stopping the worker is quick.
        await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
        await test.close();
      });

      it('a healthy endpoint gets all its deliveries while three hanging endpoints hold more requests open than the overall limit', async () => {
        const hangingReceiver = await WebhookReceiver.start();
        const healthyReceiver = await WebhookReceiver.start();
        receivers.push(hangingReceiver, healthyReceiver);
        hangingReceiver.responder = () => 'hang';
        const hangingAccount = await seedAccount(test.gateway);
        const hanging: Awaited<ReturnType<typeof subscribeFresh>>[] = [];
        for (let index = 0; index < 3; index++)
          hanging.push(await subscribeFresh(test, hangingReceiver, hangingAccount.accountId, ['message']));
        const healthyAccount = await seedAccount(test.gateway);
        const healthy = await subscribeFresh(test, healthyReceiver, healthyAccount.accountId, ['message']);

        // Twelve deliveries per hanging endpoint: together they could fill the overall limit alone.
        for (let index = 0; index < 12; index++) await receiveIncoming(test, hangingAccount, `to the hanging ${index}`);
        await hangingReceiver.waitForRequests(maxInFlight);

        const messageCount = 12;
        for (let index = 0; index < messageCount; index++) await receiveIncoming(test, healthyAccount, `to the healthy ${index}`);
        const delivered = await healthyReceiver.waitForRequests(messageCount, (request) => request.path === healthy.path);

        // Nothing sent to a hanging endpoint has ended yet: every request it received is still open.
        for (const webhook of hanging)
          assert.deepEqual(await attemptsOf(test, webhook.webhook.id), [], 'no hung request has been cut off yet');
        assert.ok(
          hangingReceiver.requests.length > maxInFlight,
          `the hanging endpoints hold ${hangingReceiver.requests.length} requests open`,
        );
        assert.equal(new Set(delivered.map((request) => payloadOf(request).message_id)).size, messageCount, 'each message exactly once');
      });
    });

    describe(`an endpoint that times out is probed one request at a time (${dialect})`, () => {
      const perEndpoint = 4;
      const messageCount = 10;
      let test: TestGateway;
      let endpoint: ScriptedEndpoint;

      before(async () => {
        test = await startDeliveringGateway(
          dialect,
          webhookEnv({ WAGW_WEBHOOK_TIMEOUT_MS: '600', WAGW_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: String(perEndpoint) }),
        );
      });
      afterEach(async () => endpoint?.close());
      after(async () => test.close());

      it('after a timeout the endpoint gets one request at a time until it answers, then its full share again, and nothing is lost', async () => {
        endpoint = new ScriptedEndpoint();
        const url = await endpoint.start();
        const account = await seedAccount(test.gateway);
        const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(account.accountId), { url, eventTypes: ['message'] });
        // Every message is waiting before the worker looks, so that its first claim is one whole wave,
        // however slowly the messages arrive on a loaded machine.
        await test.gateway.deliveryWorker.stop();
        for (let index = 0; index < messageCount; index++) await receiveIncoming(test, account, `message ${index}`);
        test.gateway.deliveryWorker.start();

        // The first wave, and then three requests sent after it was cut off.
        const attempts = await eventually(async () => {
          const recorded = await attemptsOf(test, webhook.id);
          return recorded.length >= perEndpoint + 3 ? recorded : undefined;
        }, 'the first wave and three probes');
        const wave = attempts.slice(0, perEndpoint);
        assert.ok(
          wave.every((attempt) => attempt.error?.startsWith('timeout')),
          'the first wave timed out',
        );
        const firstWaveEnd = Math.min(...wave.map(endsAt));
        assert.ok(
          wave.every((attempt) => attempt.attemptedAt.getTime() < firstWaveEnd),
          'the first wave was in flight at once',
        );
        const probes = attempts.slice(perEndpoint);
        for (const [index, probe] of probes.entries()) {
          const previous = index === 0 ? Math.max(...wave.map(endsAt)) : endsAt(probes[index - 1]!);
          assert.ok(
            probe.attemptedAt.getTime() >= previous - CLOCK_TOLERANCE_MS,
            `probe ${index} began only after the request before it ended`,
          );
        }

        endpoint.mode = 'answer_slowly';
        const entries = await eventually(async () => {
          const all = await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id);
          return all.length === messageCount && all.every((entry) => entry.delivery.state === 'delivered') ? all : undefined;
        }, 'every delivery to be delivered');
        assert.equal(entries.length, messageCount, 'no delivery was lost or failed');
        assert.ok(endpoint.mostOpenAtOnce > 1, `once answered, the endpoint had ${endpoint.mostOpenAtOnce} requests in flight at once`);
      });
    });
  });
}
