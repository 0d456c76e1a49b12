/**
 * Meta's callback while our database cannot write (docs/cloud-api.md): nothing of the delivery may
 * be lost, so the answer is one on which Meta delivers it again (a 5xx, each 503 with
 * Retry-After), and the delivery Meta repeats once the database is back is recorded once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { addCloudNumber, assertRecordedOnce, connectCloudNumber } from '../../support/cloud-number.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { webhookEnv } from '../../support/delivery-support.ts';
import { seedAccount, startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';
import { cloudCallback, GraphApiStandIn, incomingText, signedHeaders, type StandInPhone } from '../../support/graph-api-stand-in.ts';
import { ignoreCleanupFailure } from '../../support/ignore.ts';
import { startDatabaseProxy, type TcpProxy } from '../../support/tcp-proxy.ts';
import { waitForValue } from '../../support/waiting.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';

const APP_SECRET = 'cloud-app-secret-during-an-outage';

for (const dialect of dialects) {
  describe(`Meta's callback while the database is down (${dialect})`, () => {
    let standIn: GraphApiStandIn;
    let receiver: WebhookReceiver;
    let test: TestGateway;
    let proxy: TcpProxy | undefined;
    let database: TestDatabase | undefined;
    let numberId: string;
    let phone: StandInPhone;

    // PostgreSQL goes away as a server does (its connections reset, new ones refused); SQLite's
    // file can no longer be written, as on a disk remounted read-only.
    const outage = {
      begin: async () => (proxy !== undefined ? proxy.cut() : void (await sql`pragma query_only = 1`.execute(test.gateway.store.db))),
      end: async () => (proxy !== undefined ? proxy.mend() : void (await sql`pragma query_only = 0`.execute(test.gateway.store.db))),
    };

    before(async () => {
      standIn = await GraphApiStandIn.start();
      receiver = await WebhookReceiver.start();
      const env = webhookEnv({ WAGW_CLOUD_API_URL: standIn.url });
      if (dialect === 'postgres') {
        database = await createTestDatabase('postgres');
        const proxied = await startDatabaseProxy(database.url);
        proxy = proxied.proxy;
        env.DATABASE_URL = proxied.url;
      }
      test = await startTestGateway(dialect, env);
      test.gateway.deliveryWorker.start();
      const account = await seedAccount(test.gateway);
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), { url: receiver.url(), eventTypes: ['message'] });
      ({ numberId, phone } = await addCloudNumber(test.gateway, account.accountId, standIn, APP_SECRET));
      await connectCloudNumber(test.gateway, numberId);
    });
    after(async () => {
      await outage.end().catch(ignoreCleanupFailure);
      await test?.close();
      await proxy?.close();
      await database?.drop();
      await receiver?.close();
      await standIn?.close();
    });

    it('answers so that Meta retries, and the retried delivery is recorded once', async () => {
      const person = uniquePhone();
      const message = incomingText(person.slice(1), 'while the database was down');
      const body = cloudCallback(phone, { messages: [message] });
      const deliver = () =>
        test.inject({ method: 'POST', url: `/cloud/callbacks/${numberId}`, headers: signedHeaders(APP_SECRET, body), payload: body });

      await outage.begin();
      const refused = await deliver();
      assert.ok(refused.statusCode >= 500, `a 5xx, on which Meta delivers again: ${refused.statusCode} ${refused.body}`);
      assert.equal(refused.statusCode, 503, refused.body);
      assert.equal(refused.json().error, 'storage_unavailable');
      assert.ok(Number(refused.headers['retry-after']) >= 1, `Retry-After: ${String(refused.headers['retry-after'])}`);
      await outage.end();

      // Meta delivers again until it is answered 2xx; whatever the gateway answers meanwhile says "later".
      const accepted = await waitForValue(async () => {
        const answer = await deliver();
        if (answer.statusCode === 200) return answer;
        assert.equal(answer.statusCode, 503, answer.body);
        assert.ok(Number(answer.headers['retry-after']) >= 1, 'every 503 carries Retry-After');
        return undefined;
      }, 'the delivery to be accepted once the database is back');
      assert.deepEqual(accepted.json(), { received: true });
      // Meta may deliver it again even after a 2xx (a lost answer): still one message.
      assert.equal((await deliver()).statusCode, 200);

      await assertRecordedOnce(test.gateway, receiver, message, 'while the database was down');
    });
  });
}
