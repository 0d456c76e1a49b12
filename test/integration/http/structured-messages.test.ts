import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

for (const dialect of dialects) {
  describe(`shared places and contact cards arrive whole (${dialect})`, () => {
    let test: TestGateway;
    let account: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:9' });
      account = await seedAccount(test.gateway);
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['message'],
      });
    });

    after(() => test?.close());

    const receive = (extra: Record<string, unknown>) =>
      test.post('/api/sandbox/receive', { from_phone: '+14155550123', to_phone: account.phones[0], ...extra }, account.apiKey);

    async function lastEvent(): Promise<Record<string, unknown> & { data: Record<string, unknown> }> {
      const row = await test.gateway.store.db
        .selectFrom('webhook_events')
        .select('payload')
        .where('account_id', '=', account.accountId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      return JSON.parse(row.payload);
    }

    it('a location is stored, answered and sent to webhooks as a structured object', async () => {
      const response = await receive({ message: 'meet here', location: { latitude: 51.5033, longitude: -0.1196, name: 'London Eye' } });
      assert.equal(response.statusCode, 200, response.body);
      const location = { latitude: 51.5033, longitude: -0.1196, name: 'London Eye', address: null, url: null };
      assert.deepEqual(response.json().location, location);
      const stored = (await test.gateway.history.page(accountScope(account.accountId), { limit: 1 })).messages[0]!;
      assert.deepEqual([stored.contentKind, stored.text, stored.structured], ['location', 'meet here', { location }]);
      const event = await lastEvent();
      assert.equal(event.content_kind, 'location');
      assert.deepEqual(event.location, location);
      assert.deepEqual(event.data.location, location);
    });

    it('contact cards carry their names, E.164 phones and a vCard', async () => {
      const response = await receive({ contacts: [{ name: 'Ada Lovelace', phones: ['+44 7700 900123', '+1 415 555 0100'] }] });
      assert.equal(response.statusCode, 200, response.body);
      const [card] = response.json().contacts;
      assert.equal(response.json().message, '');
      assert.deepEqual([card.name, card.phones], ['Ada Lovelace', ['+447700900123', '+14155550100']]);
      assert.match(card.vcard, /^BEGIN:VCARD\nVERSION:3\.0\nFN:Ada Lovelace\nTEL;type=CELL;waid=447700900123:\+447700900123\n/);
      const event = await lastEvent();
      assert.deepEqual(event.contacts, response.json().contacts);
    });

    it('bad places and cards get the documented 400s', async () => {
      const offGlobe = await receive({ location: { latitude: 91, longitude: 0 } });
      assert.deepEqual([offGlobe.statusCode, offGlobe.json().error, offGlobe.json().meta.field], [400, 'invalid_request', 'location']);
      const wordy = await receive({ location: { latitude: 'north', longitude: 0 } });
      assert.deepEqual(wordy.json().meta, { field: 'location.latitude', problem: 'not_a_number' });
      const badPhone = await receive({ contacts: [{ name: 'X', phones: ['12'] }] });
      assert.deepEqual([badPhone.json().error, badPhone.json().meta.field], ['invalid_phone_number', 'contacts[0].phones[0]']);
      const none = await receive({ contacts: [] });
      assert.deepEqual(none.json().meta.field, 'contacts');
      const both = await receive({ location: { latitude: 1, longitude: 1 }, contacts: [{ name: 'X', phones: [] }] });
      assert.equal(both.json().error, 'invalid_request');
    });
  });
}
