import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { buildApp } from '../../../src/app.ts';
import { createGateway, createLogger } from '../../../src/main.ts';
import { newId } from '../../../src/domain/ids.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { usagePeriod } from '../../../src/domain/plans.ts';
import { insertMessage } from '../../../src/store/repositories/messages.ts';
import { listMessages } from '../../../src/store/repositories/message-pages.ts';
import { reserveMonthlyUnit } from '../../../src/store/repositories/usage.ts';
import { dialects } from '../../support/databases.ts';
import { withNumberOn, seedAccount, startTestGateway, uniquePhone, type TestGateway } from '../../support/gateway.ts';

const LIMIT = 10;

for (const dialect of dialects) {
  describe(`monthly volume (${dialect})`, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect);
    });
    after(() => test.close());

    it(`at limit ${LIMIT}, ${LIMIT + 20} concurrent sends admit exactly ${LIMIT}`, async () => {
      const account = await seedAccount(test.gateway, { monthlyLimit: LIMIT });
      const responses = await Promise.all(
        Array.from({ length: LIMIT + 20 }, (_, index) =>
          test.post('/send_message', { from_phone: account.phones[0], to_phone: '+14155550100', message: `n${index}` }, account.apiKey),
        ),
      );
      const statuses = responses.map((response) => response.statusCode);
      assert.equal(statuses.filter((status) => status === 200).length, LIMIT);
      assert.equal(statuses.filter((status) => status === 429).length, 20);
      const usage = await test.gateway.accounts.usage(account.accountId);
      assert.equal(usage.used, LIMIT);
      const stored = await listMessages(test.gateway.store.db, { accountId: account.accountId, direction: 'outbound', limit: 100 });
      assert.equal(stored.length, LIMIT, 'only admitted sends are stored');
    });

    it('two gateway processes on one database still admit exactly the limit', async () => {
      // One account, two numbers, each served by its own gateway: the quota is shared across nodes.
      const account = await seedAccount(test.gateway, { monthlyLimit: LIMIT, numbers: 2 });
      const config = loadConfig({ DATABASE_URL: test.database.url, LOG_LEVEL: 'silent', WAGW_SECRET_KEY: '7e57'.repeat(16) });
      const secondGateway = await createGateway(config, createLogger(config));
      const secondApp = await buildApp(secondGateway);
      try {
        const send = (app: typeof secondApp, phone: string, index: number) =>
          app.inject({
            method: 'POST',
            url: '/send_message',
            headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
            payload: { from_phone: phone, to_phone: '+14155550100', message: `n${index}` },
          });
        const responses = await withNumberOn(test.gateway, secondGateway, account.phones[1]!, () =>
          Promise.all(
            Array.from({ length: LIMIT + 20 }, (_, index) =>
              index % 2 === 0 ? send(test.app, account.phones[0]!, index) : send(secondApp, account.phones[1]!, index),
            ),
          ),
        );
        assert.equal(responses.filter((response) => response.statusCode === 200).length, LIMIT);
        assert.equal(responses.filter((response) => response.statusCode === 429).length, 20);
      } finally {
        await secondApp.close();
        await secondGateway.close();
      }
    });

    it('a send a crash cut off before the engine answered is failed by the sweep, and its unit is given back once', async () => {
      const account = await seedAccount(test.gateway, { monthlyLimit: 5 });
      const at = new Date(Date.now() - 120_000);
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
      await test.gateway.committer.run(async (trx) => {
        await reserveMonthlyUnit(trx, account.accountId, usagePeriod(at), 5);
        await insertMessage(trx, {
          id: newId('message'),
          accountId: account.accountId,
          numberId: number.id,
          direction: 'outbound',
          fromPhone: number.phone,
          fromLid: null,
          toPhone: '+14155550100' as E164,
          text: 'cut off',
          contentKind: 'text',
          mediaId: null,
          structured: null,
          status: 'queued',
          engineMessageId: null,
          createdAt: at,
        });
      });
      assert.equal((await test.gateway.accounts.usage(account.accountId, at)).used, 1);
      assert.equal(await test.gateway.sender.failInterruptedSends(new Date(Date.now() - 60_000)), 1);
      const [stored] = await listMessages(test.gateway.store.db, { accountId: account.accountId, direction: 'outbound', limit: 5 });
      assert.equal(stored?.status, 'unknown', 'whether the engine took it cannot be known');
      assert.equal((await test.gateway.accounts.usage(account.accountId, at)).used, 0);
      assert.equal(await test.gateway.sender.failInterruptedSends(new Date()), 0, 'nothing is failed, or given back, twice');
      assert.equal((await test.gateway.accounts.usage(account.accountId, at)).used, 0);
    });

    it("a send younger than the sweep's age is left to the gateway making it", async () => {
      const account = await seedAccount(test.gateway);
      const number = await test.gateway.numbers.findNumber(operatorScope(), account.phones[0]!);
      await insertMessage(test.gateway.store.db, {
        id: newId('message'),
        accountId: account.accountId,
        numberId: number.id,
        direction: 'outbound',
        fromPhone: number.phone,
        fromLid: null,
        toPhone: '+14155550100' as E164,
        text: 'in flight elsewhere',
        contentKind: 'text',
        mediaId: null,
        structured: null,
        status: 'queued',
        engineMessageId: null,
        createdAt: new Date(),
      });
      assert.equal(await test.gateway.sender.failInterruptedSends(new Date(Date.now() - 60_000)), 0);
      const [stored] = await listMessages(test.gateway.store.db, { accountId: account.accountId, direction: 'outbound', limit: 5 });
      assert.equal(stored?.status, 'queued');
    });

    it('incoming messages do not count against the volume', async () => {
      const account = await seedAccount(test.gateway, { monthlyLimit: 1 });
      for (let index = 0; index < 3; index++) {
        const response = await test.post(
          '/sandbox/receive',
          { from_phone: uniquePhone(), to_phone: account.phones[0], message: 'in' },
          account.apiKey,
        );
        assert.equal(response.statusCode, 200);
      }
      assert.equal((await test.gateway.accounts.usage(account.accountId)).used, 0);
      const send = await test.post(
        '/send_message',
        { from_phone: account.phones[0], to_phone: '+14155550100', message: 'out' },
        account.apiKey,
      );
      assert.equal(send.statusCode, 200);
    });

    it("the plans carry their volumes, and a custom limit replaces the plan's", async () => {
      const expectations: [string, number | undefined, number | null][] = [
        ['starter', undefined, 10_000],
        ['pro', undefined, 60_000],
        ['enterprise', undefined, null],
        ['pro', 5, 5],
        ['enterprise', 7, 7],
      ];
      for (const [plan, monthlyLimit, expected] of expectations) {
        const account = await seedAccount(test.gateway, { plan, ...(monthlyLimit !== undefined && { monthlyLimit }), numbers: 0 });
        assert.equal((await test.gateway.accounts.usage(account.accountId)).limit, expected, `${plan} ${monthlyLimit}`);
      }
    });

    it('raising the limit of an exhausted account lets it send again at once', async () => {
      const account = await seedAccount(test.gateway, { monthlyLimit: 1 });
      const body = { from_phone: account.phones[0], to_phone: '+14155550100', message: 'x' };
      assert.equal((await test.post('/send_message', body, account.apiKey)).statusCode, 200);
      assert.equal((await test.post('/send_message', body, account.apiKey)).statusCode, 429);
      await test.gateway.accounts.updateAccount(account.accountId, { customMonthlyLimit: null });
      assert.equal((await test.post('/send_message', body, account.apiKey)).statusCode, 200);
    });
  });
}
