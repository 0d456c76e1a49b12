import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { E164 } from '../../../src/domain/phone.ts';
import { accountScope, operatorScope } from '../../../src/domain/tenant-scope.ts';
import { dialects } from '../../support/databases.ts';
import { seedAccount, startTestGateway, uniquePhone, type SeededAccount, type TestGateway } from '../../support/gateway.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import { payloadOf, webhookEnv } from '../../support/delivery-support.ts';

const KNOWN = '+14155550160';
const FIRST = '+14155550161';
const SECOND = '+14155550162';
const THIRD = '+14155550163';

// WhatsApp's cap on new chats, rehearsed on the sandbox network (issue 42 items 3 and 6): a send
// to someone who never wrote to the number, past the rehearsed quota, is refused with 475 as
// WhatsApp refuses it (200 sent, then failed with error_code 475); number.capped follows, and
// from then on first contacts wait for the cycle's end while replies go at once.
for (const dialect of dialects) {
  describe(`a sandbox number's rehearsed cap on new chats (${dialect})`, () => {
    let test: TestGateway;
    let receiver: WebhookReceiver;
    let account: SeededAccount;

    before(async () => {
      test = await startTestGateway(dialect, { ...webhookEnv(), WAGW_SEND_QUEUE_CHECK_MS: '100' });
      test.gateway.deliveryWorker.start();
      test.gateway.queueRunner.start();
      receiver = await WebhookReceiver.start();
      account = await seedAccount(test.gateway, { numbers: 3 });
      await test.gateway.webhooks.createWebhook(accountScope(account.accountId), {
        url: receiver.url(),
        eventTypes: ['number.capped', 'message.status'],
      });
    });

    after(async () => {
      await test?.close();
      await receiver?.close();
    });

    const phone = () => account.phones[0]!;
    const send = (to: string) => test.post('/send_message', { from_phone: phone(), to_phone: to, message: 'hello' }, account.apiKey);
    const queue = async () =>
      (
        await test.inject({
          method: 'GET',
          url: `/api/numbers/${encodeURIComponent(phone())}/queue`,
          headers: { authorization: `Bearer ${account.apiKey}` },
        })
      ).json();
    const waitFor = (count: number, matches: (payload: Record<string, unknown>) => boolean) =>
      receiver.waitForRequests(count, (request: ReceivedRequest) => matches(payloadOf(request)));
    const statusOf = (messageId: string, status: string) => (payload: Record<string, unknown>) =>
      payload.event === 'message.status' && payload.message_id === messageId && payload.status === status;

    it('two 475s of one number at once are recorded in turn: one number.capped event, and the number held', async () => {
      // A number of its own: the others' tests rehearse their caps on the sandbox network.
      const other = account.phones[2]! as E164;
      const number = await test.gateway.numbers.findNumber(operatorScope(), other);
      const lease = test.gateway.keeper.leaseOf(number.id);
      assert.ok(lease, 'the test gateway serves the number');
      const at = new Date();
      // As a session's two sends refused with 475 in the same moment report them.
      await Promise.all(
        ['first 475', 'second 475'].map((detail) => test.gateway.newChatCaps.record({ kind: 'capped', detail, lease, phone: other, at })),
      );
      const events = await test.gateway.store.db
        .selectFrom('webhook_events')
        .select('payload')
        .where('account_id', '=', account.accountId)
        .where('event_type', '=', 'number.capped')
        .execute();
      const mine = events.filter((event) => (JSON.parse(event.payload) as { number?: string }).number === other);
      assert.equal(mine.length, 1, 'the second 475 found the number capped by the first');
      assert.equal(test.gateway.newChatCaps.cappedNow(number.id), true);
    });

    it('a 475 holds first contacts until the cycle ends, a reply still goes, and the queue shows the quota', async () => {
      const written = await test.post('/sandbox/receive', { from_phone: KNOWN, to_phone: phone(), message: 'hi' }, account.apiKey);
      assert.equal(written.statusCode, 200, written.body);
      const rehearsed = await test.post(
        '/sandbox/restrict',
        { phone: phone(), kind: 'new_chat_cap', new_chats: 1, lift_after_seconds: 3_600 },
        account.apiKey,
      );
      assert.equal(rehearsed.statusCode, 200, rehearsed.body);
      const until = rehearsed.json().until as string;

      assert.equal((await send(FIRST)).statusCode, 200, 'the one new chat of the quota goes');
      const capped = await send(SECOND);
      assert.equal(capped.statusCode, 200, 'WhatsApp takes the send, and refuses it in its ack');
      const [failed] = await waitFor(1, statusOf(capped.json().message_id, 'failed'));
      assert.equal(payloadOf(failed!).error_code, '475');
      const [event] = await waitFor(1, (payload) => payload.event === 'number.capped' && payload.number === phone());
      assert.deepEqual(
        [payloadOf(event!).number, payloadOf(event!).until, payloadOf(event!).total, payloadOf(event!).used],
        [phone(), until, 1, 1],
      );

      const held = await send(THIRD);
      assert.equal(held.statusCode, 202, held.body);
      assert.deepEqual([held.json().wait_reason, held.json().scheduled_for], ['new_chat_cap', until]);
      const reply = await send(KNOWN);
      assert.equal(reply.statusCode, 200, reply.body);
      assert.equal(reply.json().status, 'sent');

      const view = await queue();
      assert.deepEqual([view.total, view.counts.new_chat_cap], [1, 1]);
      assert.deepEqual(
        { ...view.new_chat_quota, read_at: undefined },
        {
          status: 'capped',
          total: 1,
          used: 1,
          remaining: 0,
          cycle_ends_at: until,
          capped_until: until,
          source: 'whatsapp',
          error: null,
          read_at: undefined,
        },
      );
    });

    it('when the cycle ends, a first contact held for the cap leaves, and WhatsApp takes it', async () => {
      const from = account.phones[1]!;
      const sendFrom = (to: string) => test.post('/send_message', { from_phone: from, to_phone: to, message: 'hello' }, account.apiKey);
      // A short cycle keeps the test short, but the first contact must reach the network before
      // the cycle ends for WhatsApp to refuse it. A machine too slow for that (its answer came
      // after the end) rehearses again, with a cycle four times as long and new people.
      let until = 0;
      for (let liftAfterSeconds = 1; ; liftAfterSeconds *= 4) {
        const rehearsed = await test.post(
          '/sandbox/restrict',
          { phone: from, kind: 'new_chat_cap', lift_after_seconds: liftAfterSeconds },
          account.apiKey,
        );
        assert.equal(rehearsed.statusCode, 200, rehearsed.body);
        until = Date.parse(rehearsed.json().until as string);
        const capped = await sendFrom(uniquePhone());
        assert.equal(capped.statusCode, 200, capped.body);
        if (Date.now() >= until) continue;
        await waitFor(1, statusOf(capped.json().message_id, 'failed'));
        await waitFor(
          1,
          (payload) => payload.event === 'number.capped' && payload.number === from && Date.parse(String(payload.until)) === until,
        );
        break;
      }
      // Held until the cycle's end (202), or, on a machine slow enough to reach it first, sent then (200).
      const later = await sendFrom(uniquePhone());
      assert.ok([200, 202].includes(later.statusCode), later.body);
      const [sent] = await waitFor(1, statusOf(later.json().message_id, 'sent'));
      assert.ok(Date.parse(String(payloadOf(sent!).timestamp)) >= until, 'not before the cycle ended');
    });
  });
}
