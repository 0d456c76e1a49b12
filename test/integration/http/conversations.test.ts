import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import type { Json, JsonObject } from '../../support/json.ts';

const EVERY_EVENT = ['message', 'message.status', 'message.reaction', 'message.edited', 'message.revoked'] as const;

// Replies, reactions, edits, revocations and read marks between two sandbox numbers of two
// accounts: each side's webhooks hear what the other did, and each side reads it back.
for (const dialect of dialects) {
  describe(`conversations between two numbers (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let alice: SeededAccount;
    let bob: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      receiver = await WebhookReceiver.start();
      alice = await seedAccount(test.gateway, { numbers: 2 });
      bob = await seedAccount(test.gateway);
      for (const account of [alice, bob]) {
        await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
          url: receiver.url(`/${account.accountId}`),
          eventTypes: [...EVERY_EVENT],
        });
      }
      test.gateway.deliveryWorker.start();
    });

    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    const get = (url: string, apiKey: string) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });
    const postEmpty = (url: string, apiKey: string) => test.inject({ method: 'POST', url, headers: { authorization: `Bearer ${apiKey}` } });

    /** The next event of a type that reached an account's webhook and satisfies `match`. */
    async function heard(
      account: SeededAccount,
      event: string,
      match: (body: Record<string, unknown>) => boolean = () => true,
    ): Promise<JsonObject> {
      const matches = (request: ReceivedRequest) => {
        if (!request.path.startsWith(`/${account.accountId}`)) return false;
        const body = JSON.parse(request.body) as Record<string, unknown>;
        return body.event === event && match(body);
      };
      const [request] = await receiver.waitForRequests(1, matches);
      return JSON.parse(request!.body) as JsonObject;
    }

    /** Alice sends Bob a text; answers both sides' ids for it. */
    async function aliceSends(text: string, extra: object = {}): Promise<{ sent: JsonObject; received: JsonObject }> {
      const response = await test.post(
        '/send_message',
        { from_phone: alice.phones[0], to_phone: bob.phones[0], message: text, ...extra },
        alice.apiKey,
      );
      assert.equal(response.statusCode, 200, response.body);
      const received = await heard(bob, 'message', (body) => body.message === text);
      return { sent: response.json(), received };
    }

    it('a reply quotes the message on both sides: the sender names it by its id, the receiver hears its own id for it', async () => {
      const { sent, received } = await aliceSends('Is the order ready?');
      assert.equal(sent.reply_to, null, 'a plain send is no reply');
      assert.equal(received.reply_to, null);

      const reply = await test.post(
        '/api/send_message',
        { from_phone: bob.phones[0], to_phone: alice.phones[0], message: 'Yes, since noon.', reply_to: received.message_id },
        bob.apiKey,
      );
      assert.equal(reply.statusCode, 200, reply.body);
      assert.equal(reply.json().reply_to.message_id, received.message_id);
      const quoted = await heard(alice, 'message', (body) => body.message === 'Yes, since noon.');
      assert.equal(quoted.reply_to.message_id, sent.message_id, 'Alice hears the reply as quoting her own message');
      assert.match(quoted.reply_to.whatsapp_id, /^sbx_/);

      const stored = await get(`/messages/${quoted.message_id}`, alice.apiKey);
      assert.deepEqual(stored.json().reply_to, quoted.reply_to);
      const listed = await get(`/messages?peer=${encodeURIComponent(bob.phones[0]!)}&direction=inbound`, alice.apiKey);
      assert.deepEqual(listed.json().messages[0].reply_to, quoted.reply_to);
    });

    it('a simulated customer can answer one of our messages through /sandbox/receive', async () => {
      const sent = (
        await test.post(
          '/send_message',
          { from_phone: alice.phones[0], to_phone: '+14155550142', message: 'Shall we ship it?' },
          alice.apiKey,
        )
      ).json();
      const answer = await test.post(
        '/sandbox/receive',
        { from_phone: '+14155550142', to_phone: alice.phones[0], message: 'Yes please', reply_to: sent.message_id },
        alice.apiKey,
      );
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(answer.json().reply_to.message_id, sent.message_id);
      const event = await heard(alice, 'message', (body) => body.message === 'Yes please');
      assert.deepEqual(event.reply_to, answer.json().reply_to);
      const elsewhere = await test.post(
        '/sandbox/receive',
        { from_phone: '+14155550143', to_phone: alice.phones[0], message: 'Me too', reply_to: sent.message_id },
        alice.apiKey,
      );
      assert.deepEqual([elsewhere.statusCode, elsewhere.json().error], [400, 'invalid_reply_to'], 'a phone can only quote its own chat');
    });

    it("refuses a reply to an unknown id, another account's message, another chat's message, and a malformed id", async () => {
      const { sent } = await aliceSends('First');
      const toCarol = await test.post(
        '/send_message',
        { from_phone: alice.phones[0], to_phone: '+14155550199', message: 'Hi Carol' },
        alice.apiKey,
      );
      const fromOtherNumber = await test.post(
        '/send_message',
        { from_phone: alice.phones[1], to_phone: bob.phones[0], message: 'From the other line' },
        alice.apiKey,
      );
      const bobsOwn = (
        await test.post('/send_message', { from_phone: bob.phones[0], to_phone: alice.phones[0], message: 'Bob here' }, bob.apiKey)
      ).json();
      const cases: [string, string][] = [
        ['msg_00000000000000000000000000', 'unknown'],
        [bobsOwn.message_id, "another account's"],
        [toCarol.json().message_id, 'another chat of the number'],
        [fromOtherNumber.json().message_id, 'the same peer on another of our numbers'],
        ['not-an-id', 'malformed'],
      ];
      for (const [replyTo, what] of cases) {
        const response = await test.post(
          '/send_message',
          { from_phone: alice.phones[0], to_phone: bob.phones[0], message: 'Re', reply_to: replyTo },
          alice.apiKey,
        );
        assert.deepEqual(
          [response.statusCode, response.json().error, response.json().meta?.field],
          [400, 'invalid_reply_to', 'reply_to'],
          what,
        );
      }
      const ok = await test.post(
        '/send_message',
        { from_phone: alice.phones[0], to_phone: bob.phones[0], message: 'Re', reply_to: sent.message_id },
        alice.apiKey,
      );
      assert.equal(ok.statusCode, 200, 'quoting one of our own sent messages of the chat works');
    });

    it('a reaction reaches the other side as message.reaction naming its own message, replaces the last, and is removed by an empty emoji', async () => {
      const { sent, received } = await aliceSends('Your parcel left the depot');
      const reacted = await test.post(
        '/send_reaction',
        { from_phone: bob.phones[0], message_id: received.message_id, emoji: '👍🏽' },
        bob.apiKey,
      );
      assert.equal(reacted.statusCode, 200, reacted.body);
      assert.deepEqual(
        { ...(reacted.json() as object), reacted_at: undefined },
        { message_id: received.message_id, from_phone: bob.phones[0], emoji: '👍🏽', removed: false, reacted_at: undefined },
      );
      const event = await heard(alice, 'message.reaction', (body) => body.message_id === sent.message_id);
      assert.deepEqual(
        [event.emoji, event.removed, event.by_phone, event.from_me, event.phone],
        ['👍🏽', false, bob.phones[0], false, alice.phones[0]],
      );

      await test.post('/api/send_reaction', { from_phone: bob.phones[0], message_id: received.message_id, emoji: '❤️' }, bob.apiKey);
      await heard(alice, 'message.reaction', (body) => body.message_id === sent.message_id && body.emoji === '❤️');
      const onAlice = await get(`/messages/${sent.message_id}`, alice.apiKey);
      assert.deepEqual(
        onAlice.json().reactions.map((reaction: Json) => [reaction.emoji, reaction.by, reaction.from_me]),
        [['❤️', bob.phones[0], false]],
        'the new one replaced the first',
      );
      const onBob = await get(`/messages/${received.message_id}`, bob.apiKey);
      assert.deepEqual(
        onBob.json().reactions.map((reaction: Json) => [reaction.emoji, reaction.by, reaction.from_me]),
        [['❤️', bob.phones[0], true]],
        'ours is kept on our copy',
      );

      const removed = await test.post(
        '/send_reaction',
        { from_phone: bob.phones[0], message_id: received.message_id, emoji: '' },
        bob.apiKey,
      );
      assert.equal(removed.json().removed, true);
      const gone = await heard(alice, 'message.reaction', (body) => body.message_id === sent.message_id && body.removed === true);
      assert.equal(gone.emoji, '');
      assert.deepEqual((await get(`/messages/${sent.message_id}`, alice.apiKey)).json().reactions, []);
    });

    it("refuses a reaction that is not one emoji, to another account's message, from another account's number, or from the wrong number", async () => {
      const { sent, received } = await aliceSends('React to me');
      const cases: [object, string, number, string][] = [
        [{ from_phone: bob.phones[0], message_id: received.message_id, emoji: 'ok' }, bob.apiKey, 400, 'invalid_emoji'],
        [{ from_phone: bob.phones[0], message_id: received.message_id, emoji: '👍👍' }, bob.apiKey, 400, 'invalid_emoji'],
        [{ from_phone: bob.phones[0], message_id: received.message_id, emoji: 'a\u20E3' }, bob.apiKey, 400, 'invalid_emoji'],
        [{ from_phone: bob.phones[0], message_id: received.message_id, emoji: '\u20E3' }, bob.apiKey, 400, 'invalid_emoji'],
        [
          { from_phone: bob.phones[0], message_id: received.message_id, emoji: `👍${'\u0301'.repeat(40)}` },
          bob.apiKey,
          400,
          'invalid_emoji',
        ],
        [{ from_phone: bob.phones[0], message_id: received.message_id }, bob.apiKey, 400, 'invalid_request'],
        [{ from_phone: bob.phones[0], message_id: sent.message_id, emoji: '👍' }, bob.apiKey, 404, 'message_not_found'],
        [{ from_phone: alice.phones[0], message_id: received.message_id, emoji: '👍' }, bob.apiKey, 403, 'phone_not_owned'],
        [{ from_phone: alice.phones[1], message_id: sent.message_id, emoji: '👍' }, alice.apiKey, 400, 'message_not_in_chat'],
      ];
      for (const [body, apiKey, status, error] of cases) {
        const response = await test.post('/send_reaction', body, apiKey);
        assert.deepEqual([response.statusCode, response.json().error], [status, error], JSON.stringify(body));
      }
    });

    it("an edit and a revocation change the other side's copy, keep its history, and are reported", async () => {
      const { sent, received } = await aliceSends('Delivery at 10:00');
      const edited = await test.post(`/messages/${sent.message_id}/edit`, { message: 'Delivery at 11:00' }, alice.apiKey);
      assert.equal(edited.statusCode, 200, edited.body);
      assert.equal(edited.json().message, 'Delivery at 11:00');
      assert.ok(edited.json().edited_at);
      const editEvent = await heard(bob, 'message.edited', (body) => body.message_id === received.message_id);
      assert.deepEqual(
        [editEvent.message, editEvent.previous_message, editEvent.by_phone],
        ['Delivery at 11:00', 'Delivery at 10:00', alice.phones[0]],
      );

      const revoked = await test.post(`/api/messages/${sent.message_id}/revoke`, {}, alice.apiKey);
      assert.equal(revoked.statusCode, 200, revoked.body);
      assert.deepEqual([revoked.json().message, typeof revoked.json().revoked_at], ['', 'string']);
      await heard(bob, 'message.revoked', (body) => body.message_id === received.message_id);

      const bobsCopy = (await get(`/messages/${received.message_id}`, bob.apiKey)).json();
      assert.equal(bobsCopy.message, '');
      assert.deepEqual(
        bobsCopy.revisions.map((revision: Json) => [revision.kind, revision.previous_message, revision.from_me]),
        [
          ['edited', 'Delivery at 10:00', false],
          ['revoked', 'Delivery at 11:00', false],
        ],
      );
      const alicesCopy = (await get(`/messages/${sent.message_id}`, alice.apiKey)).json();
      assert.deepEqual(
        alicesCopy.revisions.map((revision: Json) => [revision.kind, revision.from_me]),
        [
          ['edited', true],
          ['revoked', true],
        ],
      );

      const again = await test.post(`/messages/${sent.message_id}/edit`, { message: 'Too late' }, alice.apiKey);
      assert.deepEqual([again.statusCode, again.json().error, again.json().meta.reason], [409, 'message_not_editable', 'revoked']);
    });

    it("refuses edits and revocations outside WhatsApp's rules, and another account's message", async () => {
      const { sent, received } = await aliceSends('Old news');
      const cases: [string, object, string, number, string, string | undefined][] = [
        [`/messages/${received.message_id}/edit`, { message: 'x' }, bob.apiKey, 409, 'message_not_editable', 'not_ours'],
        [`/messages/${received.message_id}/revoke`, {}, bob.apiKey, 409, 'message_not_editable', 'not_ours'],
        [`/messages/${sent.message_id}/edit`, { message: '   ' }, alice.apiKey, 400, 'empty_message', undefined],
        [`/messages/${sent.message_id}/edit`, {}, alice.apiKey, 400, 'invalid_request', undefined],
        [`/messages/${sent.message_id}/edit`, { message: 'x' }, bob.apiKey, 404, 'message_not_found', undefined],
        [`/messages/${sent.message_id}/revoke`, {}, bob.apiKey, 404, 'message_not_found', undefined],
        [`/messages/msg_00000000000000000000000000/read`, {}, alice.apiKey, 404, 'message_not_found', undefined],
        [`/messages/${sent.message_id}/read`, {}, alice.apiKey, 409, 'message_not_editable', 'not_received'],
      ];
      for (const [url, body, apiKey, status, error, reason] of cases) {
        const response = await test.post(url, body, apiKey);
        assert.deepEqual([response.statusCode, response.json().error, response.json().meta?.reason], [status, error, reason], url);
      }
      // A refusal names where the request gave the message: the path's {id} here, a reaction's message_id in its body.
      for (const [action, body] of [
        ['edit', { message: 'x' }],
        ['revoke', {}],
        ['read', {}],
      ] as const) {
        const unknown = await test.post(`/messages/msg_00000000000000000000000000/${action}`, body, alice.apiKey);
        assert.deepEqual([unknown.json().error, unknown.json().meta?.field], ['message_not_found', 'id'], action);
      }
      const reaction = await test.post(
        '/send_reaction',
        { from_phone: alice.phones[0], message_id: 'msg_00000000000000000000000000', emoji: '👍' },
        alice.apiKey,
      );
      assert.deepEqual([reaction.json().error, reaction.json().meta?.field], ['message_not_found', 'message_id']);
      // An operation that takes no body refuses a field, as any operation refuses one it does not take.
      const optioned = await test.post(`/messages/${sent.message_id}/revoke`, { for_everyone: false }, alice.apiKey);
      assert.deepEqual(
        [optioned.statusCode, optioned.json().error, optioned.json().meta],
        [400, 'invalid_request', { field: 'for_everyone', problem: 'unknown' }],
      );
      // Sent 16 minutes ago: past the edit window, within the revoke window.
      const longAgo = Date.now() - 16 * 60_000;
      await test.gateway.store.db
        .updateTable('messages')
        .set({ created_at: longAgo, sent_at: longAgo })
        .where('id', '=', sent.message_id)
        .execute();
      const late = await test.post(`/messages/${sent.message_id}/edit`, { message: 'x' }, alice.apiKey);
      assert.deepEqual([late.statusCode, late.json().meta], [409, { reason: 'edit_window_closed', limit_seconds: 900 }]);
      const revoked = await postEmpty(`/messages/${sent.message_id}/revoke`, alice.apiKey);
      assert.equal(revoked.statusCode, 200, 'a revoke needs no body');
      // Client libraries often label an empty body as JSON; an operation without a body takes that too.
      const labelled = await test.inject({
        method: 'POST',
        url: `/messages/${received.message_id}/read`,
        headers: { authorization: `Bearer ${bob.apiKey}`, 'content-type': 'application/json' },
      });
      assert.equal(labelled.statusCode, 200, labelled.body);
    });

    it('marking a received message read reads the chat up to it and gives the sender read with its time, in its status history', async () => {
      const first = await aliceSends('One');
      const second = await aliceSends('Two');
      // A read receipt may overtake the delivered one (the history then has no delivered); here it follows it.
      await heard(alice, 'message.status', (body) => body.message_id === first.sent.message_id && body.status === 'delivered');
      const read = await postEmpty(`/messages/${second.received.message_id}/read`, bob.apiKey);
      assert.equal(read.statusCode, 200, read.body);
      assert.ok(
        read.json().marked_read.includes(first.received.message_id) && read.json().marked_read.includes(second.received.message_id),
        read.body,
      );
      const status = await heard(alice, 'message.status', (body) => body.message_id === first.sent.message_id && body.status === 'read');
      const history = (await get(`/messages/${first.sent.message_id}`, alice.apiKey)).json().status_history;
      assert.deepEqual(
        history.map((entry: Json) => entry.status),
        ['queued', 'sent', 'delivered', 'read'],
      );
      assert.equal(history.at(-1).at, status.timestamp, "the read time is the receipt's");
      const bobs = (await get(`/messages/${second.received.message_id}`, bob.apiKey)).json().status_history;
      assert.deepEqual(
        bobs.map((entry: Json) => entry.status),
        ['received', 'read'],
      );
      const again = await postEmpty(`/messages/${second.received.message_id}/read`, bob.apiKey);
      assert.deepEqual(again.json().marked_read, [], 'nothing is unread any more');
    });

    it('a number set to auto_read reads what it receives at once; the setting is per number and per account', async () => {
      const patch = (url: string, body: object, apiKey: string) =>
        test.inject({
          method: 'PATCH',
          url,
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
      const set = await patch(`/numbers/${encodeURIComponent(bob.phones[0]!)}`, { auto_read: true }, bob.apiKey);
      assert.deepEqual([set.statusCode, set.json().auto_read, set.json().phone], [200, true, bob.phones[0]], set.body);
      assert.equal((await get('/api/numbers', bob.apiKey)).json().numbers[0].auto_read, true);
      const foreign = await patch(`/api/numbers/${encodeURIComponent(bob.phones[0]!)}`, { auto_read: false }, alice.apiKey);
      assert.deepEqual([foreign.statusCode, foreign.json().error], [404, 'number_not_found']);
      const wrong = await patch(`/numbers/${encodeURIComponent(bob.phones[0]!)}`, { auto_read: 'yes' }, bob.apiKey);
      assert.equal(wrong.statusCode, 400);

      const { sent } = await aliceSends('Read me at once');
      await heard(alice, 'message.status', (body) => body.message_id === sent.message_id && body.status === 'read');
      await patch(`/numbers/${encodeURIComponent(bob.phones[0]!)}`, { auto_read: false }, bob.apiKey);
    });
  });
}
