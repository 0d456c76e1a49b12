import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Gateway } from '../../../src/main.ts';
import { dialects, type TestDatabase } from '../../support/databases.ts';
import { uniquePhone } from '../../support/gateway.ts';
import { runCli, openCliTestDatabase, type CliTestDatabase } from '../../support/run-cli.ts';

for (const dialect of dialects) {
  describe(`wagw number link (${dialect})`, () => {
    let opened: CliTestDatabase;
    let database: TestDatabase;
    let gateway: Gateway;
    let accountId: string;

    before(async () => {
      opened = await openCliTestDatabase(dialect, 'Linking');
      ({ database, gateway, accountId } = opened);
    });
    after(() => opened?.close());

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
