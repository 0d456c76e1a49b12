import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../../src/domain/errors.ts';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { startDeliveringGateway, webhookEnv } from '../../support/delivery-support.ts';

/**
 * What one tenant can make the gateway send: a bounded number of webhooks, a bounded rate of
 * simulated incoming messages, and a bounded rate to any one destination host.
 */
for (const dialect of dialects) {
  describe(`fan-out limits (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOKS_PER_ACCOUNT: '3', WAGW_SANDBOX_RECEIVES_PER_MINUTE: '5' });
    });
    after(() => test?.close());

    it('an account has at most the configured number of webhooks, even when creations race', async () => {
      const { accountId } = await seedAccount(test.gateway, { numbers: 0 });
      const scope = accountScope(accountId);
      const attempts = await Promise.allSettled(
        Array.from({ length: 6 }, (_unused, index) => test.gateway.webhooks.createWebhook(scope, { url: `https://8.8.8.8/hook-${index}` })),
      );
      assert.equal(attempts.filter((attempt) => attempt.status === 'fulfilled').length, 3);
      for (const attempt of attempts) {
        if (attempt.status === 'rejected') {
          assert.ok(attempt.reason instanceof AppError && attempt.reason.code === 'webhook_limit_reached', String(attempt.reason));
          assert.deepEqual(attempt.reason.meta, { limit: 3 });
        }
      }
      assert.equal((await test.gateway.webhooks.listWebhooks(scope)).length, 3);
      const other = accountScope((await seedAccount(test.gateway, { numbers: 0 })).accountId);
      await assert.doesNotReject(
        test.gateway.webhooks.createWebhook(other, { url: 'https://8.8.8.8/other' }),
        'another account has its own count',
      );
    });

    it('simulated incoming messages are limited per account, with 429 rate_limited and Retry-After', async () => {
      const account = await seedAccount(test.gateway);
      const receive = (seeded: typeof account) =>
        test.post('/sandbox/receive', { from_phone: '+14155550100', to_phone: seeded.phones[0], message: 'hello' }, seeded.apiKey);
      for (let message = 0; message < 5; message += 1) assert.equal((await receive(account)).statusCode, 200);
      const refused = await receive(account);
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.json().error, 'rate_limited');
      assert.equal(refused.json().meta.limit_per_minute, 5);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal(String(refused.headers['retry-after']), String(refused.json().meta.retry_after_seconds));
      const neighbour = await seedAccount(test.gateway);
      assert.equal((await receive(neighbour)).statusCode, 200, 'another account is not held');
    });
  });

  describe(`a destination host's rate (${dialect})`, () => {
    let test: TestGateway;
    let limited: WebhookReceiver;
    let elsewhere: WebhookReceiver;

    before(async () => {
      [limited, elsewhere] = await Promise.all([WebhookReceiver.start(), WebhookReceiver.start()]);
      test = await startDeliveringGateway(dialect, webhookEnv({ WAGW_WEBHOOK_MAX_PER_HOST_PER_SECOND: '4' }));
    });
    after(async () => {
      await test?.close();
      await Promise.all([limited?.close(), elsewhere?.close()]);
    });

    it('deliveries to one host are spread out at its rate, every one arrives, and another host is not held', async () => {
      const { accountId } = await seedAccount(test.gateway, { numbers: 0 });
      const scope = accountScope(accountId);
      // Two webhooks of one account on one host share the host's rate.
      const first = (await test.gateway.webhooks.createWebhook(scope, { url: limited.url('/a') })).webhook;
      const second = (await test.gateway.webhooks.createWebhook(scope, { url: limited.url('/b') })).webhook;
      // Another host (host and port name a destination) keeps its own rate.
      const third = (await test.gateway.webhooks.createWebhook(scope, { url: elsewhere.url('/c') })).webhook;
      const startedAt = Date.now();
      // Queued together (they share group commits), so that the hosts start level.
      const events = [...Array(6).fill(first.id), ...Array(6).fill(second.id), ...Array(4).fill(third.id)] as string[];
      await Promise.all(events.map((webhookId) => test.gateway.webhooks.sendTestEvent(scope, webhookId)));
      // The other host's own burst goes out at once, while the first host is still being held.
      await elsewhere.waitForRequests(4);
      assert.ok(limited.requests.length < 12, `the other host got its 4 only once the limited one had all ${limited.requests.length}`);
      await limited.waitForRequests(12);
      const elapsedMs = Date.now() - startedAt;
      // A burst of 4, then 4 a second: the last of 12 cannot arrive before about 2 s.
      assert.ok(elapsedMs >= 1_800, `12 deliveries at 4/s took only ${elapsedMs} ms`);
      assert.deepEqual(new Set(limited.requests.map((request) => request.path)), new Set(['/a', '/b']));
    });
  });
}
