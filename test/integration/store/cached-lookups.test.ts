import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KeyRevocationListener } from '../../../src/cluster/key-revocations.ts';
import { loadConfig } from '../../../src/config.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { LOOKUP_TTL_MS } from '../../../src/store/cached-lookups.ts';
import { updateAccount } from '../../../src/store/repositories/accounts.ts';
import { updateWebhook } from '../../../src/store/repositories/webhooks.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const dialect of dialects) {
  describe(`numbers and webhooks are read from memory for at most ${LOOKUP_TTL_MS} ms, never past a change made here (${dialect})`, () => {
    let test: TestGateway;
    let caller: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      caller = await seedAccount(test.gateway, { numbers: 2 });
    });
    after(() => test?.close());

    const lookups = () => test.gateway.store.lookups;
    const planOf = async (phone: string) => (await lookups().numberWithPlan(phone as E164))?.plan;

    // Side by side: one waits on the numbers' cache, the other on its account's webhooks', and neither makes the other's forgotten.
    describe('each on a cache of its own', { concurrency: true }, () => {
      it("a plan changed behind the gateway's back is seen only once the bound has passed", async () => {
        const phone = caller.phones[0]!;
        const planBefore = await planOf(phone);
        await updateAccount(test.gateway.store.db, caller.accountId, { plan: planBefore === 'enterprise' ? 'starter' : 'enterprise' });
        assert.equal(await planOf(phone), planBefore, 'the number and its plan come from memory');
        await sleep(LOOKUP_TTL_MS + 50);
        assert.notEqual(await planOf(phone), planBefore);
      });

      it('a webhook disabled, changed or deleted through the service is forgotten at once; one changed behind its back within the bound', async () => {
        const account = accountScope(caller.accountId);
        const { webhook } = await test.gateway.webhooks.createWebhook(account, { url: 'https://8.8.8.8/hook' });
        const enabledIds = async () => (await lookups().enabledWebhooks(test.gateway.store.db, caller.accountId)).map((entry) => entry.id);
        assert.deepEqual(await enabledIds(), [webhook.id], 'a new webhook is seen at once');
        await test.gateway.webhooks.updateWebhook(account, webhook.id, { enabled: false });
        assert.deepEqual(await enabledIds(), []);
        await test.gateway.webhooks.updateWebhook(account, webhook.id, { enabled: true });
        assert.deepEqual(await enabledIds(), [webhook.id]);
        await updateWebhook(test.gateway.store.db, webhook.id, { enabled: false }, new Date());
        assert.deepEqual(await enabledIds(), [webhook.id], 'a change the service did not make is not known yet');
        await sleep(LOOKUP_TTL_MS + 50);
        assert.deepEqual(await enabledIds(), []);
        await test.gateway.webhooks.updateWebhook(account, webhook.id, { enabled: true });
        await test.gateway.webhooks.deleteWebhook(account, webhook.id);
        assert.deepEqual(await enabledIds(), []);
      });
    });

    // Alone: the move makes every number's entry forgotten, the plan's among them.
    it('a number moved to another account is refused to its old account on the very next send', async () => {
      const phone = caller.phones[1]!;
      const send = () => test.post('/send_message', { from_phone: phone, to_phone: '+14155550100', message: 'hi' }, caller.apiKey);
      assert.equal((await send()).statusCode, 200, 'the number is now held in memory');
      const other = await seedAccount(test.gateway, { numbers: 0 });
      await test.gateway.numbers.reassignNumber(operatorScope(), phone, other.accountId);
      const refused = await send();
      assert.equal(refused.statusCode, 403, refused.body);
      assert.equal(refused.json().error, 'phone_not_owned');
    });
  });
}

describe("a change made on another node reaches this node's lookups by NOTIFY, well within the bound (postgres)", {
  skip: !dialects.includes('postgres'),
}, () => {
  let test: TestGateway;
  let other: Gateway;
  let listener: KeyRevocationListener;

  before(async () => {
    test = await startTestGateway('postgres');
    const config = loadConfig({ DATABASE_URL: test.database.url, LOG_LEVEL: 'silent', WAGW_SECRET_KEY: '7e57'.repeat(16) });
    other = await createGateway(config, createLogger(config));
    listener = new KeyRevocationListener(
      test.database.url,
      {
        keyRevoked: () => undefined,
        missedSignals: () => undefined,
        leasesReleased: () => undefined,
        other: (payload) => void test.gateway.store.lookups.heard(payload),
      },
      test.gateway.logger,
    );
    await listener.start();
  });
  after(async () => {
    await listener?.stop();
    await other?.close();
    await test?.close();
  });

  it('a plan changed on the other node, and a webhook disabled there, are forgotten here at once', async () => {
    const caller = await seedAccount(test.gateway, { plan: 'starter' });
    const phone = caller.phones[0]! as E164;
    const lookups = test.gateway.store.lookups;
    const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(caller.accountId), { url: 'https://8.8.8.8/hook' });
    assert.equal((await lookups.numberWithPlan(phone))?.plan, 'starter');
    assert.equal((await lookups.enabledWebhooks(test.gateway.store.db, caller.accountId)).length, 1);
    const changedAt = Date.now();
    await other.accounts.updateAccount(caller.accountId, { plan: 'enterprise' });
    await other.webhooks.updateWebhook(operatorScope(), webhook.id, { enabled: false });
    for (;;) {
      const plan = (await lookups.numberWithPlan(phone))?.plan;
      const enabled = (await lookups.enabledWebhooks(test.gateway.store.db, caller.accountId)).length;
      if (plan === 'enterprise' && enabled === 0) break;
      assert.ok(Date.now() - changedAt < LOOKUP_TTL_MS / 2, `still ${plan} and ${enabled} webhooks after ${Date.now() - changedAt} ms`);
      await sleep(20);
    }
  });
});
