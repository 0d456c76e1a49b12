import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

for (const dialect of dialects) {
  describe(`one identity per person: a LID and its phone (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:9' });
      account = await seedAccount(test.gateway);
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['message', 'contact.identity'],
      });
    });

    after(() => test?.close());

    let lids = 0;
    const newLid = () => `${Date.now()}${String(++lids).padStart(3, '0')}@lid`;
    const receive = (from: string, extra: Record<string, unknown>) =>
      test.post('/api/sandbox/receive', { from_phone: from, to_phone: account.phones[0], message: 'hi', ...extra }, account.apiKey);
    const get = (url: string) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${account.apiKey}` } });

    async function identityEvents(lid: string): Promise<Record<string, unknown>[]> {
      const rows = await test.gateway.store.db
        .selectFrom('webhook_events')
        .select('payload')
        .where('account_id', '=', account.accountId)
        .where('event_type', '=', 'contact.identity')
        .execute();
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

    it("a send to a LID goes to the phone the map knows, in the person's one conversation; an unknown LID is 404", async () => {
      const phone = uniquePhone();
      const lid = newLid();
      await receive(phone, { from_lid: lid });
      const sent = await test.post(
        '/api/send_message',
        { from_phone: account.phones[0], to_phone: lid, message: 'by lid' },
        account.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      assert.equal(sent.json().to_phone, phone);
      const unknown = await test.post(
        '/api/send_message',
        { from_phone: account.phones[0], to_phone: newLid(), message: 'to nobody' },
        account.apiKey,
      );
      assert.deepEqual([unknown.statusCode, unknown.json().error, unknown.json().meta.field], [404, 'contact_not_found', 'to_phone']);
    });

    it('a sandbox receive refuses a malformed LID, and withhold_phone without one', async () => {
      const bad = await receive(uniquePhone(), { from_lid: '12345' });
      assert.deepEqual([bad.statusCode, bad.json().error, bad.json().meta.field], [400, 'invalid_request', 'from_lid']);
      const alone = await receive(uniquePhone(), { withhold_phone: true });
      assert.deepEqual([alone.statusCode, alone.json().meta.field], [400, 'withhold_phone']);
    });
  });
}

