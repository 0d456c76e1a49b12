import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { uniquePhone } from '../../support/gateway.ts';
import { expectJsonObject, expectRefusal, openCliTestDatabase, runCli, type CliTestDatabase } from '../../support/run-cli.ts';

// wagw number proxy (ADR 0063), with no server running: the proxy is stored sealed and shown redacted.
for (const dialect of dialects) {
  describe(`wagw number proxy (${dialect})`, () => {
    let opened: CliTestDatabase;

    before(async () => {
      opened = await openCliTestDatabase(dialect, 'Proxied');
    });
    after(() => opened?.close());

    it('sets a proxy shown only redacted, with its audit row, and clears it', async () => {
      const { gateway, database, accountId } = opened;
      const number = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'baileys' });
      const run = await runCli(database.url, ['number', 'proxy', number.phone, 'http://ops:s3cret-pw@proxy.example:3128', '--json']);
      const set = expectJsonObject(run);
      assert.deepEqual([set.proxy, set.reconnected], ['http://***@proxy.example:3128', false]);
      assert.ok(!run.stdout.includes('s3cret-pw'));
      assert.equal((await gateway.numbers.findNumber(operatorScope(), number.id)).proxy, 'http://***@proxy.example:3128');

      const cleared = expectJsonObject(await runCli(database.url, ['number', 'proxy', number.id, '--clear', '--json']));
      assert.equal(cleared.proxy, null);
      const actions = (await gateway.audit.list(operatorScope(), { accountId, limit: 2 })).map((event) => [event.action, event.actor.kind]);
      assert.deepEqual(actions, [
        ['number.proxy_cleared', 'cli'],
        ['number.proxy_set', 'cli'],
      ]);
    });

    it('refuses a URL that is not a proxy, without printing it', async () => {
      const { gateway, database, accountId } = opened;
      const number = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'baileys' });
      const run = await runCli(database.url, ['number', 'proxy', number.phone, 'ftp://ops:s3cret-pw@proxy.example:21']);
      expectRefusal(run, 'ftp');
      assert.ok(!run.stderr.includes('s3cret-pw'));
    });
  });
}
