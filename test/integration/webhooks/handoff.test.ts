import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { sessionStatusPayload } from '../../../src/domain/event-payloads.ts';
import { CLAIMS_ONLY, enqueueEvent } from '../../../src/webhooks/outbox.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import {
  eventually,
  payloadOf,
  receiveIncoming,
  startDeliveringGateway,
  subscribeFresh,
  verifiedPayload,
  webhookEnv,
} from '../../support/delivery-support.ts';

/** How many attempts the worker has started so far, by how it got the delivery. */
async function startsBySource(test: TestGateway): Promise<{ handoff: number; claim: number }> {
  const metric = test.gateway.metrics.registry.getSingleMetric('wagw_webhook_deliveries_started_total');
  assert.ok(metric, 'the metric is registered');
  const { values } = await metric.get();
  const of = (source: string) => values.find((value) => value.labels.source === source)?.value ?? 0;
  return { handoff: of('handoff'), claim: of('claim') };
}

async function deliveryRows(test: TestGateway, webhookId: string) {
  const { rows } = await sql<{ id: string; state: string; attempt_count: number; claimed_until: number | null }>`
    select id, state, attempt_count, claimed_until from webhook_deliveries where webhook_id = ${webhookId} order by created_at, id`.execute(
    test.gateway.store.db,
  );
  return rows;
}

const onPath = (path: string) => (request: ReceivedRequest) => request.path === path;

// A delivery is leased in the write that queues it and sent from memory once that commits: no
// claim between the message and its webhook. The outbox stays the record: what is not started
// goes back to it, and older work waiting there keeps its turn.
for (const dialect of dialects) {
  describe(`webhook deliveries handed over by the write that queues them (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;

    before(async () => {
      // One request per endpoint makes "waiting for a slot" easy to arrange. The timeout is
      // longer than a loaded machine takes between a hanging request and the test's look at what
      // waits behind it: the request still hangs, and the waiting delivery still holds its claim.
      test = await startDeliveringGateway(
        dialect,
        webhookEnv({ WAGW_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '1', WAGW_WEBHOOK_TIMEOUT_MS: '60000' }),
      );
      receiver = await WebhookReceiver.start();
    });
    after(async () => {
      await receiver.close();
      await test.close();
    });

    it('an incoming message reaches its webhook from memory, signed, without a claim', async () => {
      const account = await seedAccount(test.gateway);
      const { secret, path } = await subscribeFresh(test, receiver, account.accountId, ['message']);
      const before = await startsBySource(test);
      const received = await receiveIncoming(test, account, 'straight from the write', uniquePhone());
      const [request] = await receiver.waitForRequests(1, onPath(path));
      const payload = verifiedPayload(request!, secret);
      assert.equal(payload.message_id, received.message_id);
      const now = await startsBySource(test);
      assert.deepEqual({ handoff: now.handoff - before.handoff, claim: now.claim - before.claim }, { handoff: 1, claim: 0 });
    });

    it('new work for an endpoint with older work in the outbox waits behind it, through the claim', async () => {
      const account = await seedAccount(test.gateway);
      const { webhook, path } = await subscribeFresh(test, receiver, account.accountId, ['session.status', 'message']);
      const at = new Date(Date.now() - 1_000);
      await test.gateway.committer.run(async (trx) => {
        for (let index = 0; index < 30; index++)
          await enqueueEvent(trx, CLAIMS_ONLY, account.accountId, sessionStatusPayload(account.phones[0]!, 'connected', null, at), at);
      });
      // The endpoint answers slowly until the message is queued, so that the backlog is still
      // waiting when the message comes, however fast the machine drains it; then it drains at once.
      const answer = receiver.responder;
      let messageQueued = false;
      receiver.responder = (request, index) =>
        request.path === path ? { status: 200, ...(!messageQueued && { delayMs: 40 }) } : answer(request, index);
      test.gateway.deliveryWorker.deliveriesQueued();
      await receiver.waitForRequests(1, onPath(path));
      const before = await startsBySource(test);
      await receiveIncoming(test, account, 'behind the backlog', uniquePhone());
      messageQueued = true;
      const requests = await receiver.waitForRequests(31, onPath(path));
      receiver.responder = answer;
      // Claims go oldest first, and the backlog is a second older than the message.
      const messageAt = requests.findIndex((request) => payloadOf(request).event === 'message');
      assert.equal(messageAt, 30, 'the message arrived after all the backlog that was waiting');
      const now = await startsBySource(test);
      assert.equal(now.handoff - before.handoff, 0, 'nothing of this endpoint was sent past its outbox');
      await eventually(
        async () => ((await deliveryRows(test, webhook.id)).every((row) => row.state === 'delivered') ? true : undefined),
        'all 31 delivered',
      );
    });

    it('a stop gives back what was handed over and not started, so the next start claims it at once', async () => {
      const account = await seedAccount(test.gateway);
      const { webhook, path } = await subscribeFresh(test, receiver, account.accountId, ['message']);
      const previous = receiver.responder;
      receiver.responder = (request, index) => (request.path === path ? 'hang' : previous(request, index));
      try {
        await receiveIncoming(test, account, 'holds the only slot', uniquePhone());
        await receiver.waitForRequests(1, onPath(path));
        // The endpoint's one slot is taken: the second delivery waits in memory, leased.
        await receiveIncoming(test, account, 'waits in memory', uniquePhone());
        const waiting = await eventually(async () => {
          const rows = await deliveryRows(test, webhook.id);
          return rows.length === 2 ? rows[1] : undefined;
        }, 'the second delivery');
        assert.notEqual(waiting.claimed_until, null, 'leased by the write that queued it');
        assert.equal(receiver.requests.filter(onPath(path)).length, 1, 'not started while the slot is taken');

        await test.gateway.deliveryWorker.stop();
        const rows = await deliveryRows(test, webhook.id);
        assert.deepEqual(
          { state: rows[1]!.state, attempts: Number(rows[1]!.attempt_count), lease: rows[1]!.claimed_until },
          { state: 'pending', attempts: 0, lease: null },
        );
      } finally {
        receiver.responder = previous;
        test.gateway.deliveryWorker.start();
      }
      // Restarted, the worker claims both: the one cut short by the stop and the one given back.
      await receiver.waitForRequests(3, onPath(path));
      await eventually(
        async () => ((await deliveryRows(test, webhook.id)).every((row) => row.state === 'delivered') ? true : undefined),
        'both delivered',
      );
    });
  });
}
