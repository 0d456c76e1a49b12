import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SYSTEM_ACTOR } from '../../../src/domain/audit.ts';
import { parseSettingInput } from '../../../src/domain/send-policy.ts';
import { operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { assertRefused, operatorApiWorld } from '../../support/operator-api.ts';

/**
 * Pausing, resuming and clearing the queue of an account's number over the operator API
 * (docs/operator-api.md#holding-a-numbers-sends): each holds or cancels the number's sends as the
 * account's own key would, and each is an audit row naming the token and its address; a number of
 * another account is not found; bad input is refused in the documented envelope. The same actions
 * asked of a node that does not serve the number: test/integration/cluster/forwarding.test.ts.
 */

for (const dialect of dialects) {
  describe(`holding a number's sends over the operator API (${dialect})`, () => {
    const world = operatorApiWorld(dialect);
    const { call, auditOf } = world;
    const numberPath = () => `/admin/accounts/${world.account.accountId}/numbers/${world.account.phones[0]}`;
    const numberId = async () => (await world.test.gateway.numbers.findNumber(operatorScope(), world.account.phones[0]!)).id;
    const send = (message: string) =>
      world.test.inject({
        method: 'POST',
        url: '/send_message',
        headers: { authorization: `Bearer ${world.account.apiKey}`, 'content-type': 'application/json' },
        payload: { from_phone: world.account.phones[0], to_phone: '+14155550100', message },
      });
    /** The number's rows of these actions, oldest first, as the operator API's audit log reads them. */
    const sendsAudit = async (id: string) =>
      (await auditOf(world.account.accountId, 50))
        .filter((row) => row.target_id === id && ['number.paused', 'number.resumed', 'number.queue_cleared'].includes(row.action))
        .reverse();

    it('pauses a number, whose sends are refused, and resumes it at both paths, each an audit row naming the token and its address', async () => {
      const id = await numberId();
      const paused = await call('POST', `${numberPath()}/pause`, { reason: '  moving to a new number ' });
      assert.equal(paused.statusCode, 200, paused.body);
      assert.deepEqual([paused.json().number_id, paused.json().paused?.reason, paused.json().paused?.until], [id, 'manual', null]);
      const held = await send('while paused');
      assert.deepEqual([held.statusCode, held.json().error], [503, 'number_paused'], held.body);

      const resumed = await call('POST', `/api${numberPath()}/resume`, {});
      assert.equal(resumed.statusCode, 200, resumed.body);
      assert.equal(resumed.json().paused, null);
      assert.equal((await send('after the resume')).statusCode, 200);
      const again = await call('POST', `${numberPath()}/resume`, {});
      assert.deepEqual([again.statusCode, again.json().paused], [200, null], 'a number that is not paused is answered as it is');

      assert.deepEqual(
        (await sendsAudit(id)).map((row) => [
          row.action,
          row.actor.kind,
          row.actor.id,
          row.actor.address,
          row.details.detail ?? row.details.was_paused,
        ]),
        [
          ['number.paused', 'operator_token', world.tokenId, '127.0.0.1', 'moving to a new number'],
          ['number.resumed', 'operator_token', world.tokenId, '127.0.0.1', true],
          ['number.resumed', 'operator_token', world.tokenId, '127.0.0.1', false],
        ],
        'the reason trimmed; the second resume changed nothing, and its row says so',
      );
    });

    it('clears the queue: the waiting message is cancelled and never sent, and the row counts it', async () => {
      const id = await numberId();
      const number = await world.test.gateway.numbers.findNumber(operatorScope(), id);
      // An hour between sends, so that the second waits in the queue.
      await world.test.gateway.sendQueues.setNumberPolicy(
        number,
        parseSettingInput({ min_gap_ms: 3_600_000, max_gap_ms: 3_600_000 }, 'send_policy'),
        SYSTEM_ACTOR,
      );
      assert.equal((await send('leaves now')).statusCode, 200);
      const queued = await send('waits');
      assert.equal(queued.statusCode, 202, queued.body);

      const cleared = await call('DELETE', `${numberPath()}/queue`);
      assert.equal(cleared.statusCode, 200, cleared.body);
      assert.deepEqual(cleared.json(), { number_id: id, cancelled: 1, pending: 0 });
      const message = await world.test.inject({
        method: 'GET',
        url: `/messages/${queued.json().message_id}`,
        headers: { authorization: `Bearer ${world.account.apiKey}` },
      });
      assert.equal(message.json().status, 'cancelled', message.body);
      const empty = await call('DELETE', `/api${numberPath()}/queue`);
      assert.deepEqual(empty.json(), { number_id: id, cancelled: 0, pending: 0 });
      assert.deepEqual(
        (await sendsAudit(id))
          .filter((row) => row.action === 'number.queue_cleared')
          .map((row) => [row.actor.kind, row.actor.id, row.details.cancelled]),
        [
          ['operator_token', world.tokenId, 1],
          ['operator_token', world.tokenId, 0],
        ],
      );
    });

    it("another account's number is 404 number_not_found to each, and is neither paused nor recorded", async () => {
      const otherId = (await world.test.gateway.numbers.findNumber(operatorScope(), world.other.phones[0]!)).id;
      for (const target of [otherId, world.other.phones[0]!]) {
        const path = `/admin/accounts/${world.account.accountId}/numbers/${encodeURIComponent(target)}`;
        assertRefused(await call('POST', `${path}/pause`, {}), 404, 'number_not_found');
        assertRefused(await call('POST', `${path}/resume`, {}), 404, 'number_not_found');
        assertRefused(await call('DELETE', `${path}/queue`), 404, 'number_not_found');
      }
      assertRefused(await call('POST', `/admin/accounts/acc_nothing/numbers/${otherId}/pause`, {}), 404, 'account_not_found');
      assert.equal(world.test.gateway.pauses.holdOf(otherId), null, 'not paused');
      assert.deepEqual(await sendsAudit(otherId), [], 'and nothing recorded');
      assert.deepEqual(
        (await auditOf(world.other.accountId, 50)).filter((row) => row.target_id === otherId && row.action !== 'number.added'),
        [],
      );
    });

    it('refuses bad input in the documented envelope: an unknown field, a reason too long, a body on the clear, no token, a key', async () => {
      const id = await numberId();
      const rowsBefore = (await sendsAudit(id)).length;
      assertRefused(await call('POST', `${numberPath()}/pause`, { reason: 'x', until: '2030-01-01' }), 400, 'invalid_request');
      assertRefused(await call('POST', `${numberPath()}/pause`, { reason: 'x'.repeat(501) }), 400, 'invalid_request', 'reason');
      assertRefused(await call('POST', `${numberPath()}/resume`, { now: true }), 400, 'invalid_request');
      assertRefused(await call('DELETE', `${numberPath()}/queue`, {}), 400, 'invalid_request');
      assertRefused(await call('POST', `${numberPath()}/pause?force=1`, {}), 400, 'invalid_request');
      const anonymous = await world.test.inject({ method: 'POST', url: `${numberPath()}/pause`, payload: {} });
      assertRefused(anonymous, 401, 'missing_operator_token');
      assertRefused(await call('POST', `${numberPath()}/pause`, {}, world.account.apiKey), 401, 'invalid_operator_token');
      assert.equal(world.test.gateway.pauses.holdOf(id), null, 'nothing refused paused the number');
      assert.equal((await sendsAudit(id)).length, rowsBefore, 'and no row was written');
    });
  });
}
