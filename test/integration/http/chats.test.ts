import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

for (const dialect of dialects) {
  describe(`the chat list and its state (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;
    let other: SeededAccount;
    let ours: string;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway);
      other = await seedAccount(test.gateway);
      ours = account.phones[0]!;
    });
    after(() => test?.close());

    const get = (url: string, apiKey = account.apiKey) =>
      test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });
    const chats = async (extra = '') => (await get(`/api/chats?from_phone=${encodeURIComponent(ours)}${extra}`)).json();
    const receive = (from: string, extra: Record<string, unknown> = {}) =>
      test.post('/api/sandbox/receive', { from_phone: from, to_phone: ours, message: 'in', ...extra }, account.apiKey);
    const send = (to: string, message = 'out') =>
      test.post('/api/send_message', { from_phone: ours, to_phone: to, message }, account.apiKey);
    const act = (chat: string, verb: string, body: Record<string, unknown> = {}, apiKey = account.apiKey) =>
      test.post(`/api/chats/${encodeURIComponent(chat)}/${verb}`, { from_phone: ours, ...body }, apiKey);

    it('each chat once, latest activity first, with its last message and what is unread', async () => {
      const [ada, bob] = [uniquePhone(), uniquePhone()];
      await receive(ada, { message: 'ada 1' });
      await send(bob, 'to bob');
      await receive(ada, { message: 'ada 2' });
      const listed = (await chats()).chats;
      assert.deepEqual(
        listed.slice(0, 2).map((chat: { chat_id: string }) => chat.chat_id),
        [ada, bob],
      );
      const [first, second] = listed;
      assert.deepEqual(
        [first.kind, first.phone, first.unread_count, first.last_message.message, first.last_message.direction],
        ['direct', ada, 2, 'ada 2', 'inbound'],
      );
      assert.deepEqual(
        [second.unread_count, second.last_message.message, second.archived, second.pinned, second.muted],
        [0, 'to bob', false, false, false],
      );
    });

    it('a person met by LID and then by phone is one chat, by phone, with both identifiers', async () => {
      const phone = uniquePhone();
      const lid = '800000000000002@lid';
      await receive(phone, { from_lid: lid, withhold_phone: true, message: 'lid only' });
      assert.equal((await chats()).chats[0].chat_id, lid);
      await send(phone, 'answer by phone');
      await receive(phone, { from_lid: lid, message: 'now both' });
      const mine = (await chats()).chats.filter(
        (chat: { phone: string | null; lid: string | null }) => chat.phone === phone || chat.lid === lid,
      );
      assert.equal(mine.length, 1, JSON.stringify(mine));
      assert.deepEqual(
        [mine[0].chat_id, mine[0].phone, mine[0].lid, mine[0].unread_count, mine[0].last_message.message],
        [phone, phone, lid, 2, 'now both'],
      );
      // The LID still finds the chat.
      const pinned = await act(lid, 'pin');
      assert.equal(pinned.statusCode, 200, pinned.body);
      assert.deepEqual([pinned.json().chat_id, pinned.json().pinned], [phone, true]);
    });

    it('archive, pin, mute and mark unread change the chat, and their undo changes it back', async () => {
      const phone = uniquePhone();
      await receive(phone);
      const archived = await act(phone, 'archive');
      assert.equal(archived.statusCode, 200, archived.body);
      assert.equal(archived.json().archived, true);
      assert.equal((await act(phone, 'unarchive')).json().archived, false);
      const until = new Date(Date.now() + 3_600_000).toISOString();
      const muted = (await act(phone, 'mute', { until })).json();
      assert.deepEqual([muted.muted, muted.muted_until], [true, until]);
      assert.equal((await act(phone, 'mute')).json().muted_until, '9999-12-31T23:59:59.999Z');
      assert.deepEqual([(await act(phone, 'unmute')).json().muted, (await act(phone, 'unpin')).json().pinned], [false, false]);
      assert.equal((await act(phone, 'mark_unread')).json().marked_unread, true);
      const read = (await act(phone, 'mark_read')).json();
      assert.deepEqual([read.marked_unread, read.unread_count], [false, 0]);
    });

    it('pages by last activity follow next_cursor, each chat once', async () => {
      for (let index = 0; index < 3; index++) await send(uniquePhone());
      const all = (await chats('&limit=100')).chats.map((chat: { chat_id: string }) => chat.chat_id);
      const seen: string[] = [];
      let cursor = '';
      for (let pages = 0; pages < 50; pages++) {
        const page = await chats(`&limit=2${cursor}`);
        seen.push(...page.chats.map((chat: { chat_id: string }) => chat.chat_id));
        if (page.next_cursor === null) break;
        cursor = `&cursor=${encodeURIComponent(page.next_cursor)}`;
      }
      assert.deepEqual(seen, all);
    });

    it("refuses an unknown chat (404), a past mute (400) and another account's number (403)", async () => {
      const unknown = await act(uniquePhone(), 'archive');
      assert.deepEqual([unknown.statusCode, unknown.json().error], [404, 'chat_not_found']);
      const phone = uniquePhone();
      await receive(phone);
      const past = await act(phone, 'mute', { until: '2020-01-01T00:00:00Z' });
      assert.deepEqual([past.statusCode, past.json().meta.field], [400, 'until']);
      const foreign = await act(phone, 'archive', {}, other.apiKey);
      assert.deepEqual([foreign.statusCode, foreign.json().error], [403, 'phone_not_owned']);
      const foreignList = await get(`/api/chats?from_phone=${encodeURIComponent(ours)}`, other.apiKey);
      assert.equal(foreignList.statusCode, 403);
    });
  });
}
