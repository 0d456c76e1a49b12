import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import type { Json, JsonObject } from '../../support/json.ts';

const CUSTOMER = '+14155550181';
// The sandbox's privacy rehearsal: a phone ending in 403 lets only its contacts add it.
const PRIVATE_PERSON = '+14155550403';

// Managing a group on the simulated network: an admin adds, removes, promotes and demotes
// participants with an outcome per phone, changes the subject and description, hands out and
// revokes the invite link; a member leaves. Each member's account hears group.updated.
for (const dialect of dialects) {
  describe(`group administration (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let alice: SeededAccount;
    let bob: SeededAccount;
    let globex: SeededAccount;
    let groupId: string;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      receiver = await WebhookReceiver.start();
      alice = await seedAccount(test.gateway, { numbers: 2 });
      bob = await seedAccount(test.gateway);
      globex = await seedAccount(test.gateway);
      for (const account of [alice, bob]) {
        // A direct-only webhook still hears group.updated: that event is not a chat's message.
        await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
          url: receiver.url(`/${account.accountId}`),
          eventTypes: ['group.updated'],
        });
      }
      test.gateway.deliveryWorker.start();
      const created = await test.post(
        '/groups',
        { from_phone: alice.phones[0], subject: 'Warehouse', participants: [alice.phones[1], CUSTOMER] },
        alice.apiKey,
      );
      assert.equal(created.statusCode, 201, created.body);
      groupId = created.json().id;
    });

    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    const url = (prefix: string, suffix = '') => `${prefix}/groups/${encodeURIComponent(groupId)}${suffix}`;
    const get = (path: string, apiKey: string) => test.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${apiKey}` } });

    async function heard(account: SeededAccount, match: (body: JsonObject) => boolean): Promise<JsonObject> {
      const matches = (request: ReceivedRequest) => request.path === `/${account.accountId}` && match(JSON.parse(request.body));
      const [request] = await receiver.waitForRequests(1, matches);
      return JSON.parse(request!.body) as JsonObject;
    }

    it("an admin adds participants with an outcome for each, and an added number's account hears it and lists the group", async () => {
      const added = await test.post(
        url('/api', '/participants'),
        { from_phone: alice.phones[0], action: 'add', participants: [bob.phones[0], PRIVATE_PERSON, CUSTOMER] },
        alice.apiKey,
      );
      assert.equal(added.statusCode, 200, added.body);
      assert.deepEqual(added.json(), {
        action: 'add',
        results: [
          { phone: bob.phones[0], outcome: 'done' },
          { phone: PRIVATE_PERSON, outcome: 'privacy_restricted' },
          { phone: CUSTOMER, outcome: 'already_member' },
        ],
      });
      const event = await heard(bob, (body) => body.event === 'group.updated' && body.change === 'added');
      assert.deepEqual(
        [event.phone, event.group, event.participants, event.number_affected, event.by_phone],
        [bob.phones[0], { id: groupId, subject: 'Warehouse' }, [{ phone: bob.phones[0], lid: null }], true, alice.phones[0]],
      );
      const listed = (await get(`/groups?from_phone=${encodeURIComponent(bob.phones[0]!)}`, bob.apiKey)).json();
      assert.deepEqual(listed.groups, [{ id: groupId, subject: 'Warehouse', size: 4, is_admin: false }]);
      const seenByMember = await heard(
        alice,
        (body) => body.change === 'added' && body.phone === alice.phones[1] && body.participants[0].phone === bob.phones[0],
      );
      assert.equal(seenByMember.number_affected, false, 'another member hears of the add, which is not about it');
    });

    it('only an admin changes the group: a member is refused with not_group_admin until promoted', async () => {
      const refused = await test.post(
        url('', '/participants'),
        { from_phone: bob.phones[0], action: 'remove', participants: [CUSTOMER] },
        bob.apiKey,
      );
      assert.deepEqual([refused.statusCode, refused.json().error, refused.json().meta], [403, 'not_group_admin', { group_id: groupId }]);
      const renameRefused = await test.inject({
        method: 'PATCH',
        url: url(''),
        payload: { from_phone: bob.phones[0], subject: 'Mine' },
        headers: { authorization: `Bearer ${bob.apiKey}` },
      });
      assert.deepEqual([renameRefused.statusCode, renameRefused.json().error], [403, 'not_group_admin']);

      const promoted = await test.post(
        url('', '/participants'),
        { from_phone: alice.phones[0], action: 'promote', participants: [bob.phones[0]] },
        alice.apiKey,
      );
      assert.deepEqual(promoted.json().results, [{ phone: bob.phones[0], outcome: 'done' }]);
      await heard(bob, (body) => body.change === 'promoted' && body.number_affected === true);
      const detail = (await get(`${url('')}?from_phone=${encodeURIComponent(bob.phones[0]!)}`, bob.apiKey)).json();
      assert.equal(detail.is_admin, true);
      const demoted = await test.post(
        url('', '/participants'),
        { from_phone: bob.phones[0], action: 'demote', participants: [alice.phones[0], CUSTOMER] },
        bob.apiKey,
      );
      assert.deepEqual(
        demoted.json().results,
        [
          { phone: alice.phones[0], outcome: 'refused' },
          { phone: CUSTOMER, outcome: 'done' },
        ],
        'the creator cannot be demoted',
      );
    });

    it('an admin changes the subject and description; members hear it, and later messages carry the new subject', async () => {
      const patch = (body: object, apiKey = alice.apiKey) =>
        test.inject({ method: 'PATCH', url: url('/api'), payload: body, headers: { authorization: `Bearer ${apiKey}` } });
      const changed = await patch({ from_phone: alice.phones[0], subject: '  Warehouse B  ', description: 'Shifts and pick-ups' });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.deepEqual([changed.json().subject, changed.json().description], ['Warehouse B', 'Shifts and pick-ups']);
      const subject = await heard(bob, (body) => body.change === 'subject');
      assert.deepEqual(
        [subject.subject, subject.group, subject.by_phone],
        ['Warehouse B', { id: groupId, subject: 'Warehouse B' }, alice.phones[0]],
      );
      await heard(bob, (body) => body.change === 'description' && body.description === 'Shifts and pick-ups');
      const cleared = await patch({ from_phone: alice.phones[0], description: null });
      assert.equal(cleared.json().description, null);

      const sent = await test.post('/send_message', { from_phone: alice.phones[0], to_group: groupId, message: 'renamed' }, alice.apiKey);
      assert.deepEqual(sent.json().group, { id: groupId, subject: 'Warehouse B' });

      for (const [body, field] of [
        [{ from_phone: alice.phones[0] }, 'subject'],
        [{ from_phone: alice.phones[0], subject: ' ' }, 'subject'],
        [{ from_phone: alice.phones[0], description: 'x'.repeat(2049) }, 'description'],
      ] as const) {
        const response = await patch(body);
        assert.deepEqual([response.statusCode, response.json().error, response.json().meta.field], [400, 'invalid_request', field]);
      }
    });

    it('an admin gets the invite link and revokes it for a new one', async () => {
      const first = await get(`${url('', '/invite_link')}?from_phone=${encodeURIComponent(alice.phones[0]!)}`, alice.apiKey);
      assert.equal(first.statusCode, 200, first.body);
      assert.match(first.json().link, /^https:\/\/chat\.whatsapp\.com\/[A-Za-z0-9_-]{22}$/);
      const again = await get(`${url('/api', '/invite_link')}?from_phone=${encodeURIComponent(alice.phones[0]!)}`, alice.apiKey);
      assert.equal(again.json().code, first.json().code, 'the link stays until revoked');
      const revoked = await test.post(url('', '/invite_link/revoke'), { from_phone: alice.phones[0] }, alice.apiKey);
      assert.equal(revoked.statusCode, 200, revoked.body);
      assert.notEqual(revoked.json().code, first.json().code);
      const member = await get(`${url('', '/invite_link')}?from_phone=${encodeURIComponent(alice.phones[1]!)}`, alice.apiKey);
      assert.deepEqual([member.statusCode, member.json().error], [403, 'not_group_admin']);
    });

    it('removing a number tells its account, which may no longer send there; a number that leaves is gone too', async () => {
      const removed = await test.post(
        url('', '/participants'),
        { from_phone: alice.phones[0], action: 'remove', participants: [bob.phones[0], PRIVATE_PERSON] },
        alice.apiKey,
      );
      assert.deepEqual(removed.json().results, [
        { phone: bob.phones[0], outcome: 'done' },
        { phone: PRIVATE_PERSON, outcome: 'not_member' },
      ]);
      await heard(bob, (body) => body.change === 'removed' && body.number_affected === true);
      const bobSends = await test.post(
        '/send_message',
        { from_phone: bob.phones[0], to_group: groupId, message: 'still here?' },
        bob.apiKey,
      );
      assert.deepEqual(
        [bobSends.statusCode, bobSends.json().error],
        [403, 'not_group_member'],
        'the account knew the group, so it is told the number is no member',
      );
      assert.deepEqual((await get(`/groups?from_phone=${encodeURIComponent(bob.phones[0]!)}`, bob.apiKey)).json().groups, []);

      const left = await test.post(url('/api', '/leave'), { from_phone: alice.phones[1] }, alice.apiKey);
      assert.deepEqual([left.statusCode, left.json()], [200, { group_id: groupId, left: true }]);
      const leftEvent = await heard(alice, (body) => body.change === 'left' && body.phone === alice.phones[0]);
      assert.deepEqual(leftEvent.participants, [{ phone: alice.phones[1], lid: null }]);
      const afterLeaving = await test.post('/send_message', { from_phone: alice.phones[1], to_group: groupId, message: 'x' }, alice.apiKey);
      assert.deepEqual([afterLeaving.statusCode, afterLeaving.json().error], [403, 'not_group_member']);
      const leaveAgain = await test.post(url('', '/leave'), { from_phone: alice.phones[1] }, alice.apiKey);
      assert.deepEqual([leaveAgain.statusCode, leaveAgain.json().error], [403, 'not_group_member']);
    });

    it("refuses bad changes with the field named, and another account's group or number as for any group call", async () => {
      const post = (suffix: string, body: object, apiKey = alice.apiKey) => test.post(url('', suffix), body, apiKey);
      const cases: [Promise<{ statusCode: number; json(): Json }>, number, string, string | undefined][] = [
        [
          post('/participants', { from_phone: alice.phones[0], action: 'kick', participants: [CUSTOMER] }),
          400,
          'invalid_request',
          'action',
        ],
        [post('/participants', { from_phone: alice.phones[0], action: 'add', participants: [] }), 400, 'invalid_request', 'participants'],
        [
          post('/participants', { from_phone: alice.phones[0], action: 'add', participants: ['nope'] }),
          400,
          'invalid_phone_number',
          'participants[0]',
        ],
        [
          post('/participants', { from_phone: globex.phones[0], action: 'add', participants: [CUSTOMER] }, globex.apiKey),
          404,
          'group_not_found',
          'id',
        ],
        [post('/leave', { from_phone: globex.phones[0] }, globex.apiKey), 404, 'group_not_found', 'id'],
        [post('/leave', { from_phone: alice.phones[0] }, globex.apiKey), 403, 'phone_not_owned', 'from_phone'],
      ];
      for (const [pending, status, code, field] of cases) {
        const response = await pending;
        assert.deepEqual([response.statusCode, response.json().error, response.json().meta?.field], [status, code, field]);
      }
    });
  });
}
