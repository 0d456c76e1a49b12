import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects } from '../../support/databases.ts';
import { receivedCopyOf, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import type { JsonObject } from '../../support/json.ts';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

// Places, contact cards and view-once files sent from one sandbox number reach another in the
// one shape the API uses for both directions; every mix of content kinds is refused by name.
for (const dialect of dialects) {
  describe(`sending places, cards and view-once files (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      account = await seedAccount(test.gateway, { numbers: 2 });
    });
    after(() => test?.close());

    const send = (body: Record<string, unknown>) =>
      test.post('/api/send_message', { from_phone: account.phones[0], to_phone: account.phones[1], ...body }, account.apiKey);

    /** The second number's stored copy of `sent`, as GET /messages/{id} shows it. */
    async function receivedCopy(sent: { json(): JsonObject }, what: string): Promise<JsonObject> {
      const copy = await receivedCopyOf(test.gateway, account, account, sent.json().message_id as string, what);
      return (
        await test.inject({ method: 'GET', url: `/api/messages/${copy.id}`, headers: { authorization: `Bearer ${account.apiKey}` } })
      ).json();
    }

    it('a location is sent with its comment and arrives in the shape it was sent in', async () => {
      const sent = await send({ message: 'the entrance', location: { latitude: 51.5033, longitude: -0.1196, name: 'London Eye' } });
      assert.equal(sent.statusCode, 200, sent.body);
      const location = { latitude: 51.5033, longitude: -0.1196, name: 'London Eye', address: null, url: null };
      assert.deepEqual([sent.json().location, sent.json().message], [location, 'the entrance']);
      const received = await receivedCopy(sent, 'send 1');
      assert.deepEqual([received.content_kind, received.location, received.message], ['location', location, 'the entrance']);
    });

    it('contact cards are written as escaped vCards 3.0, or taken whole when valid', async () => {
      const sent = await send({
        contacts: [
          { name: 'Ada, Countess; of\nLovelace', phones: ['+44 7700 900123'], emails: ['ada@example.org'] },
          { vcard: 'BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Charles\\, Babbage\r\nTEL:+44 7700 900124\r\nEND:VCARD' },
        ],
      });
      assert.equal(sent.statusCode, 200, sent.body);
      const [built, given] = sent.json().contacts;
      assert.equal(
        built.vcard,
        'BEGIN:VCARD\nVERSION:3.0\nFN:Ada\\, Countess\\; of\\nLovelace\nTEL;type=CELL;waid=447700900123:+447700900123\nEMAIL;type=INTERNET:ada@example.org\nN:;Ada\\, Countess\\; of\\nLovelace;;;\nEND:VCARD',
      );
      assert.deepEqual([given.name, given.phones], ['Charles, Babbage', ['+447700900124']]);
      const received = await receivedCopy(sent, 'send 2');
      assert.deepEqual([received.content_kind, received.contacts], ['contact', sent.json().contacts]);
    });

    it('bad cards are refused with invalid_contact or invalid_phone_number, naming the card', async () => {
      const cases: [unknown, string, string][] = [
        [[{ vcard: 'FN:nobody' }], 'invalid_contact', 'contacts[0].vcard'],
        [[{ vcard: 'BEGIN:VCARD\nVERSION:3.0\nEND:VCARD' }], 'invalid_contact', 'contacts[0].vcard'],
        [
          [{ vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:A\nEND:VCARD\nBEGIN:VCARD\nVERSION:3.0\nFN:B\nEND:VCARD' }],
          'invalid_contact',
          'contacts[0].vcard',
        ],
        [[{ vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:A\nEND:VCARD', name: 'A' }], 'invalid_contact', 'contacts[0].name'],
        [[{ phones: ['+447700900123'] }], 'invalid_contact', 'contacts[0].name'],
        [[{ name: 'A' }], 'invalid_contact', 'contacts[0].phones'],
        [[{ name: 'A', phones: [], emails: ['not an address'] }], 'invalid_contact', 'contacts[0].emails[0]'],
        [[{ name: 'A', phones: ['12'] }], 'invalid_phone_number', 'contacts[0].phones[0]'],
      ];
      for (const [contacts, code, field] of cases) {
        const refused = await send({ contacts });
        assert.deepEqual(
          [refused.statusCode, refused.json().error, refused.json().meta?.field],
          [400, code, field],
          JSON.stringify(contacts),
        );
      }
    });

    it('a view-once image arrives marked view_once; view_once is refused without a file or on one of another kind', async () => {
      const sent = await send({ media: { data: PNG }, view_once: true });
      assert.equal(sent.statusCode, 200, sent.body);
      assert.equal(sent.json().view_once, true);
      const received = await receivedCopy(sent, 'send 3');
      assert.deepEqual([received.content_kind, received.view_once], ['image', true]);
      const onText = await send({ message: 'hi', view_once: true });
      assert.deepEqual(
        [onText.statusCode, onText.json().error, onText.json().meta],
        [400, 'invalid_request', { field: 'view_once', problem: 'conflict' }],
      );
      const onDocument = await send({ media: { data: PNG, kind: 'document' }, view_once: true });
      assert.deepEqual([onDocument.statusCode, onDocument.json().meta], [400, { field: 'view_once', problem: 'not_allowed' }]);
    });

    it('two content kinds in one send are refused, naming the second', async () => {
      const mixes: [Record<string, unknown>, string][] = [
        [{ media: { data: PNG }, location: { latitude: 1, longitude: 2 } }, 'location'],
        [{ location: { latitude: 1, longitude: 2 }, contacts: [{ name: 'A', phones: [] }] }, 'contacts'],
        [{ contacts: [{ name: 'A', phones: [] }], poll: { question: 'Q', options: ['a', 'b'] } }, 'poll'],
        [{ message: 'see', contacts: [{ name: 'A', phones: [] }] }, 'message'],
        [{ media: { data: PNG }, link_preview: true }, 'link_preview'],
      ];
      for (const [body, field] of mixes) {
        const refused = await send(body);
        assert.deepEqual(
          [refused.statusCode, refused.json().error, refused.json().meta],
          [400, 'invalid_request', { field, problem: 'conflict' }],
          JSON.stringify(body),
        );
      }
    });
  });
}
