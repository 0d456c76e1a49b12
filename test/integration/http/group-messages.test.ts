import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import type { Webhook } from '../../../src/domain/webhooks.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import type { JsonObject } from '../../support/json.ts';

const CUSTOMER = '+14155550177';
const OUTSIDER = '+14155550178';
const EVENTS = ['message', 'message.status', 'message.reaction'];
// The smallest PNG: a 1×1 transparent pixel.
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

// Group chats on the simulated network: Alice's number writes to a group that her other number,
// Bob's number and a customer outside the gateway are in. Every member on the gateway gets the
// message, each webhook hears only the chats of its scope, and everything a direct send offers
// (replies, mentions, media, idempotency, the quota) works in the group.
for (const dialect of dialects) {
  describe(`group messages (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let alice: SeededAccount;
    let bob: SeededAccount;
    let group: { id: string; subject: string };
    const hooks: Record<string, Webhook> = {};

    before(async () => {
      test = await startTestGateway(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      receiver = await WebhookReceiver.start();
      alice = await seedAccount(test.gateway, { numbers: 3 });
      bob = await seedAccount(test.gateway);
      const subscribe = async (account: SeededAccount, name: string, messageScope?: string) => {
        const { webhook } = await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
          url: receiver.url(`/${name}`),
          eventTypes: EVENTS,
          ...(messageScope !== undefined && { messageScope }),
        });
        hooks[name] = webhook;
      };
      await subscribe(alice, 'alice-all', 'all');
      await subscribe(bob, 'bob-default');
      await subscribe(bob, 'bob-groups', 'group');
      test.gateway.deliveryWorker.start();
      const created = await test.post(
        '/groups',
        { from_phone: alice.phones[0], subject: 'Dispatch', participants: [alice.phones[1], bob.phones[0], CUSTOMER] },
        alice.apiKey,
      );
      assert.equal(created.statusCode, 201, created.body);
      group = created.json();
    });

    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    const get = (url: string, apiKey: string) => test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } });

    async function heard(hook: string, event: string, match: (body: JsonObject) => boolean): Promise<JsonObject> {
      const matches = (request: ReceivedRequest) =>
        request.path === `/${hook}` && ((body) => body.event === event && match(body))(JSON.parse(request.body));
      const [request] = await receiver.waitForRequests(1, matches);
      return JSON.parse(request!.body) as JsonObject;
    }

    /** The message ids a webhook was given deliveries for: written with their event, so complete once the event is heard elsewhere. */
    async function deliveredMessageIds(account: SeededAccount, hook: string): Promise<string[]> {
      const deliveries = await test.gateway.webhooks.listDeliveries(accountScope(account.accountId), hooks[hook]!.id, 200);
      const events = await test.gateway.store.db
        .selectFrom('webhook_events')
        .select('payload')
        .where(
          'id',
          'in',
          deliveries.map((each) => each.delivery.eventId),
        )
        .execute();
      return events.map((event) => (JSON.parse(event.payload) as { message_id: string }).message_id);
    }

    it('sends to a group: every member on the gateway receives it with the group, and the answer names the group instead of a phone', async () => {
      const sent = await test.post(
        '/api/send_message',
        {
          from_phone: alice.phones[0],
          to_group: group.id,
          message: `Van leaves at six, @${bob.phones[0]!.slice(1)}`,
          mentions: [bob.phones[0]],
        },
        alice.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      const body = sent.json();
      assert.deepEqual(
        [body.to_phone, body.group, body.from_phone, body.status, body.mentions],
        [null, { id: group.id, subject: 'Dispatch' }, alice.phones[0], 'sent', [bob.phones[0]]],
      );

      for (const [hook, to] of [
        ['bob-groups', bob.phones[0]],
        ['alice-all', alice.phones[1]],
      ] as const) {
        const received = await heard(hook, 'message', (event) => event.message_id !== body.message_id && event.to_phone === to);
        assert.deepEqual(
          [received.from_phone, received.to_phone, received.group, received.message, received.mentions],
          [alice.phones[0], to, { id: group.id, subject: 'Dispatch' }, body.message, [bob.phones[0]]],
        );
      }
      const status = await heard('alice-all', 'message.status', (event) => event.message_id === body.message_id && event.status === 'sent');
      assert.deepEqual([status.to_phone, status.group], [null, { id: group.id, subject: 'Dispatch' }]);
      const delivered = await heard(
        'alice-all',
        'message.status',
        (event) => event.message_id === body.message_id && event.status === 'delivered',
      );
      assert.deepEqual(delivered.group, { id: group.id, subject: 'Dispatch' }, 'a receipt of a group send names its group too');

      const stored = (await get(`/messages/${body.message_id}`, alice.apiKey)).json();
      assert.deepEqual(
        [stored.to_phone, stored.group, stored.mentions, stored.status_history.map((entry: { status: string }) => entry.status)],
        [null, { id: group.id, subject: 'Dispatch' }, [bob.phones[0]], ['queued', 'sent', 'delivered']],
      );
      const inbound = await get(
        `/messages?direction=inbound&phone=${encodeURIComponent(bob.phones[0]!)}&peer=${encodeURIComponent(alice.phones[0]!)}`,
        bob.apiKey,
      );
      assert.equal(inbound.statusCode, 200, inbound.body);
      assert.deepEqual(
        inbound.json().messages[0].group,
        { id: group.id, subject: 'Dispatch' },
        'the list shows a received group message with its group',
      );
    });

    it("GET /messages?group_id= lists a group chat's messages, sent and received, and nothing of another chat", async () => {
      const listed = await get(`/api/messages?group_id=${encodeURIComponent(group.id)}&limit=100`, bob.apiKey);
      assert.equal(listed.statusCode, 200, listed.body);
      const messages = listed.json().messages as JsonObject[];
      assert.ok(messages.length > 0 && messages.every((message) => message.group?.id === group.id), "only the group's messages");
      const own = (await get(`/messages?group_id=${encodeURIComponent(group.id)}&direction=outbound`, alice.apiKey)).json()
        .messages as JsonObject[];
      assert.ok(own.length > 0 && own.every((message) => message.to_phone === null && message.from_phone === alice.phones[0]));
      const strangers = await get(`/messages?group_id=${encodeURIComponent(group.id)}`, (await seedAccount(test.gateway)).apiKey);
      assert.deepEqual(strangers.json().messages, [], 'another account sees none of them');
      const bad = await get('/messages?group_id=family', bob.apiKey);
      assert.deepEqual([bad.statusCode, bad.json().error, bad.json().meta.field], [400, 'invalid_request', 'group_id']);
    });

    it('gives each webhook the chats of its scope: direct only by default, groups, or all', async () => {
      const inGroup = (
        await test.post('/send_message', { from_phone: alice.phones[0], to_group: group.id, message: 'Scope check, group' }, alice.apiKey)
      ).json();
      const direct = (
        await test.post(
          '/send_message',
          { from_phone: alice.phones[0], to_phone: bob.phones[0], message: 'Scope check, direct' },
          alice.apiKey,
        )
      ).json();
      const groupCopy = await heard('bob-groups', 'message', (event) => event.message === 'Scope check, group');
      const directCopy = await heard('bob-default', 'message', (event) => event.message === 'Scope check, direct');
      await heard('alice-all', 'message.status', (event) => event.message_id === direct.message_id);
      await heard('alice-all', 'message.status', (event) => event.message_id === inGroup.message_id);

      const bobDefault = await deliveredMessageIds(bob, 'bob-default');
      const bobGroups = await deliveredMessageIds(bob, 'bob-groups');
      assert.ok(
        bobDefault.includes(directCopy.message_id) && !bobDefault.includes(groupCopy.message_id),
        'a webhook made without a scope hears direct chats only',
      );
      assert.ok(
        bobGroups.includes(groupCopy.message_id) && !bobGroups.includes(directCopy.message_id),
        'a group-scoped webhook hears groups only',
      );

      await test.gateway.webhooks.updateWebhook(accountScope(bob.accountId), hooks['bob-default']!.id, { messageScope: 'nonsense' }).then(
        () => assert.fail('an unknown scope is refused'),
        (error: { code: string; meta: unknown }) =>
          assert.deepEqual([error.code, error.meta], ['invalid_request', { field: 'message_scope' }]),
      );
    });

    it('a member answers in the group, quoting the message, and the sender hears the reply with its own id for it', async () => {
      const sent = (
        await test.post('/send_message', { from_phone: alice.phones[0], to_group: group.id, message: 'Who takes route 4?' }, alice.apiKey)
      ).json();
      const copy = await heard('bob-groups', 'message', (event) => event.message === 'Who takes route 4?');
      const reply = await test.post(
        '/send_message',
        { from_phone: bob.phones[0], to_group: group.id, message: 'I do', reply_to: copy.message_id },
        bob.apiKey,
      );
      assert.equal(reply.statusCode, 200, reply.body);
      const heardReply = await heard('alice-all', 'message', (event) => event.message === 'I do' && event.to_phone === alice.phones[0]);
      assert.deepEqual(
        [heardReply.from_phone, heardReply.reply_to.message_id, heardReply.group.id],
        [bob.phones[0], sent.message_id, group.id],
      );

      const directQuote = await test.post(
        '/send_message',
        { from_phone: bob.phones[0], to_phone: alice.phones[0], message: 'x', reply_to: copy.message_id },
        bob.apiKey,
      );
      assert.deepEqual(
        [directQuote.statusCode, directQuote.json().error],
        [400, 'invalid_reply_to'],
        'a group message is not quoted in a direct chat',
      );
    });

    it("a read mark in a group reads that group's messages only, not the sender's direct chat", async () => {
      await test.post('/send_message', { from_phone: alice.phones[0], to_phone: bob.phones[0], message: 'direct, unread' }, alice.apiKey);
      await test.post('/send_message', { from_phone: alice.phones[0], to_group: group.id, message: 'group, to read' }, alice.apiKey);
      const direct = await heard('bob-default', 'message', (event) => event.message === 'direct, unread');
      const inGroup = await heard('bob-groups', 'message', (event) => event.message === 'group, to read');
      const read = await test.post(`/messages/${inGroup.message_id}/read`, {}, bob.apiKey);
      assert.equal(read.statusCode, 200, read.body);
      const readAt = (id: string) =>
        test.gateway.store.db.selectFrom('messages').select('read_at').where('id', '=', id).executeTakeFirstOrThrow();
      assert.notEqual((await readAt(inGroup.message_id)).read_at, null);
      assert.equal((await readAt(direct.message_id)).read_at, null, 'the direct chat is left unread');
    });

    it('a simulated member writes in the group through /sandbox/receive, and every member on the gateway gets it', async () => {
      const simulated = await test.post(
        '/sandbox/receive',
        { from_phone: CUSTOMER, to_phone: alice.phones[0], group_id: group.id, message: 'Delivered to door 3', mentions: [bob.phones[0]] },
        alice.apiKey,
      );
      assert.equal(simulated.statusCode, 200, simulated.body);
      assert.deepEqual(
        [simulated.json().from_phone, simulated.json().to_phone, simulated.json().group, simulated.json().mentions],
        [CUSTOMER, alice.phones[0], { id: group.id, subject: 'Dispatch' }, [bob.phones[0]]],
      );
      const bobCopy = await heard('bob-groups', 'message', (event) => event.message === 'Delivered to door 3');
      assert.deepEqual([bobCopy.from_phone, bobCopy.group.id, bobCopy.mentions], [CUSTOMER, group.id, [bob.phones[0]]]);
      const badMention = await test.post(
        '/sandbox/receive',
        { from_phone: CUSTOMER, to_phone: alice.phones[0], group_id: group.id, message: 'x', mentions: [OUTSIDER] },
        alice.apiKey,
      );
      assert.deepEqual(
        [badMention.statusCode, badMention.json().error, badMention.json().meta.field],
        [400, 'invalid_mention', 'mentions[0]'],
      );

      const stranger = await test.post(
        '/sandbox/receive',
        { from_phone: OUTSIDER, to_phone: alice.phones[0], group_id: group.id, message: 'hi' },
        alice.apiKey,
      );
      assert.deepEqual([stranger.statusCode, stranger.json().error, stranger.json().meta.field], [400, 'invalid_request', 'from_phone']);
      const notOurs = await test.post(
        '/sandbox/receive',
        { from_phone: CUSTOMER, to_phone: alice.phones[2], group_id: group.id, message: 'hi' },
        alice.apiKey,
      );
      assert.deepEqual([notOurs.statusCode, notOurs.json().error], [403, 'not_group_member']);
    });

    it('another account cannot make a simulated group message come from a number of this gateway that is not its own: only outside phones and its own sandbox numbers speak', async () => {
      const forge = (fromPhone: string, message: string) =>
        test.post('/sandbox/receive', { from_phone: fromPhone, to_phone: bob.phones[0], group_id: group.id, message }, bob.apiKey);
      for (const [fromPhone, message] of [
        [alice.phones[0]!, "forged from alice's own number"],
        [alice.phones[1]!, "forged from alice's other number"],
      ] as const) {
        const forged = await forge(fromPhone, message);
        assert.deepEqual(
          [forged.statusCode, forged.json().error, forged.json().meta?.field],
          [403, 'phone_not_owned', 'from_phone'],
          forged.body,
        );
      }
      const stored = await test.gateway.store.db.selectFrom('messages').select('id').where('text', 'like', 'forged from alice%').execute();
      assert.deepEqual(stored, [], 'no account stored the forged messages');

      // A phone outside the gateway may still write, and so may the caller's own number, which reaches Alice as Bob's.
      assert.equal((await forge(CUSTOMER, 'from the customer, via bob')).statusCode, 200);
      const own = await test.post(
        '/sandbox/receive',
        { from_phone: alice.phones[1], to_phone: alice.phones[0], group_id: group.id, message: 'alice simulates her own number' },
        alice.apiKey,
      );
      assert.equal(own.statusCode, 200, own.body);
      const heardOwn = await heard('bob-groups', 'message', (event) => event.message === 'alice simulates her own number');
      assert.equal(heardOwn.from_phone, alice.phones[1]);
    });

    it('sends a file to the group, which members receive as media', async () => {
      const sent = await test.post(
        '/send_message',
        { from_phone: alice.phones[0], to_group: group.id, message: 'Proof of delivery', media: { data: PIXEL } },
        alice.apiKey,
      );
      assert.equal(sent.statusCode, 200, sent.body);
      assert.equal(sent.json().media.kind, 'image');
      const copy = await heard('bob-groups', 'message', (event) => event.message === 'Proof of delivery');
      assert.deepEqual([copy.content_kind, copy.media.mime_type, copy.group.id], ['image', 'image/png', group.id]);
    });

    it('refuses what a group send cannot be: both or neither recipient, a bad id, mentions of non-members, a number not in the group, a group the account does not know', async () => {
      const from = alice.phones[0];
      const cases: [object, string, number, string, string][] = [
        [{ from_phone: from, to_phone: CUSTOMER, to_group: group.id, message: 'x' }, alice.apiKey, 400, 'invalid_request', 'to_phone'],
        [{ from_phone: from, message: 'x' }, alice.apiKey, 400, 'invalid_request', 'to_phone'],
        [{ from_phone: from, to_group: 'family', message: 'x' }, alice.apiKey, 400, 'invalid_request', 'to_group'],
        [{ from_phone: from, to_phone: CUSTOMER, message: 'x', mentions: [CUSTOMER] }, alice.apiKey, 400, 'invalid_request', 'mentions'],
        [
          { from_phone: from, to_group: group.id, message: 'x', mentions: [CUSTOMER, OUTSIDER] },
          alice.apiKey,
          400,
          'invalid_mention',
          'mentions[1]',
        ],
        [
          { from_phone: from, to_group: group.id, message: 'x', mentions: ['not a phone'] },
          alice.apiKey,
          400,
          'invalid_phone_number',
          'mentions[0]',
        ],
        [{ from_phone: alice.phones[2], to_group: group.id, message: 'x' }, alice.apiKey, 403, 'not_group_member', 'to_group'],
        [{ from_phone: bob.phones[0], to_group: '120363000000000001@g.us', message: 'x' }, bob.apiKey, 404, 'group_not_found', 'to_group'],
      ];
      for (const [body, apiKey, status, code, field] of cases) {
        const response = await test.post('/send_message', body, apiKey);
        assert.deepEqual(
          [response.statusCode, response.json().error, response.json().meta?.field],
          [status, code, field],
          JSON.stringify(body),
        );
      }
      // Bob's account does not know a group of Alice's that Bob left; see the groups tests for
      // how an account learns of groups. Another account's number is a 403 before anything else.
      const foreign = await test.post('/send_message', { from_phone: alice.phones[0], to_group: group.id, message: 'x' }, bob.apiKey);
      assert.deepEqual([foreign.statusCode, foreign.json().error], [403, 'phone_not_owned']);
    });

    it('an Idempotency-Key covers the group and its mentions: a retry sends nothing more, and the key with other mentions is refused', async () => {
      const body = { from_phone: alice.phones[0], to_group: group.id, message: 'Once only', mentions: [bob.phones[0]] };
      const headers = { 'idempotency-key': `group-${dialect}` };
      const first = await test.post('/send_message', body, alice.apiKey, headers);
      const again = await test.post('/send_message', body, alice.apiKey, headers);
      assert.deepEqual(
        [first.statusCode, again.statusCode, again.headers['idempotent-replayed'], again.json().message_id],
        [200, 200, 'true', first.json().message_id],
      );
      const other = await test.post('/send_message', { ...body, mentions: [CUSTOMER] }, alice.apiKey, headers);
      assert.deepEqual([other.statusCode, other.json().error], [422, 'idempotency_key_reused']);
    });

    it("a group send is one unit of the monthly volume, whatever the group's size", async () => {
      const limited = await seedAccount(test.gateway, { monthlyLimit: 1 });
      const own = (
        await test.post(
          '/groups',
          { from_phone: limited.phones[0], subject: 'Small', participants: [CUSTOMER, OUTSIDER, bob.phones[0]] },
          limited.apiKey,
        )
      ).json();
      const first = await test.post('/send_message', { from_phone: limited.phones[0], to_group: own.id, message: 'one' }, limited.apiKey);
      const second = await test.post('/send_message', { from_phone: limited.phones[0], to_group: own.id, message: 'two' }, limited.apiKey);
      assert.deepEqual(
        [first.statusCode, second.statusCode, second.json().error, second.json().meta.used],
        [200, 429, 'quota_exceeded', 1],
      );
    });
  });
}
