import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { waitForValue } from '../../support/waiting.ts';

/**
 * What a client moving from WAHA or Evolution API sends, taken as what it means (issue 39,
 * item 10): WhatsApp's chat ids wherever a phone is taken, and `offset` on the paged lists.
 */

/** A phone as WhatsApp's chat id writes it: its digits and a suffix. */
const chatId = (phone: string, suffix: '@c.us' | '@s.whatsapp.net') => `${phone.slice(1)}${suffix}`;

for (const dialect of dialects) {
  describe(`what clients moving from WAHA or Evolution API send (${dialect})`, { concurrency: true }, () => {
    let test: TestGateway;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_SEND_QUEUE_CHECK_MS: '60000' });
    });
    after(() => test?.close());

    const get = (url: string, seeded: SeededAccount) =>
      test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${seeded.apiKey}` } });

    it('@c.us and @s.whatsapp.net chat ids are the phone in bodies, paths and queries; a group id in to_phone is the group', async () => {
      const seeded = await seedAccount(test.gateway, { numbers: 2 });
      const [from, other] = seeded.phones as [string, string];
      const sent = await test.post(
        '/send_message',
        { from_phone: chatId(from, '@s.whatsapp.net'), to_phone: chatId(other, '@c.us'), message: 'from a WAHA client' },
        seeded.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      assert.deepEqual([sent.json().from_phone, sent.json().to_phone], [from, other]);
      const id = sent.json().message_id as string;
      const ids = async (url: string) => {
        const response = await get(url, seeded);
        assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
        return (response.json().messages as { message_id: string }[]).map((message) => message.message_id);
      };
      assert.ok((await ids(`/messages?peer=${encodeURIComponent(chatId(other, '@c.us'))}`)).includes(id), 'peer');
      assert.ok((await ids(`/api/messages?with=${encodeURIComponent(chatId(other, '@s.whatsapp.net'))}`)).includes(id), 'with');
      assert.ok((await ids(`/messages?phone=${encodeURIComponent(chatId(from, '@c.us'))}`)).includes(id), 'phone');
      const queue = await get(`/numbers/${encodeURIComponent(chatId(from, '@c.us'))}/queue`, seeded);
      assert.deepEqual([queue.statusCode, queue.json().phone], [200, from], queue.body);
      const contact = await waitForValue(async () => {
        const response = await get(`/contacts/${encodeURIComponent(chatId(other, '@c.us'))}?from_phone=${chatId(from, '@c.us')}`, seeded);
        return response.statusCode === 200 ? response : undefined;
      }, 'the contact to be known by its chat id');
      assert.equal(contact.json().phone, other);

      const group = await test.post(
        '/groups',
        { from_phone: from, subject: 'Moved over', participants: [chatId(other, '@c.us')] },
        seeded.apiKey,
      );
      assert.equal(group.statusCode, 201, group.body);
      const toGroup = await test.post(
        '/send_message',
        { from_phone: from, to_phone: group.json().id, message: 'to the group' },
        seeded.apiKey,
      );
      assert.equal(toGroup.statusCode, 200, toGroup.body);
      assert.deepEqual([toGroup.json().to_phone, toGroup.json().group?.id], [null, group.json().id]);
    });

    it('a chat id that is not a phone is told what it is, not to include the country code', async () => {
      const seeded = await seedAccount(test.gateway);
      const typing = (toPhone: string) =>
        test.post('/typing', { from_phone: seeded.phones[0], to_phone: toPhone, state: 'composing' }, seeded.apiKey);
      const group = await typing('120363000000000000@g.us');
      assert.deepEqual([group.statusCode, group.json().error, group.json().details], [400, 'invalid_phone_number', 'to_phone'], group.body);
      assert.match(group.json().message, /is a group id/);
      const badDigits = await test.post(
        '/send_message',
        { from_phone: seeded.phones[0], to_phone: '999123@c.us', message: 'hi' },
        seeded.apiKey,
      );
      assert.equal(badDigits.statusCode, 400, badDigits.body);
      assert.match(badDigits.json().message, /the digits before @c\.us must be the number with its country code/);
      assert.doesNotMatch(badDigits.json().message, /include the country code/);
    });

    it('offset skips that many items on every paged list, from the first or from the cursor, and is bounded', async () => {
      const seeded = await seedAccount(test.gateway, { numbers: 2 });
      const [from, other] = seeded.phones as [string, string];
      const recipients = [other, '+14155550101', '+14155550102'];
      for (const to of recipients)
        assert.equal((await test.post('/send_message', { from_phone: from, to_phone: to, message: to }, seeded.apiKey)).statusCode, 200);
      const page = async (url: string, key: string) => {
        const response = await get(url, seeded);
        assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
        return response.json()[key] as Record<string, unknown>[];
      };
      const phone = encodeURIComponent(from);
      const lists: [string, string, string][] = [
        [`/messages?phone=${phone}`, 'messages', 'message_id'],
        [`/chats?from_phone=${phone}`, 'chats', 'chat_id'],
        [`/contacts?from_phone=${phone}`, 'contacts', 'phone'],
      ];
      for (const [url, key, field] of lists) {
        const all = (await page(`${url}&limit=3`, key)).map((item) => item[field]);
        assert.equal(new Set(all.filter((value) => typeof value === 'string')).size, 3, `${url}: ${JSON.stringify(all)}`);
        assert.deepEqual(
          (await page(`${url}&limit=1&offset=1`, key)).map((item) => item[field]),
          [all[1]],
          url,
        );
        assert.deepEqual(
          (await page(`/api${url}&limit=2&offset=2`, key)).map((item) => item[field]),
          [all[2]],
          url,
        );
        const first = await get(`${url}&limit=1`, seeded);
        const afterCursor = await page(`${url}&limit=1&offset=1&cursor=${encodeURIComponent(first.json().next_cursor)}`, key);
        assert.deepEqual(
          afterCursor.map((item) => item[field]),
          [all[2]],
          `${url}: offset counts from the cursor`,
        );
      }
      // A peer's messages are two lists merged (sent and received): the offset is the merged list's.
      await test.post('/send_message', { from_phone: other, to_phone: from, message: 'back' }, seeded.apiKey);
      const conversation = (await page(`/messages?phone=${phone}&peer=${encodeURIComponent(other)}&limit=10`, 'messages')).map(
        (m) => m.message_id,
      );
      assert.ok(conversation.length >= 2, JSON.stringify(conversation));
      assert.deepEqual(
        (await page(`/messages?phone=${phone}&peer=${encodeURIComponent(other)}&limit=1&offset=1`, 'messages')).map((m) => m.message_id),
        [conversation[1]],
      );
      const tooDeep = await get(`/messages?offset=10001`, seeded);
      assert.deepEqual(
        [tooDeep.statusCode, tooDeep.json().error, tooDeep.json().details],
        [400, 'invalid_request', 'offset'],
        tooDeep.body,
      );
    });

    it("offset on a number's queue skips that many waiting messages, and next_scheduled_for stays the queue's first", async () => {
      const seeded = await seedAccount(test.gateway);
      const phone = encodeURIComponent(seeded.phones[0]!);
      const later = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();
      for (const hours of [1, 2, 3]) {
        const queued = await test.post(
          '/send_message',
          { from_phone: seeded.phones[0], to_phone: '+14155550100', message: 'later', send_at: later(hours) },
          seeded.apiKey,
        );
        assert.equal(queued.statusCode, 202, queued.body);
      }
      const all = (await get(`/numbers/${phone}/queue`, seeded)).json();
      const skipped = (await get(`/numbers/${phone}/queue?limit=1&offset=1`, seeded)).json();
      assert.deepEqual(
        [skipped.messages.map((m: { message_id: string }) => m.message_id), skipped.next_scheduled_for, skipped.total],
        [[all.messages[1].message_id], all.next_scheduled_for, 3],
      );
    });
  });
}
