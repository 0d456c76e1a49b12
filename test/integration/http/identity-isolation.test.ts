import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import {
  receivedMessage,
  seedAccount,
  startTestGateway,
  uniquePhone,
  type SeededAccount,
  type TestGateway,
} from '../../support/gateway.ts';

// Issue 38 item 4: a simulated phone's LID is a claim of the account that simulates it. Bob's
// account makes a sandbox group with Alice's number in it and has a simulated member write there
// under Alice's customer's LID, or under her customer's phone with another LID. Each member's map
// is its number's own, and only the number the simulating account addressed may learn from the
// claim: Alice's map, and so what her messages resolve to, stays as her own traffic taught it.
for (const dialect of dialects) {
  describe(`one tenant cannot rewrite another's LID map through a sandbox group (${dialect})`, () => {
    let test: TestGateway;
    let alice: SeededAccount;
    let bob: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:9' });
      alice = await seedAccount(test.gateway);
      bob = await seedAccount(test.gateway);
      await test.gateway.webhooks.createWebhook(accountScope(alice.accountId), {
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['contact.identity'],
      });
    });

    after(() => test?.close());

    let lids = 0;
    const newLid = () => `${Date.now()}${String(++lids).padStart(3, '0')}@lid`;

    async function aliceMap(): Promise<{ lid: string | null; phone: string | null }[]> {
      return test.gateway.store.db
        .selectFrom('contacts')
        .innerJoin('whatsapp_numbers', 'whatsapp_numbers.id', 'contacts.number_id')
        .select(['contacts.lid', 'contacts.phone'])
        .where('whatsapp_numbers.phone', '=', alice.phones[0]!)
        .where('contacts.lid', 'is not', null)
        .orderBy('contacts.lid')
        .execute();
    }

    it("Bob's simulated group member cannot change what Alice's messages from her customer's LID resolve to", async () => {
      const customer = uniquePhone();
      const attacker = uniquePhone();
      const customerLid = newLid();
      const attackerLid = newLid();
      // Alice's number learns her customer's LID from her own (simulated) traffic.
      const taught = await test.post(
        '/sandbox/receive',
        { from_phone: customer, to_phone: alice.phones[0], from_lid: customerLid, message: 'hello alice' },
        alice.apiKey,
      );
      assert.equal(taught.statusCode, 200, taught.body);
      const before = await aliceMap();
      assert.deepEqual(before, [{ lid: customerLid, phone: customer }]);

      const created = await test.post(
        '/groups',
        { from_phone: bob.phones[0], subject: 'Lure', participants: [alice.phones[0], customer, attacker] },
        bob.apiKey,
      );
      assert.equal(created.statusCode, 201, created.body);
      const groupId = created.json().id as string;
      // The customer's LID claimed for the attacker's phone, and the customer's phone claimed for the attacker's LID.
      for (const [fromPhone, fromLid, message, lidAliceKnows] of [
        [attacker, customerLid, 'claim one', null],
        [customer, attackerLid, 'claim two', customerLid],
      ] as const) {
        const sent = await test.post(
          '/sandbox/receive',
          { from_phone: fromPhone, from_lid: fromLid, to_phone: bob.phones[0], group_id: groupId, message },
          bob.apiKey,
        );
        assert.equal(sent.statusCode, 200, sent.body);
        // Bob's own number took the claim, as the simulating account asked.
        assert.deepEqual([sent.json().from_phone, sent.json().from_lid], [fromPhone, fromLid]);
        // Alice's number got its copy of the group message from the phone the network knows, with
        // the LID her own map knows for it, if any.
        const copy = await receivedMessage(test.gateway, alice.accountId, (m) => m.text === message, `alice's copy of "${message}"`);
        assert.deepEqual([copy.fromPhone, copy.fromLid], [fromPhone, lidAliceKnows]);
      }

      assert.deepEqual(await aliceMap(), before, "Alice's LID map is as her own traffic taught it");
      const later = await test.post(
        '/sandbox/receive',
        { from_phone: customer, to_phone: alice.phones[0], from_lid: customerLid, withhold_phone: true, message: 'by lid only' },
        alice.apiKey,
      );
      assert.equal(later.statusCode, 200, later.body);
      assert.deepEqual([later.json().from_phone, later.json().from_lid], [customer, customerLid]);
      const events = await test.gateway.store.db
        .selectFrom('webhook_events')
        .select('payload')
        .where('account_id', '=', alice.accountId)
        .where('event_type', '=', 'contact.identity')
        .execute();
      const told = events.map((row) => JSON.parse(row.payload) as Record<string, unknown>);
      assert.deepEqual(
        told.map((event) => [event.contact_phone, event.contact_lid]),
        [[customer, customerLid]],
        'Alice was told only of the identity her own traffic taught',
      );
    });
  });
}
