import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../src/domain/tenant-scope.ts';
import { dialects } from '../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../support/gateway.ts';

for (const dialect of dialects) {
  describe(`one identity per person: a LID and its phone (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:9' });
      account = await seedAccount(test.gateway);
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), { url: 'http://127.0.0.1:9/hook', eventTypes: ['message', 'contact.identity'] });
    });

    after(() => test?.close());

    let lids = 0;
    const newLid = () => `${Date.now()}${String(++lids).padStart(3, '0')}@lid`;
    const receive = (from: string, extra: Record<string, unknown>) => test.post('/api/sandbox/receive', { from_phone: from, to_phone: account.phones[0], message: 'hi', ...extra }, account.apiKey);
    const get = (url: string) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${account.apiKey}` } });

    async function identityEvents(lid: string): Promise<Record<string, unknown>[]> {
      const rows = await test.gateway.store.db.selectFrom('webhook_events').select('payload').where('account_id', '=', account.accountId).where('event_type', '=', 'contact.identity').execute();
      return rows.map((row) => JSON.parse(row.payload) as Record<string, unknown>).filter((payload) => payload.contact_lid === lid);
    }

    it('a sender known only by LID gets its phone on every message once a message reveals it, and contact.identity says so once', async () => {
      const phone = uniquePhone();
      const lid = newLid();
      const hidden = await receive(phone, { from_lid: lid, withhold_phone: true });
      assert.equal(hidden.statusCode, 200, hidden.body);
      assert.deepEqual([hidden.json().from_phone, hidden.json().from_lid], [null, lid]);
      assert.equal((await identityEvents(lid)).length, 0);

      const revealed = await receive(phone, { from_lid: lid });
      assert.deepEqual([revealed.json().from_phone, revealed.json().from_lid], [phone, lid]);
      const [event] = await identityEvents(lid);
      assert.deepEqual([event?.phone, event?.contact_phone, event?.contact_lid, event?.source], [account.phones[0], phone, lid, 'sandbox']);

      // The message stored before the phone was known shows it when read.
      const earlier = await get(`/api/messages/${hidden.json().message_id}`);
      assert.deepEqual([earlier.json().from_phone, earlier.json().from_lid], [phone, lid]);

      // Later LID-only messages are completed from the map, and tell nothing new.
      const later = await receive(phone, { from_lid: lid, withhold_phone: true });
      assert.deepEqual([later.json().from_phone, later.json().from_lid], [phone, lid]);
      await receive(phone, { from_lid: lid });
      assert.equal((await identityEvents(lid)).length, 1);
    });

    it('a message by phone carries the LID the map knows', async () => {
      const phone = uniquePhone();
      const lid = newLid();
      await receive(phone, { from_lid: lid });
      const plain = await receive(phone, {});
      assert.deepEqual([plain.json().from_phone, plain.json().from_lid], [phone, lid]);
    });

    it('a sandbox receive refuses a malformed LID, and withhold_phone without one', async () => {
      const bad = await receive(uniquePhone(), { from_lid: '12345' });
      assert.deepEqual([bad.statusCode, bad.json().error, bad.json().meta.field], [400, 'invalid_request', 'from_lid']);
      const alone = await receive(uniquePhone(), { withhold_phone: true });
      assert.deepEqual([alone.statusCode, alone.json().meta.field], [400, 'withhold_phone']);
    });
  });
}
