import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { uniquePhone } from '../../support/gateway.ts';
import { assertRefused, operatorApiWorld } from '../../support/operator-api.ts';
import { createTestUser } from '../../support/users.ts';

/**
 * An account's numbers over the operator API (docs/operator-api.md#numbers): added, read by id or
 * phone, given a holder and settings, moved to another account and removed, each an audit row
 * naming the token; a number of another account is not found; bad input is refused in the
 * documented envelope. Linking a number: operator-number-session.test.ts.
 */

interface NumberBody {
  id: string;
  phone: string;
  engine: string;
  status: string;
  account_id: string;
  holder_user_id: string | null;
  reject_calls: boolean;
  call_reply_text: string | null;
}

let people = 0;
const person = (accountId: string) => ({
  accountId,
  email: `holder${++people}.${Date.now()}@numbers.test`,
  password: 'not-signed-in-here',
});

for (const dialect of dialects) {
  describe(`an account's numbers over the operator API (${dialect})`, () => {
    const world = operatorApiWorld(dialect);
    const { call, auditOf } = world;

    it('adds a number the account sees at once, reads it by id and phone, sets its holder and settings, moves and removes it', async () => {
      const mine = `/admin/accounts/${world.account.accountId}/numbers`;
      const holder = (await createTestUser(world.test.gateway, person(world.account.accountId))).user;
      const phone = uniquePhone();
      const added = await call('POST', `/api${mine}`, { phone, holder_user_id: holder.id });
      assert.equal(added.statusCode, 201, added.body);
      const number = added.json() as NumberBody;
      assert.deepEqual(
        [number.phone, number.engine, number.account_id, number.holder_user_id],
        [phone, 'sandbox', world.account.accountId, holder.id],
      );
      const seen = await world.test.inject({
        method: 'GET',
        url: '/numbers',
        headers: { authorization: `Bearer ${world.account.apiKey}` },
      });
      assert.ok(seen.body.includes(number.id), "the account's key sees the number");
      const sent = await world.test.inject({
        method: 'POST',
        url: '/send_message',
        headers: { authorization: `Bearer ${world.account.apiKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ from_phone: phone, to_phone: world.account.phones[0], message: 'First words from the new number' }),
      });
      assert.equal(sent.statusCode, 200, `the account sends from it at once: ${sent.body}`);

      assert.ok(((await call('GET', mine)).json().numbers as NumberBody[]).some((each) => each.id === number.id));
      assert.equal((await call('GET', `${mine}/${number.id}`)).json().phone, phone);
      assert.equal((await call('GET', `${mine}/${encodeURIComponent(phone)}`)).json().id, number.id, 'by its phone too');

      const changed = await call('PATCH', `${mine}/${number.id}`, { holder_user_id: null, reject_calls: true, call_reply_text: 'Text me' });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.deepEqual(
        [changed.json().holder_user_id, changed.json().reject_calls, changed.json().call_reply_text],
        [null, true, 'Text me'],
      );
      const stored = await world.test.gateway.numbers.findNumber(operatorScope(), number.id);
      assert.deepEqual([stored.holderUserId, stored.rejectCalls, stored.callReplyText], [null, true, 'Text me'], 'the change is stored');
      const given = await call('PATCH', `${mine}/${number.id}`, { holder_user_id: holder.id });
      assert.equal(given.json().holder_user_id, holder.id);

      const moved = await call('POST', `${mine}/${number.id}/move`, { account_id: world.other.accountId });
      assert.equal(moved.statusCode, 200, moved.body);
      assert.deepEqual([moved.json().account_id, moved.json().holder_user_id], [world.other.accountId, null], 'moved, its holder cleared');
      assertRefused(await call('GET', `${mine}/${number.id}`), 404, 'number_not_found');
      const theirs = `/admin/accounts/${world.other.accountId}/numbers/${number.id}`;
      const removed = await call('DELETE', theirs);
      assert.equal(removed.statusCode, 200, removed.body);
      assertRefused(await call('GET', theirs), 404, 'number_not_found');

      const rows = (await auditOf(world.account.accountId, 4)).map((row) => [
        row.action,
        row.target_id,
        row.actor.kind,
        row.actor.id,
        row.details,
      ]);
      assert.deepEqual(rows, [
        ['number.reassigned', number.id, 'operator_token', world.tokenId, { phone, to_account_id: world.other.accountId }],
        ['number.settings_changed', number.id, 'operator_token', world.tokenId, { phone, holder_user_id: holder.id }],
        [
          'number.settings_changed',
          number.id,
          'operator_token',
          world.tokenId,
          { phone, holder_user_id: null, reject_calls: true, call_reply_text: 'Text me' },
        ],
        ['number.added', number.id, 'operator_token', world.tokenId, { phone, engine: 'sandbox', holder_user_id: holder.id }],
      ]);
      const [removedRow] = await auditOf(world.other.accountId, 1);
      assert.deepEqual([removedRow?.action, removedRow?.target_id, removedRow?.actor.id], ['number.removed', number.id, world.tokenId]);
    });

    it("another account's number is 404 number_not_found to every operation on one, by id or phone, and nothing changes", async () => {
      const theirs = await world.test.gateway.numbers.findNumber(operatorScope(), world.other.phones[0]!);
      const before = (await auditOf(world.account.accountId, 500)).length;
      for (const reference of [theirs.id, encodeURIComponent(theirs.phone)]) {
        const path = `/admin/accounts/${world.account.accountId}/numbers/${reference}`;
        assertRefused(await call('GET', path), 404, 'number_not_found');
        assertRefused(await call('PATCH', path, { reject_calls: true }), 404, 'number_not_found');
        assertRefused(await call('POST', `${path}/move`, { account_id: world.account.accountId }), 404, 'number_not_found');
        assertRefused(await call('DELETE', path), 404, 'number_not_found');
      }
      assert.ok(!(await call('GET', `/admin/accounts/${world.account.accountId}/numbers`)).body.includes(theirs.id), 'not listed');
      assert.deepEqual(await world.test.gateway.numbers.findNumber(operatorScope(), theirs.id), theirs, 'unchanged');
      assert.equal((await auditOf(world.account.accountId, 500)).length, before, 'nothing recorded');
      assertRefused(await call('GET', `/admin/accounts/acc_unknown/numbers/${theirs.id}`), 404, 'account_not_found');
      assertRefused(await call('GET', '/admin/accounts/acc_unknown/numbers'), 404, 'account_not_found');
      assertRefused(await call('POST', '/admin/accounts/acc_unknown/numbers', { phone: uniquePhone() }), 404, 'account_not_found');
    });

    it('refuses bad number input with the documented 4xx naming the field, and adds, moves or changes nothing', async () => {
      const numbers = `/admin/accounts/${world.account.accountId}/numbers`;
      const mine = `${numbers}/${encodeURIComponent(world.account.phones[0]!)}`;
      const before = (await call('GET', numbers)).json().numbers.length;
      const stranger = (await createTestUser(world.test.gateway, person(world.other.accountId))).user;
      assertRefused(await call('POST', numbers, {}), 400, 'invalid_request', 'phone');
      assertRefused(await call('POST', numbers, { phone: '12' }), 400, 'invalid_phone_number', 'phone');
      assertRefused(await call('POST', numbers, { phone: uniquePhone(), engine: 'meta' }), 400, 'invalid_request', 'engine');
      assertRefused(await call('POST', numbers, { phone: uniquePhone(), status: 'connected' }), 400, 'invalid_request', 'status');
      assertRefused(await call('POST', numbers, { phone: world.other.phones[0] }), 409, 'phone_already_registered');
      assertRefused(
        await call('POST', numbers, { phone: uniquePhone(), holder_user_id: stranger.id }),
        404,
        'user_not_found',
        'holder_user_id',
      );
      assertRefused(await call('PATCH', mine, {}), 400, 'invalid_request');
      assertRefused(await call('PATCH', mine, { call_reply_text: '' }), 400, 'invalid_request', 'call_reply_text');
      assertRefused(await call('PATCH', mine, { engine: 'baileys' }), 400, 'invalid_request', 'engine');
      assertRefused(await call('PATCH', mine, { holder_user_id: stranger.id }), 404, 'user_not_found', 'holder_user_id');
      assertRefused(await call('POST', `${mine}/move`, {}), 400, 'invalid_request', 'account_id');
      assertRefused(await call('POST', `${mine}/move`, { account_id: 'acc_unknown' }), 404, 'account_not_found');
      assertRefused(await call('DELETE', mine, { force: true }), 400, 'invalid_request', 'body');
      assertRefused(await call('GET', numbers, undefined, world.account.apiKey), 401, 'invalid_operator_token');
      assert.equal((await call('GET', numbers)).json().numbers.length, before, 'nothing added or moved');
      const number = await world.test.gateway.numbers.findNumber(operatorScope(), world.account.phones[0]!);
      assert.deepEqual(
        [number.accountId, number.holderUserId, number.callReplyText],
        [world.account.accountId, null, null],
        'nothing changed',
      );
    });
  });
}
