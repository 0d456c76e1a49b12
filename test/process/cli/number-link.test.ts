import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { createGateway, createLogger, type Gateway } from '../../../src/main.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';
import { uniquePhone } from '../../support/gateway.ts';
import { runCli } from '../../support/run-cli.ts';

for (const dialect of dialects) {
  describe(`wagw number link (${dialect})`, () => {
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
      accountId = (await gateway.accounts.createAccount({ name: 'Linking', plan: 'pro' })).id;
    });
    after(async () => {
      await gateway.close();
      await database.drop();
    });

    it('ends at once with the network error when WhatsApp cannot be reached, instead of looping', async () => {
      const number = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'baileys' });
      const run = await runCli(database.url, ['number', 'link', number.phone]);
      assert.equal(run.exitCode, 1, run.stderr);
      assert.match(run.stderr, new RegExp(`${number.phone.replace('+', '\\+')} was not linked: the connection closed`));
      assert.match(run.stderr, /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ENETUNREACH|timed out/i, 'the reason names the network failure');
      assert.doesNotMatch(run.stderr, /QR codes expired/);
    });

    it('explains that a sandbox number has nothing to link', async () => {
      const number = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'sandbox' });
      const run = await runCli(database.url, ['number', 'link', number.phone]);
      assert.equal(run.exitCode, 1);
      assert.match(run.stderr, /runs on the sandbox engine, which connects without linking/);
    });
  });
}
