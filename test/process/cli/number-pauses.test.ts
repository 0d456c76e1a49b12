import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { uniquePhone } from '../../support/gateway.ts';
import { expectJsonObject, runCli } from '../../support/run-cli.ts';

// wagw number pause / resume, with no server running: the command holds the number while it acts.
for (const dialect of dialects) {
  describe(`wagw number pause and resume (${dialect})`, () => {
    let database: TestDatabase;
    let gateway: Gateway;
    let accountId: string;

    before(async () => {
      database = await createTestDatabase(dialect);
      const config = loadConfig({
        DATABASE_URL: database.url,
        LOG_LEVEL: 'silent',
        WAGW_SECRET_KEY: process.env.WAGW_SECRET_KEY ?? '7e57'.repeat(16),
      });
      gateway = await createGateway(config, createLogger(config));
      accountId = (await gateway.accounts.createAccount({ name: 'Pausing', plan: 'pro' })).id;
    });
    after(async () => {
      await gateway.close();
      await database.drop();
    });

    it('pauses a number by hand with a reason, and resumes it', async () => {
      const number = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone() });
      const paused = expectJsonObject(await runCli(database.url, ['number', 'pause', number.phone, '--reason', 'banned', '--json']));
      assert.deepEqual(paused, { id: number.id, phone: number.phone, paused: true });
      const stored = (await gateway.pauses.pausesOf([number.id])).get(number.id);
      assert.deepEqual([stored?.reason, stored?.detail, stored?.until], ['manual', 'banned', null]);

      const resumed = expectJsonObject(await runCli(database.url, ['number', 'resume', number.id, '--json']));
      assert.deepEqual(resumed, { id: number.id, phone: number.phone, paused: false });
      assert.equal((await gateway.pauses.pausesOf([number.id])).size, 0);
    });

    it('refuses a number that does not exist', async () => {
      const run = await runCli(database.url, ['number', 'resume', '+447700900999']);
      assert.equal(run.exitCode, 1);
      assert.match(run.stderr, /There is no number/);
    });
  });
}
