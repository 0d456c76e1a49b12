import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import { waitForValue } from '../../support/waiting.ts';
import { eventually, payloadOf, receiveIncoming, startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';

const BACKLOG = 20;

function textOf(request: ReceivedRequest): string {
  return String(payloadOf(request).message);
}

/**
 * Each delivery's first arrival, in the order they came, as a receiver that deduplicates by
 * webhook-id sees them: a request the gateway gave up on as timed out (a busy machine can hold
 * an answer for seconds) is sent again, at least once being the promise, and may come again later.
 */
function firstArrivals(requests: ReceivedRequest[]): string[] {
  const first = new Map<string, string>();
  for (const request of requests) {
    const id = String(request.headers['webhook-id']);
    if (!first.has(id)) first.set(id, textOf(request));
  }
  return [...first.values()];
}

async function firstArrivalsOf(receiver: WebhookReceiver, count: number, from: number, path: string): Promise<string[]> {
  return waitForValue(() => {
    const arrivals = firstArrivals(receiver.requests.slice(from).filter((request) => request.path === path));
    return arrivals.length >= count ? arrivals : undefined;
  }, `${count} deliveries to ${path}`);
}

for (const dialect of dialects) {
  describe(`a webhook's backlog is delivered oldest first (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;

    before(async () => {
      // One request at a time, so that the order they arrive in is the order they were sent in;
      // retries a second apart, whose ±20 % jitter shuffles their due times. A request answered
      // late on a busy machine (within 5 s) is still an answer: one cut off at 1 s would be retried
      // after newer events, as the order is best effort for those (docs/webhooks.md).
      test = await startDeliveringGateway(
        dialect,
        webhookEnv({
          WAGW_WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1',
          WAGW_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '1',
          WAGW_WEBHOOK_TIMEOUT_MS: '5000',
        }),
      );
      receiver = await WebhookReceiver.start();
    });
    after(async () => {
      await receiver.close();
      await test.close();
    });

    it('events that failed while the endpoint was down arrive in the order they were made once it answers', async () => {
      receiver.responder = () => ({ status: 503 });
      const account = await seedAccount(test.gateway);
      const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: receiver.url('/hook'),
        eventTypes: ['message'],
      });
      const sent = Array.from({ length: BACKLOG }, (_, index) => `backlog ${String(index).padStart(2, '0')}`);
      for (const text of sent) await receiveIncoming(test, account, text);
      await eventually(
        async () => (new Set(receiver.requests.map(textOf)).size === BACKLOG ? true : undefined),
        'every event to fail once',
      );

      // A restart stops the worker, so that every retry is due before it claims again: the whole
      // backlog due at once, as when an endpoint's slots are full. The retries' due times are then
      // set newest first, all past: the order a claim going by due time alone would take. (Their
      // jitter shuffles them too, but only while the events are made faster than it spreads them,
      // and a loaded machine makes them slower.)
      await test.restart();
      const textById = new Map(receiver.requests.map((request) => [String(request.headers['webhook-id']), textOf(request)]));
      const deliveries = (await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id)).map((entry) => entry.delivery);
      assert.equal(deliveries.length, BACKLOG);
      const dueBase = Date.now() - 60_000;
      for (const delivery of deliveries) {
        const made = sent.indexOf(textById.get(delivery.id)!);
        assert.ok(made >= 0, `the delivery ${delivery.id} is one of the backlog's`);
        await test.gateway.store.db
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: dueBase + (BACKLOG - made) * 1_000 })
          .where('id', '=', delivery.id)
          .execute();
      }
      const due = (await test.gateway.webhooks.listDeliveries(operatorScope(), webhook.id)).map((entry) => entry.delivery);
      const byDueTime = [...due].sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime());
      assert.deepEqual(
        byDueTime.map((delivery) => textById.get(delivery.id)),
        [...sent].reverse(),
        'the newest retry is due first',
      );

      receiver.responder = () => ({ status: 200 });
      const before = receiver.requests.length;
      test.gateway.deliveryWorker.start();
      assert.deepEqual(await firstArrivalsOf(receiver, BACKLOG, before, '/hook'), sent);
    });

    it('a backlog worked through slowly keeps its order when the deliveries claimed ahead wait out their claims', async () => {
      // The worker stopped (a restart leaves it so), the backlog is written unclaimed; once it
      // starts, one claim takes the oldest nine (one in flight, eight queued behind it), and each
      // answer lets the next claim take one more. At 0.7 s an answer, the ninth of the first claim
      // comes up after 5.6 s, past what its claim still covers, while the tenth, claimed later,
      // waits behind it with time to spare.
      await test.restart();
      const account = await seedAccount(test.gateway);
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), { url: receiver.url('/slow'), eventTypes: ['message'] });
      receiver.responder = (request) => (request.path === '/slow' ? { status: 200, delayMs: 700 } : { status: 200 });
      const sent = Array.from({ length: 10 }, (_, index) => `slow ${index}`);
      for (const text of sent) await receiveIncoming(test, account, text);

      test.gateway.deliveryWorker.start();
      assert.deepEqual(await firstArrivalsOf(receiver, sent.length, 0, '/slow'), sent);
    });
  });
}
