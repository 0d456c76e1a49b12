import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { assertRefused } from '../../support/operator-api.ts';

// An account's own key changing its number's settings, or pausing, resuming or clearing the queue
// of its number, is a management action, and so an audit row naming the key, the address it
// called from and what it did (ADR 0053, ADR 0069); a pause, resume or clear is written by the
// number's owner in the change's own transaction (ADR 0064's update).
for (const dialect of dialects) {
  describe(`a key's changes to its number and account as audit rows (${dialect})`, () => {
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

    const call = (account: SeededAccount, method: 'POST' | 'DELETE', url: string, payload?: object) =>
      test.inject({
        method,
        url,
        headers: { authorization: `Bearer ${account.apiKey}` },
        ...(payload !== undefined && { payload }),
      });
    const rowsOf = async (accountId: string) =>
      (await test.gateway.audit.list(operatorScope(), { accountId, limit: 50 }))
        .filter((row) => ['number.paused', 'number.resumed', 'number.queue_cleared'].includes(row.action))
        .reverse();

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

    it('a pause, a clear of the queue and a resume are rows naming the key, its address, the number and what each did, at both paths', async () => {
      const number = await test.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!);
      const paused = await call(seeded, 'POST', `/numbers/${number.id}/pause`, { reason: 'banned, moving' });
      assert.equal(paused.statusCode, 200, paused.body);
      assert.equal((await call(seeded, 'DELETE', `/api/numbers/${number.id}/queue`)).statusCode, 200);
      assert.equal((await call(seeded, 'POST', `/api/numbers/${number.phone}/resume`, {})).statusCode, 200);

      assert.deepEqual(
        (await rowsOf(seeded.accountId)).map((row) => [
          row.action,
          row.actor.kind,
          row.actor.id,
          row.actor.address,
          row.targetId,
          row.details?.phone,
          row.details?.detail ?? row.details?.cancelled ?? row.details?.was_paused,
        ]),
        [
          ['number.paused', 'api_key', seeded.apiKeyId, '127.0.0.1', number.id, number.phone, 'banned, moving'],
          ['number.queue_cleared', 'api_key', seeded.apiKeyId, '127.0.0.1', number.id, number.phone, 0],
          ['number.resumed', 'api_key', seeded.apiKeyId, '127.0.0.1', number.id, number.phone, true],
        ],
      );
      assert.match((await rowsOf(seeded.accountId))[0]?.actor.label ?? '', /^test \(/, "the key's name and hint");
    });

    it("another account's key is 404 number_not_found to a pause, a clear or a resume, and none writes a row in either account", async () => {
      const before = (await rowsOf(seeded.accountId)).length;
      assertRefused(await call(rival, 'POST', `/api/numbers/${seeded.phones[0]}/pause`, {}), 404, 'number_not_found');
      assertRefused(await call(rival, 'DELETE', `/api/numbers/${seeded.phones[0]}/queue`), 404, 'number_not_found');
      assertRefused(await call(rival, 'POST', `/api/numbers/${seeded.phones[0]}/resume`, {}), 404, 'number_not_found');
      assertRefused(await call(seeded, 'POST', `/api/numbers/${seeded.phones[0]}/pause`, { why: 'x' }), 400, 'invalid_request');
      assert.equal((await rowsOf(seeded.accountId)).length, before);
      assert.deepEqual(await rowsOf(rival.accountId), []);
      const number = await test.gateway.numbers.findNumber(operatorScope(), seeded.phones[0]!);
      assert.equal(test.gateway.pauses.holdOf(number.id), null, 'nothing paused it');
    });

    it("a change of the account's settings is a row naming the key and what changed; a read writes none", async () => {
      const change = (account: SeededAccount, payload: object) =>
        test.inject({ method: 'PATCH', url: '/api/account/settings', payload, headers: { authorization: `Bearer ${account.apiKey}` } });
      const settingsChanges = async (accountId: string) =>
        (await test.gateway.audit.list(operatorScope(), { accountId, limit: 50 })).filter(
          (row) => row.action === 'account.settings_changed',
        );

      assert.deepEqual((await change(seeded, {})).json(), { link_previews: false });
      assert.deepEqual(await settingsChanges(seeded.accountId), [], 'a read is no change');
      assert.deepEqual((await change(seeded, { link_previews: true })).json(), { link_previews: true });
      assertRefused(await change(seeded, { link_previews: 'yes' }), 400, 'invalid_request', 'link_previews');
      assert.deepEqual(
        (await settingsChanges(seeded.accountId)).map((row) => [
          row.actor.kind,
          row.actor.id,
          row.actor.address,
          row.targetId,
          row.details?.link_previews,
        ]),
        [['api_key', seeded.apiKeyId, '127.0.0.1', seeded.accountId, true]],
        'one row, for the change; none for the refusal',
      );
      assert.deepEqual(await settingsChanges(rival.accountId), [], "and none in another account's log");
    });
  });
}
