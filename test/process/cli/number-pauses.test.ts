import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import type { Gateway } from '../../../src/main.ts';
import { dialects, type TestDatabase } from '../../support/databases.ts';
import { uniquePhone } from '../../support/gateway.ts';
import { expectJsonObject, runCli, openCliTestDatabase, type CliTestDatabase } from '../../support/run-cli.ts';

// wagw number pause / resume, with no server running: the command holds the number while it acts.
for (const dialect of dialects) {
  describe(`wagw number pause and resume (${dialect})`, () => {
    let opened: CliTestDatabase;
    let database: TestDatabase;
    let gateway: Gateway;
    let accountId: string;

    before(async () => {
      opened = await openCliTestDatabase(dialect, 'Pausing');
      ({ database, gateway, accountId } = opened);
    });
    after(() => opened?.close());

    it('pauses a number by hand with a reason, and resumes it', async () => {
      const number = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone() });
      const paused = expectJsonObject(await runCli(database.url, ['number', 'pause', number.phone, '--reason', 'banned', '--json']));
      assert.deepEqual(paused, { id: number.id, phone: number.phone, paused: true });
      const stored = (await gateway.pauses.pausesOf([number.id])).get(number.id);
      assert.deepEqual([stored?.reason, stored?.detail, stored?.until], ['manual', 'banned', null]);

      const resumed = expectJsonObject(await runCli(database.url, ['number', 'resume', number.id, '--json']));
      assert.deepEqual(resumed, { id: number.id, phone: number.phone, paused: false });
      assert.equal((await gateway.pauses.pausesOf([number.id])).size, 0);

      const rows = (await gateway.audit.list(operatorScope(), { accountId, limit: 50 }))
        .filter((row) => row.targetId === number.id && row.action !== 'number.added')
        .reverse();
      assert.deepEqual(
        rows.map((row) => [row.action, row.actor.kind, row.actor.label, row.actor.address, row.details?.detail ?? row.details?.was_paused]),
        [
          ['number.paused', 'cli', 'wagw (CLI)', null, 'banned'],
          ['number.resumed', 'cli', 'wagw (CLI)', null, true],
        ],
        'each is an audit row naming the CLI',
      );
    });

    it('refuses a number that does not exist', async () => {
      const run = await runCli(database.url, ['number', 'resume', '+447700900999']);
      assert.equal(run.exitCode, 1);
      assert.match(run.stderr, /There is no number/);
    });
  });
}
