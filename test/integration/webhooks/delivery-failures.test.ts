import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import {
  onlyDelivery,
  payloadOf,
  receiveIncoming,
  retryGapMs,
  sleep,
  startDeliveringGateway,
  verifiedPayload,
  webhookEnv,
} from '../../support/delivery-support.ts';

/** The worker's ±20 % jitter on every scheduled delay. */
const JITTER_LOW = 0.8;
const JITTER_HIGH = 1.2;
/** Request latency and the worker's 50 ms poll, either side of a measured gap. */
const TIMING_SLACK_MS = 400;

interface Endpoint {
  account: SeededAccount;
  webhookId: string;
  secret: string;
  receiver: WebhookReceiver;
}

/** A fresh account whose one `message` webhook points at a receiver of its own. */
async function endpoint(test: TestGateway, receivers: WebhookReceiver[]): Promise<Endpoint> {
  const receiver = await WebhookReceiver.start();
  receivers.push(receiver);
  const account = await seedAccount(test.gateway);
  const { webhook, secret } = await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
    url: receiver.url('/hook'),
    eventTypes: ['message'],
  });
  return { account, webhookId: webhook.id, secret, receiver };
}

async function closeAll(receivers: WebhookReceiver[]): Promise<void> {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
}

for (const dialect of dialects) {
  // Side by side: each describe below starts a gateway of its own, and each test owns its account, webhook and receiver.
  describe(`webhook delivery failures (${dialect})`, { concurrency: true }, () => {
    // Delays above a second even at their jittered low (1.3 × 0.8 > 1), so attempts' unix-second timestamps differ.
    describe(`webhook retries on the schedule (${dialect})`, { concurrency: true }, () => {
      const scheduleSeconds = 1.3;
      let test: TestGateway;
      const receivers: WebhookReceiver[] = [];

      before(async () => {
        test = await startDeliveringGateway(dialect, webhookEnv({ WAGW_WEBHOOK_RETRY_SCHEDULE: `${scheduleSeconds},${scheduleSeconds}` }));
      });
      after(async () => {
        await closeAll(receivers);
        await test.close();
      });

      it('500, 500, 200 makes exactly three attempts under one webhook-id, each freshly timestamped and logged', async () => {
        const { account, webhookId, secret, receiver } = await endpoint(test, receivers);
        receiver.responder = (_request, index) => (index < 2 ? { status: 500, body: `failure ${index + 1}` } : { status: 200, body: 'ok' });
        await receiveIncoming(test, account, 'third time lucky');

        const requests = await receiver.waitForRequests(3);
        const settled = await onlyDelivery(test, webhookId, (entry) => entry.delivery.state !== 'pending');
        await sleep(scheduleSeconds * JITTER_HIGH * 1000 + TIMING_SLACK_MS);
        assert.equal(receiver.requests.length, 3, 'no attempt after the 200');

        const ids = requests.map((request) => request.headers['webhook-id']);
        assert.equal(new Set(ids).size, 1, `one webhook-id on every attempt: ${ids.join(', ')}`);
        const timestamps = requests.map((request) => Number(request.headers['webhook-timestamp']));
        assert.equal(new Set(timestamps).size, 3, `a new webhook-timestamp on every attempt: ${timestamps.join(', ')}`);
        assert.ok(timestamps[0]! < timestamps[1]! && timestamps[1]! < timestamps[2]!);
        for (const request of requests) assert.equal(verifiedPayload(request, secret).message, 'third time lucky');
        assert.ok(
          requests.every((request) => request.body === requests[0]!.body),
          'the same body every time',
        );

        assert.equal(settled.delivery.state, 'delivered');
        assert.equal(settled.delivery.attemptCount, 3);
        assert.equal(settled.delivery.lastStatusCode, 200);
        assert.equal(settled.delivery.id, ids[0]);
        assert.deepEqual(
          settled.attempts.map((attempt) => attempt.statusCode),
          [500, 500, 200],
        );
        assert.deepEqual(
          settled.attempts.map((attempt) => attempt.responseExcerpt),
          ['failure 1', 'failure 2', 'ok'],
        );
        for (const attempt of settled.attempts) {
          assert.ok(Number.isInteger(attempt.durationMs) && attempt.durationMs >= 0, `duration ${attempt.durationMs}`);
          assert.equal(attempt.deliveryId, settled.delivery.id);
        }
        assert.deepEqual(
          settled.attempts.slice(0, 2).map((attempt) => attempt.error),
          [null, null],
        );
      });

      it('a 429 with a Retry-After beyond the scheduled delay stretches the wait, but to no more than twice the schedule', async () => {
        const { account, webhookId, receiver } = await endpoint(test, receivers);
        receiver.responder = (_request, index) => (index === 0 ? { status: 429, headers: { 'retry-after': '30' } } : { status: 200 });
        await receiveIncoming(test, account, 'slow down');
        const requests = await receiver.waitForRequests(2);
        const gap = await retryGapMs(test, webhookId, requests[1]!);
        // More than any jittered delay alone (so Retry-After counted), far less than its 30 s.
        assert.ok(gap > scheduleSeconds * JITTER_HIGH * 1000, `the retry came ${gap} ms later; Retry-After was ignored`);
        // The bound of twice the schedule is applyRetryAfter's (test/unit/webhooks/retry-policy.test.ts):
        // a gap measured here grows with the machine's load, so only its lower bound is a fact.
      });

      it('a 429 with a Retry-After shorter than the scheduled delay does not bring the retry forward', async () => {
        const { account, webhookId, receiver } = await endpoint(test, receivers);
        receiver.responder = (_request, index) => (index === 0 ? { status: 429, headers: { 'retry-after': '0' } } : { status: 200 });
        await receiveIncoming(test, account, 'hurry up');
        const requests = await receiver.waitForRequests(2);
        const gap = await retryGapMs(test, webhookId, requests[1]!);
        assert.ok(gap >= scheduleSeconds * JITTER_LOW * 1000, `the retry came after only ${gap} ms`);
      });
    });

    describe(`an endpoint that never answers (${dialect})`, { concurrency: true }, () => {
      // Short, so that the hung attempt ends within the test. A retry the loaded machine answers
      // later than this times out too; the schedule leaves room for that, and what is asserted is
      // that the hung attempt was cut off and a later one delivered.
      const timeoutMs = 1_000;
      let test: TestGateway;
      const receivers: WebhookReceiver[] = [];

      before(async () => {
        test = await startDeliveringGateway(
          dialect,
          webhookEnv({ WAGW_WEBHOOK_RETRY_SCHEDULE: '0.1,0.1,0.1,0.1,0.1', WAGW_WEBHOOK_TIMEOUT_MS: String(timeoutMs) }),
        );
      });
      after(async () => {
        await closeAll(receivers);
        await test.close();
      });

      it('an endpoint that never answers is cut off at the timeout, logged as a timeout, and retried', async () => {
        const { account, webhookId, receiver } = await endpoint(test, receivers);
        receiver.responder = (_request, index) => (index === 0 ? 'hang' : { status: 200 });
        await receiveIncoming(test, account, 'are you there?');
        const requests = await receiver.waitForRequests(2);
        assert.equal(requests[1]!.headers['webhook-id'], requests[0]!.headers['webhook-id']);

        const settled = await onlyDelivery(test, webhookId, (entry) => entry.delivery.state !== 'pending');
        assert.equal(settled.delivery.state, 'delivered');
        const hung = settled.attempts[0];
        const answered = settled.attempts.at(-1);
        // From the hung attempt's start as the worker recorded it: the receiver may see that
        // request late on a loaded machine, which would shorten a gap measured between arrivals.
        const retryAfterMs = requests[1]!.receivedAt - hung!.attemptedAt.getTime();
        assert.ok(retryAfterMs >= timeoutMs - 50, `the retry came ${retryAfterMs} ms after the hung attempt began`);
        assert.match(hung!.error ?? '', /^timeout/);
        assert.equal(hung!.statusCode, null);
        // No upper bound in real time (a loaded machine stretches it): the receiver never answers
        // the first request, so an attempt that ended at all, as a timeout, was cut off by the timer.
        assert.ok(hung!.durationMs >= timeoutMs - 50, `the hung attempt took ${hung!.durationMs} ms`);
        assert.equal(answered!.statusCode, 200);
        assert.equal(answered!.error, null);
      });
    });

    describe(`webhook attempts that fail (${dialect})`, { concurrency: true }, () => {
      // Far longer than any answer of the local receiver takes, however loaded the machine: these
      // attempts fail by their answers, never by the clock.
      const timeoutMs = 120_000;
      let test: TestGateway;
      const receivers: WebhookReceiver[] = [];

      before(async () => {
        test = await startDeliveringGateway(
          dialect,
          webhookEnv({ WAGW_WEBHOOK_RETRY_SCHEDULE: '0.1,0.1', WAGW_WEBHOOK_TIMEOUT_MS: String(timeoutMs) }),
        );
      });
      after(async () => {
        await closeAll(receivers);
        await test.close();
      });

      it('410 Gone disables the webhook with the reason and fails the delivery without a retry', async () => {
        const { account, webhookId, receiver } = await endpoint(test, receivers);
        receiver.responder = () => ({ status: 410, body: 'gone' });
        await receiveIncoming(test, account, 'anyone home?');
        const settled = await onlyDelivery(test, webhookId, (entry) => entry.delivery.state !== 'pending');
        assert.equal(settled.delivery.state, 'failed');
        assert.deepEqual(
          settled.attempts.map((attempt) => attempt.statusCode),
          [410],
        );

        const webhook = await test.gateway.webhooks.getWebhook(operatorScope(), webhookId);
        assert.equal(webhook.enabled, false);
        assert.match(webhook.disabledReason ?? '', /410/);
        // A later message is not queued for the disabled webhook either.
        await receiveIncoming(test, account, 'still there?');
        await sleep(1_000);
        assert.equal(receiver.requests.length, 1, 'one attempt, no retry, nothing after');
        assert.equal((await test.gateway.webhooks.listDeliveries(operatorScope(), webhookId)).length, 1);
      });

      it('a redirect is not followed: the attempt is logged as a redirect failure and retried at the same URL', async () => {
        const { account, webhookId, receiver } = await endpoint(test, receivers);
        receiver.responder = (_request, index) =>
          index === 0 ? { status: 302, headers: { location: receiver.url('/moved') } } : { status: 200 };
        await receiveIncoming(test, account, 'follow me');
        const settled = await onlyDelivery(test, webhookId, (entry) => entry.delivery.state !== 'pending');
        await sleep(300);

        assert.deepEqual(
          receiver.requests.map((request) => request.path),
          ['/hook', '/hook'],
          'nothing went to the Location',
        );
        assert.equal(settled.delivery.state, 'delivered');
        const [redirected, retried] = settled.attempts;
        assert.equal(redirected!.statusCode, 302);
        assert.match(redirected!.error ?? '', /^redirect/);
        assert.equal(retried!.statusCode, 200);
      });

      it('only the first 2048 characters of a long error answer are kept', async () => {
        const { account, webhookId, receiver } = await endpoint(test, receivers);
        const longBody = Array.from({ length: 5_120 }, (_, index) => String.fromCharCode(97 + (index % 26))).join('');
        receiver.responder = (_request, index) => (index === 0 ? { status: 500, body: longBody } : { status: 200 });
        await receiveIncoming(test, account, 'tell me more');
        const settled = await onlyDelivery(test, webhookId, (entry) => entry.delivery.state !== 'pending');
        const excerpt = settled.attempts[0]!.responseExcerpt ?? '';
        assert.equal(settled.attempts[0]!.statusCode, 500);
        assert.ok(excerpt.length > 0 && excerpt.length <= 2048, `excerpt of ${excerpt.length} characters`);
        assert.equal(excerpt, longBody.slice(0, excerpt.length), 'the excerpt is the start of the answer');
      });

      it('once the schedule is spent the delivery is failed: two retries after the first attempt, then nothing', async () => {
        const { account, webhookId, receiver } = await endpoint(test, receivers);
        receiver.responder = () => ({ status: 500 });
        await receiveIncoming(test, account, 'never lands');
        const settled = await onlyDelivery(test, webhookId, (entry) => entry.delivery.state !== 'pending');
        await sleep(1_000);
        assert.equal(receiver.requests.length, 3);
        assert.equal(settled.delivery.state, 'failed');
        assert.equal(settled.delivery.attemptCount, 3);
        assert.deepEqual(
          settled.attempts.map((attempt) => attempt.statusCode),
          [500, 500, 500],
        );
        assert.equal(new Set(receiver.requests.map((request) => request.headers['webhook-id'])).size, 1);
      });
    });

    const endpointLimits: { name: string; env: Record<string, string> }[] = [
      { name: 'default limits', env: {} },
      // Tight enough that the hanging endpoint could fill the whole worker if nothing bounded it.
      {
        name: 'eight in flight, four per endpoint',
        env: { WAGW_WEBHOOK_MAX_IN_FLIGHT: '8', WAGW_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '4' },
      },
    ];
    for (const limits of endpointLimits) {
      describe(`webhook endpoints are isolated, ${limits.name} (${dialect})`, () => {
        // Longer than any wait of the suite (test/support/waiting.ts gives up after a minute): if the
        // hanging endpoint held the worker up, the healthy deliveries would wait out this timeout and
        // the test would fail, however fast or slow the machine is.
        const timeoutMs = 600_000;
        const messageCount = 20;
        let test: TestGateway;
        const receivers: WebhookReceiver[] = [];

        before(async () => {
          test = await startDeliveringGateway(dialect, webhookEnv({ WAGW_WEBHOOK_TIMEOUT_MS: String(timeoutMs), ...limits.env }));
        });
        after(async () => {
          // Closing the receivers first ends the hung requests, so stopping the worker is quick.
          await closeAll(receivers);
          await test.close();
        });

        it('an endpoint that hangs does not hold up deliveries to another endpoint', async () => {
          const hanging = await endpoint(test, receivers);
          hanging.receiver.responder = () => 'hang';
          const healthy = await WebhookReceiver.start();
          receivers.push(healthy);
          const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(hanging.account.accountId), {
            url: healthy.url('/fast'),
            eventTypes: ['message'],
          });

          const sentIds = new Set<string>();
          for (let index = 0; index < messageCount; index++) {
            const received = await receiveIncoming(test, hanging.account, `message ${index}`);
            sentIds.add(received.message_id!);
          }
          const delivered = await healthy.waitForRequests(messageCount);
          await hanging.receiver.waitForRequests(1);
          assert.equal(
            hanging.receiver.openHungRequests,
            hanging.receiver.requests.length,
            'every request to the hanging endpoint is still open: the healthy one was served meanwhile, not after a timeout',
          );
          for (const request of delivered) assert.equal(payloadOf(request).webhook_id, webhook.id);
          assert.deepEqual(
            new Set(delivered.map((request) => payloadOf(request).message_id as string)),
            sentIds,
            'each message exactly once',
          );
          assert.equal(delivered.length, messageCount);
        });
      });
    }
  });
}
