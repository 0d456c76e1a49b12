import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findMessageById } from '../../../src/store/repositories/messages.ts';
import { listMessages } from '../../../src/store/repositories/message-pages.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';

const ISO_UTC_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

for (const dialect of dialects) {
  describe(`sending messages (${dialect})`, () => {
    let test: TestGateway;
    let sender: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect);
      sender = await seedAccount(test.gateway);
    });
    after(() => test.close());

    for (const path of ['/send_message', '/api/send_message']) {
      it(`${path} answers 200 with the stored message, phones normalised to E.164`, async () => {
        const from = sender.phones[0]!;
        const spacedFrom = `${from.slice(0, 3)} ${from.slice(3, 7)} (${from.slice(7, 10)}) ${from.slice(10)}`;
        const response = await test.post(
          path,
          { from_phone: spacedFrom, to_phone: '1-415-555-0100', message: 'Hello there' },
          sender.apiKey,
        );
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json();
        assert.deepEqual(Object.keys(body).sort(), [
          'created_at',
          'from_phone',
          'group',
          'message',
          'message_id',
          'reply_to',
          'status',
          'to_phone',
        ]);
        assert.match(body.message_id, /^msg_[0-9a-z]{26}$/);
        assert.match(body.created_at, ISO_UTC_MILLISECONDS);
        assert.equal(body.from_phone, from);
        assert.equal(body.to_phone, '+14155550100');
        assert.equal(body.group, null, 'a direct message names no group');
        assert.equal(body.message, 'Hello there');
        assert.equal(body.status, 'sent');
        assert.match(response.headers['x-request-id'] as string, /^req_/);

        const stored = await findMessageById(test.gateway.store.db, body.message_id);
        assert.ok(stored, 'the message is in the database');
        assert.ok(['sent', 'delivered'].includes(stored.status), stored.status);
        assert.equal(stored.direction, 'outbound');
        assert.equal(stored.createdAt.toISOString(), body.created_at);
        assert.ok(stored.engineMessageId, 'the engine message id is stored');
      });
    }

    it('the sandbox acknowledges each send: the message moves from sent to delivered', async () => {
      const response = await test.post(
        '/send_message',
        { from_phone: sender.phones[0], to_phone: '+14155550100', message: 'receipt please' },
        sender.apiKey,
      );
      assert.equal(response.statusCode, 200);
      let status: string | undefined;
      for (let attempt = 0; attempt < 100 && status !== 'delivered'; attempt++) {
        status = (await findMessageById(test.gateway.store.db, response.json().message_id))?.status;
        if (status !== 'delivered') await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(status, 'delivered');
    });

    it('a 65,536-character message of four-byte characters round-trips byte for byte', async () => {
      const text = `${'😀'.repeat(65_535)}\n`;
      const response = await test.post(
        '/send_message',
        { from_phone: sender.phones[0], to_phone: '+14155550100', message: text },
        sender.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body.slice(0, 300));
      assert.equal(response.json().message, text);
      const stored = await findMessageById(test.gateway.store.db, response.json().message_id);
      assert.ok(Buffer.from(stored!.text, 'utf8').equals(Buffer.from(text, 'utf8')));
    });

    it('one character over the limit is refused with message_too_long and the limit', async () => {
      const response = await test.post(
        '/send_message',
        { from_phone: sender.phones[0], to_phone: '+14155550100', message: '😀'.repeat(65_537) },
        sender.apiKey,
      );
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().error, 'message_too_long');
      assert.equal(response.json().meta.limit, 65536);
    });

    it('mixed scripts, emoji sequences, newlines and tabs survive unchanged', async () => {
      const text = 'Grüße 👨‍👩‍👧‍👦 مرحبا\r\n\tनमस्ते 🇬🇧 "quotes" \\ back\\slash \u0007';
      const response = await test.post(
        '/send_message',
        { from_phone: sender.phones[0], to_phone: '+4915112345678', message: text },
        sender.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body);
      const stored = await findMessageById(test.gateway.store.db, response.json().message_id);
      assert.equal(stored!.text, text);
    });

    it('U+0000 and unpaired surrogates are refused with invalid_request naming the message', async () => {
      for (const message of ['nul\u0000byte', 'lone \ud800 surrogate']) {
        const response = await test.post(
          '/send_message',
          { from_phone: sender.phones[0], to_phone: '+14155550100', message },
          sender.apiKey,
        );
        assert.equal(response.statusCode, 400);
        assert.equal(response.json().error, 'invalid_request');
        assert.equal(response.json().meta.field, 'message');
      }
    });

    it("a send to another account's sandbox number arrives there as an incoming message", async () => {
      const recipient = await seedAccount(test.gateway);
      const response = await test.post(
        '/send_message',
        { from_phone: sender.phones[0], to_phone: recipient.phones[0], message: 'across the sandbox' },
        sender.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body);
      const inbox = await listMessages(test.gateway.store.db, { accountId: recipient.accountId, direction: 'inbound', limit: 10 });
      assert.equal(inbox.length, 1);
      assert.equal(inbox[0]!.text, 'across the sandbox');
      assert.equal(inbox[0]!.fromPhone, sender.phones[0]);
      assert.equal(inbox[0]!.toPhone, recipient.phones[0]);
      assert.equal(inbox[0]!.status, 'received');
    });

    it("/sandbox/receive stores an incoming message on the account's number and answers it", async () => {
      const from = uniquePhone();
      const response = await test.post(
        '/sandbox/receive',
        { from_phone: from, to_phone: sender.phones[0], message: 'ping ✅' },
        sender.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assert.equal(body.status, 'received');
      assert.equal(body.from_phone, from);
      assert.equal(body.from_lid, null, 'a phone-addressed sender has no LID');
      assert.equal(body.to_phone, sender.phones[0]);
      assert.equal(body.message, 'ping ✅');
      assert.match(body.created_at, ISO_UTC_MILLISECONDS);
      const stored = await findMessageById(test.gateway.store.db, body.message_id);
      assert.equal(stored?.direction, 'inbound');
      assert.equal(stored?.accountId, sender.accountId);
    });

    it('/sandbox/receive refuses a number of another account with phone_not_owned', async () => {
      const other = await seedAccount(test.gateway);
      const response = await test.post(
        '/sandbox/receive',
        { from_phone: '+14155550100', to_phone: other.phones[0], message: 'hi' },
        sender.apiKey,
      );
      assert.equal(response.statusCode, 403);
      assert.equal(response.json().error, 'phone_not_owned');
    });

    it('/sandbox/receive applies the send validation rules', async () => {
      const response = await test.post(
        '/sandbox/receive',
        { from_phone: 'not a phone', to_phone: sender.phones[0], message: 'hi' },
        sender.apiKey,
      );
      assert.equal(response.statusCode, 400);
      assert.deepEqual(response.json(), {
        error: 'invalid_phone_number',
        message: response.json().message,
        details: 'from_phone',
        request_id: response.headers['x-request-id'],
        meta: { field: 'from_phone' },
      });
    });

    it('GET /health and /api/health answer {ok: true} without a key', async () => {
      for (const url of ['/health', '/api/health']) {
        const response = await test.inject({ method: 'GET', url });
        assert.equal(response.statusCode, 200, url);
        assert.deepEqual(response.json(), { ok: true }, url);
      }
    });

    it('GET /openapi.json documents both send paths, and /docs renders it', async () => {
      const document = (await test.inject({ method: 'GET', url: '/openapi.json' })).json();
      assert.equal(document.openapi, '3.1.0');
      assert.ok(document.paths['/send_message']?.post);
      assert.ok(document.paths['/api/send_message']?.post);
      assert.ok(document.paths['/sandbox/receive']?.post);
      const docs = await test.inject({ method: 'GET', url: '/docs/' });
      assert.equal(docs.statusCode, 200);
      assert.match(docs.headers['content-type'] as string, /text\/html/);
    });
  });
}