for (const dialect of dialects) {
  describe(`contacts: each person once, found by phone or by LID (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway);
      other = await seedAccount(test.gateway);
    });
    after(() => test?.close());

    const get = (url: string, apiKey = account.apiKey) =>
      test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });
    const contactsOf = (phone: string, extra = '') => get(`/api/contacts?from_phone=${encodeURIComponent(phone)}${extra}`);

    it('a person met by LID and later by phone is one contact with both identifiers, found either way', async () => {
      const phone = uniquePhone();
      const lid = '700000000000001@lid';
      const receive = (extra: Record<string, unknown>) =>
        test.post('/api/sandbox/receive', { from_phone: phone, to_phone: account.phones[0], message: 'hello', ...extra }, account.apiKey);
      await receive({ from_lid: lid, withhold_phone: true });
      const sent = await test.post(
        '/api/send_message',
        { from_phone: account.phones[0], to_phone: phone, message: 'who is this?' },
        account.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      // Two people so far: the LID that wrote, and the phone we wrote to.
      assert.equal((await contactsOf(account.phones[0]!)).json().contacts.length, 2);
      await receive({ from_lid: lid });

      const listed = (await contactsOf(account.phones[0]!)).json();
      assert.equal(listed.contacts.length, 1, JSON.stringify(listed));
      assert.deepEqual([listed.contacts[0].phone, listed.contacts[0].lid, listed.contacts[0].identity_source], [phone, lid, 'sandbox']);
      const byLid = await get(`/api/contacts/${encodeURIComponent(lid)}?from_phone=${encodeURIComponent(account.phones[0]!)}`);
      const byPhone = await get(`/contacts/${encodeURIComponent(phone)}?from_phone=${encodeURIComponent(account.phones[0]!)}`);
      assert.equal(byLid.statusCode, 200, byLid.body);
      assert.deepEqual(byLid.json(), byPhone.json());
      assert.deepEqual([byLid.json().phone, byLid.json().lid], [phone, lid]);
    });

    it('pages follow next_cursor to the end, each person once', async () => {
      for (let index = 0; index < 3; index++)
        await test.post('/api/send_message', { from_phone: account.phones[0], to_phone: uniquePhone(), message: 'hi' }, account.apiKey);
      const seen: string[] = [];
      let cursor = '';
      for (let pages = 0; pages < 10; pages++) {
        const page = (await contactsOf(account.phones[0]!, `&limit=2${cursor}`)).json();
        seen.push(...page.contacts.map((contact: { phone: string }) => contact.phone));
        if (page.next_cursor === null) break;
        cursor = `&cursor=${page.next_cursor}`;
      }
      assert.equal(seen.length, 4);
      assert.equal(new Set(seen).size, 4);
    });

    it("an unknown person is 404 contact_not_found, a bad one 400, and another account's number 403", async () => {
      const unknown = await get(`/api/contacts/${encodeURIComponent(uniquePhone())}?from_phone=${encodeURIComponent(account.phones[0]!)}`);
      assert.deepEqual([unknown.statusCode, unknown.json().error], [404, 'contact_not_found']);
      const bad = await get(`/api/contacts/nobody?from_phone=${encodeURIComponent(account.phones[0]!)}`);
      assert.deepEqual([bad.statusCode, bad.json().error], [400, 'invalid_request']);
      const foreign = await get(`/api/contacts?from_phone=${encodeURIComponent(account.phones[0]!)}`, other.apiKey);
      assert.deepEqual([foreign.statusCode, foreign.json().error], [403, 'phone_not_owned']);
      // The other account's own number knows none of this account's people.
      const theirs = await get(
        `/api/contacts/${encodeURIComponent('700000000000001@lid')}?from_phone=${encodeURIComponent(other.phones[0]!)}`,
        other.apiKey,
      );
      assert.deepEqual([theirs.statusCode, theirs.json().error], [404, 'contact_not_found']);
    });
  });
}

for (const dialect of dialects) {
  describe(`GET /messages?with= joins on the person (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway);
    });
    after(() => test?.close());

    const conversation = async (person: string) => {
      const response = await test.inject({
        method: 'GET',
        url: `/api/messages?with=${encodeURIComponent(person)}`,
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.equal(response.statusCode, 200, response.body);
      return response.json().messages.map((message: { message: string }) => message.message);
    };

    it('one conversation whether the person wrote by LID or by phone, asked for either way', async () => {
      const phone = uniquePhone();
      const lid = '900000000000003@lid';
      const receive = (message: string, extra: Record<string, unknown>) =>
        test.post('/api/sandbox/receive', { from_phone: phone, to_phone: account.phones[0], message, ...extra }, account.apiKey);
      await receive('first, by LID alone', { from_lid: lid, withhold_phone: true });
      // Before the phone is known, the LID finds what came by it.
      assert.deepEqual(await conversation(lid), ['first, by LID alone']);
      await test.post('/api/send_message', { from_phone: account.phones[0], to_phone: phone, message: 'our answer' }, account.apiKey);
      await receive('then with both', { from_lid: lid });
      const expected = ['then with both', 'our answer', 'first, by LID alone'];
      assert.deepEqual(await conversation(lid), expected);
      assert.deepEqual(await conversation(phone), expected);
    });

    it('refuses with beside peer, and a with that is neither phone nor LID', async () => {
      const both = await test.inject({
        method: 'GET',
        url: '/api/messages?with=%2B14155550100&peer=%2B14155550100',
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.deepEqual([both.statusCode, both.json().meta.field], [400, 'with']);
      const neither = await test.inject({
        method: 'GET',
        url: '/api/messages?with=someone',
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      assert.deepEqual([neither.statusCode, neither.json().meta.field], [400, 'with']);
    });
  });
}
