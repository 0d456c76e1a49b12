import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { uniquePhone } from '../../support/gateway.ts';
import { expectJsonObject, expectRefusal, openCliTestDatabase, runCli, type CliTestDatabase } from '../../support/run-cli.ts';

// wagw number cloud (docs/cloud-api.md), with no server running: Meta's ids as options, the
// token and secrets from standard input, sealed at rest, never printed.
const SECRETS = 'EAAG-cli-access-token\ncli-app-secret-value\ncli-verify-token\n';

for (const dialect of dialects) {
  describe(`wagw number cloud (${dialect})`, () => {
    let opened: CliTestDatabase;

    before(async () => {
      opened = await openCliTestDatabase(dialect, 'Cloud');
    });
    after(() => opened?.close());

    it('sets the settings from options and standard input, shows them without secrets, and clears them, each an audit row', async () => {
      const { gateway, database, accountId } = opened;
      const number = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'cloud' });
      const args = [
        'number',
        'cloud',
        number.phone,
        '--phone-number-id',
        '106540352242922',
        '--business-account-id',
        '102290129340398',
        '--json',
      ];
      const run = await runCli(database.url, args, {}, SECRETS);
      const set = expectJsonObject(run);
      assert.deepEqual([set.number_id, set.phone_number_id, set.business_account_id], [number.id, '106540352242922', '102290129340398']);
      assert.ok(!run.stdout.includes('cli-app-secret-value') && !run.stdout.includes('EAAG-cli-access-token'));
      const stored = await gateway.store.db
        .selectFrom('cloud_numbers')
        .selectAll()
        .where('number_id', '=', number.id)
        .executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(stored).includes('cli-app-secret-value'), 'sealed at rest');

      const shown = expectJsonObject(await runCli(database.url, ['number', 'cloud', number.id, '--show', '--json']));
      assert.equal(shown.phone_number_id, '106540352242922');
      expectJsonObject(await runCli(database.url, ['number', 'cloud', number.id, '--clear', '--json']));
      const actions = (await gateway.audit.list(operatorScope(), { accountId, limit: 2 })).map((event) => [event.action, event.actor.kind]);
      assert.deepEqual(actions, [
        ['number.cloud_settings_cleared', 'cli'],
        ['number.cloud_settings_set', 'cli'],
      ]);
    });

    it('refuses an id that is not Meta’s, and a number on another engine', async () => {
      const { gateway, database, accountId } = opened;
      const cloud = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone(), engine: 'cloud' });
      const args = (phone: string) => ['number', 'cloud', phone, '--phone-number-id', '../x', '--business-account-id', '1'];
      expectRefusal(await runCli(database.url, args(cloud.phone), {}, SECRETS), 'phone_number_id');
      const sandbox = await gateway.numbers.addNumber(operatorScope(), { accountId, phone: uniquePhone() });
      const other = ['number', 'cloud', sandbox.phone, '--phone-number-id', '1', '--business-account-id', '2'];
      expectRefusal(await runCli(database.url, other, {}, SECRETS), 'sandbox');
    });
  });
}
