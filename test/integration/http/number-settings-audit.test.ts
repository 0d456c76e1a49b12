import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { assertRefused } from '../../support/operator-api.ts';

// An account's own key changing its number's settings is a management action, and so an audit
// row naming the key, the address it called from and what changed (ADR 0053, ADR 0069).
for (const dialect of dialects) {
  describe(`PATCH /numbers/{id} as an audit row (${dialect})`, () => {
    let test: TestGateway;
    let seeded: SeededAccount;
    let rival: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      [seeded, rival] = [await seedAccount(test.gateway), await seedAccount(test.gateway)];
    });
    after(() => test?.close());

    const patch = (account: SeededAccount, id: string, payload: object) =>
      test.inject({
        method: 'PATCH',
        url: `/api/numbers/${encodeURIComponent(id)}`,
        payload,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
    const settingsRows = (accountId: string) =>
      test.gateway.store.db
        .selectFrom('audit_events')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('action', '=', 'number.settings_changed')
        .execute();

    it('names the key, its address and the settings changed; show_online runs on the owner, which writes the row', async () => {
      const number = await test.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!);
      const changed = await patch(seeded, number.id, { auto_read: true, show_online: false, call_reply_text: 'Write instead.' });
      assert.equal(changed.statusCode, 200, changed.body);

      const rows = await settingsRows(seeded.accountId);
      assert.equal(rows.length, 1);
      const [row] = rows;
      assert.deepEqual(
        [row!.actor_kind, row!.actor_id, row!.target_id, row!.source_address],
        ['api_key', seeded.apiKeyId, number.id, '127.0.0.1'],
      );
      assert.match(row!.actor_label ?? '', /^test \(/, "the key's name and hint");
      assert.deepEqual(JSON.parse(row!.details ?? '{}'), {
        phone: number.phone,
        auto_read: true,
        show_online: false,
        call_reply_text: 'Write instead.',
      });
    });

    it("writes no row for a refused change: another account's number, or a field the operation does not take", async () => {
      assertRefused(await patch(rival, seeded.phones[0]!, { auto_read: false }), 404, 'number_not_found');
      assertRefused(await patch(seeded, seeded.phones[0]!, { auto_reed: false }), 400, 'invalid_request', 'auto_reed');
      assert.equal((await settingsRows(rival.accountId)).length, 0);
      assert.equal((await settingsRows(seeded.accountId)).length, 1, 'only the change of the test before');
    });

    it("a send policy's change, the number's or the account's, is a row naming the key and the policy", async () => {
      const number = await test.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!);
      assert.equal((await patch(seeded, number.id, { send_policy: 'cautious' })).statusCode, 200);
      const accountDefault = await test.inject({
        method: 'PATCH',
        url: '/api/account/send_policy',
        payload: { send_policy: 'standard' },
        headers: { authorization: `Bearer ${seeded.apiKey}` },
      });
      assert.equal(accountDefault.statusCode, 200, accountDefault.body);
      const rows = await test.gateway.store.db
        .selectFrom('audit_events')
        .selectAll()
        .where('account_id', '=', seeded.accountId)
        .where('action', 'in', ['number.send_policy_changed', 'account.send_policy_changed'])
        .orderBy('at')
        // Two rows in one millisecond: the number's change came first, and sorts after the account's by name.
        .orderBy('action', 'desc')
        .execute();
      assert.deepEqual(
        rows.map((row) => [row.action, row.actor_kind, row.actor_id, row.target_id, JSON.parse(row.details ?? '{}').policy]),
        [
          ['number.send_policy_changed', 'api_key', seeded.apiKeyId, number.id, 'cautious'],
          ['account.send_policy_changed', 'api_key', seeded.apiKeyId, seeded.accountId, 'standard'],
        ],
      );
    });
  });
}
