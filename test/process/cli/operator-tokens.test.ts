import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { expectJsonObject, expectRefusal, openCliTestDatabase, runCli, type CliTestDatabase } from '../../support/run-cli.ts';

for (const dialect of dialects) {
  describe(`wagw operator-token (${dialect})`, () => {
    let opened: CliTestDatabase;

    before(async () => {
      opened = await openCliTestDatabase(dialect, 'Operator tokens');
    });
    after(() => opened?.close());

    it('creates a token shown once, lists it by hint only, and revokes it, each with an audit row naming the CLI', async () => {
      const url = opened.database.url;
      const created = expectJsonObject(await runCli(url, ['operator-token', 'create', '--name', 'onboarding', '--json']));
      assert.match(String(created.token), /^wagw_op_[0-9a-f]{64}$/);
      assert.equal(created.name, 'onboarding');
      assert.equal(created.revoked_at, null);

      const listed = expectJsonObject(await runCli(url, ['operator-token', 'list', '--json']));
      const tokens = listed.tokens as Record<string, unknown>[];
      assert.deepEqual(
        tokens.map((token) => [token.id, token.hint]),
        [[created.id, `wagw_op_…${String(created.token).slice(-4)}`]],
      );
      assert.ok(!JSON.stringify(listed).includes(String(created.token)), 'the list never shows a token');
      assert.ok((await opened.gateway.operatorTokens.authenticate(`Bearer ${created.token}`)).id === created.id);

      const revoked = expectJsonObject(await runCli(url, ['operator-token', 'revoke', String(created.id), '--json']));
      assert.equal(typeof revoked.revoked_at, 'string');
      await assert.rejects(opened.gateway.operatorTokens.authenticate(`Bearer ${created.token}`), { code: 'invalid_operator_token' });
      expectRefusal(await runCli(url, ['operator-token', 'revoke', 'opt_missing']), 'There is no operator token opt_missing');
      assert.equal((await runCli(url, ['operator-token', 'create', '--name', '  '])).exitCode, 1);

      const audit = await opened.gateway.audit.list(operatorScope(), { accountId: null, limit: 10 });
      assert.deepEqual(
        audit.filter((event) => event.targetId === created.id).map((event) => [event.action, event.actor.kind]),
        [
          ['operator_token.revoked', 'cli'],
          ['operator_token.created', 'cli'],
        ],
      );
    });
  });
}
