import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const CUSTOMER = '+14155550182';

// The simulated network keeps its groups in the gateway's database, as WhatsApp's servers keep
// theirs: a group made in test mode, and every change to it, is still there after a restart.
for (const dialect of dialects) {
  describe(`sandbox groups across a restart (${dialect})`, () => {
    let test: TestGateway;
    let alice: SeededAccount;
    let bob: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      alice = await seedAccount(test.gateway, { numbers: 2 });
      bob = await seedAccount(test.gateway);
    });

    after(async () => {
      await test?.close();
    });

    const get = (path: string, apiKey: string) => test.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${apiKey}` } });
    const groupUrl = (groupId: string, suffix = '') => `/groups/${encodeURIComponent(groupId)}${suffix}`;

    it('a group, its renaming, its invite link and a removal are all still there after a restart, and sends to it reach its members', async () => {
      const created = await test.post(
        '/groups',
        { from_phone: alice.phones[0], subject: 'Night shift', participants: [alice.phones[1], bob.phones[0], CUSTOMER] },
        alice.apiKey,
      );
      assert.equal(created.statusCode, 201, created.body);
      const groupId = created.json().id as string;
      const renamed = await test.inject({
        method: 'PATCH',
        url: groupUrl(groupId),
        payload: { from_phone: alice.phones[0], subject: 'Day shift', description: 'Rota' },
        headers: { authorization: `Bearer ${alice.apiKey}` },
      });
      assert.equal(renamed.statusCode, 200, renamed.body);
      const revoked = await test.post(groupUrl(groupId, '/invite_link/revoke'), { from_phone: alice.phones[0] }, alice.apiKey);
      assert.equal(revoked.statusCode, 200, revoked.body);
      const removed = await test.post(
        groupUrl(groupId, '/participants'),
        { from_phone: alice.phones[0], action: 'remove', participants: [bob.phones[0]] },
        alice.apiKey,
      );
      assert.deepEqual(removed.json().results, [{ phone: bob.phones[0], outcome: 'done' }]);

      await test.restart();

      const read = await get(`${groupUrl(groupId)}?from_phone=${encodeURIComponent(alice.phones[0]!)}`, alice.apiKey);
      assert.equal(read.statusCode, 200, read.body);
      const group = read.json();
      assert.deepEqual([group.subject, group.description], ['Day shift', 'Rota']);
      assert.deepEqual(
        (group.participants as { phone: string; role: string }[]).map((participant) => [participant.phone, participant.role]).sort(),
        [
          [alice.phones[0], 'superadmin'],
          [alice.phones[1], 'member'],
          [CUSTOMER, 'member'],
        ].sort(),
      );
      const link = await get(`${groupUrl(groupId, '/invite_link')}?from_phone=${encodeURIComponent(alice.phones[0]!)}`, alice.apiKey);
      assert.equal(link.json().link, revoked.json().link, 'the revoked link came back');

      const sent = await test.post(
        '/send_message',
        { from_phone: alice.phones[0], to_group: groupId, message: 'Still here after the restart' },
        alice.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      const received = await get(`/messages?group_id=${encodeURIComponent(groupId)}&direction=inbound`, alice.apiKey);
      assert.deepEqual(
        (received.json().messages as Record<string, unknown>[]).map((message) => [message.to_phone, message.from_phone, message.message]),
        [[alice.phones[1], alice.phones[0], 'Still here after the restart']],
      );
      const outsider = await test.post(
        '/send_message',
        { from_phone: bob.phones[0], to_group: groupId, message: 'Let me back in' },
        bob.apiKey,
      );
      assert.deepEqual(
        [outsider.statusCode, outsider.json().error],
        [403, 'not_group_member'],
        'a number removed before the restart is still out',
      );
    });

    it('a group whose last member left is gone for good, after a restart too', async () => {
      const created = await test.post(
        '/groups',
        { from_phone: alice.phones[0], subject: 'Short-lived', participants: [alice.phones[1]] },
        alice.apiKey,
      );
      const groupId = created.json().id as string;
      for (const phone of [alice.phones[1], alice.phones[0]]) {
        const left = await test.post(groupUrl(groupId, '/leave'), { from_phone: phone }, alice.apiKey);
        assert.equal(left.statusCode, 200, left.body);
      }
      const kept = await test.gateway.store.db.selectFrom('sandbox_groups').select('group_id').where('group_id', '=', groupId).execute();
      assert.deepEqual(kept, [], 'the empty group is still kept');
      await test.restart();
      const listed = await get(`/groups?from_phone=${encodeURIComponent(alice.phones[0]!)}`, alice.apiKey);
      assert.equal(listed.statusCode, 200, listed.body);
      assert.equal(
        (listed.json().groups as { id: string }[]).some((each) => each.id === groupId),
        false,
      );
    });
  });
}
