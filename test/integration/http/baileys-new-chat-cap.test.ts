/**
 * WhatsApp's cap on new chats at the Baileys boundary (issue 42 item 3, ADR 0058): the fake
 * socket answers fetchNewChatMessageCap and emits `message-capping.update` and a send's failed
 * ack (475) as Baileys does, typed by Baileys' own NewChatMessageCapInfo and WAMessageUpdate;
 * everything from the session inwards is real, down to the webhook receiver.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proto, type NewChatMessageCapInfo, type WAMessage, type WAMessageUpdate } from 'baileys';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import { WebhookReceiver, type ReceivedRequest } from '../../support/webhook-receiver.ts';
import { payloadOf, webhookEnv } from '../../support/delivery-support.ts';
import { waitUntil } from '../../support/waiting.ts';

const KNOWN = '+14155550140';
const FIRST = '+14155550141';
const SECOND = '+14155550142';
const METRICS_TOKEN = 'metrics-token-for-the-new-chat-cap-0123';

/** A message from KNOWN as `messages.upsert` carries it. */
function fromKnown(text: string): WAMessage {
  const info = proto.WebMessageInfo.fromObject({ message: { conversation: text }, messageTimestamp: Math.floor(Date.now() / 1000) });
  return Object.assign(info, { key: { remoteJid: `${KNOWN.slice(1)}@s.whatsapp.net`, fromMe: false, id: `IN_${Date.now()}` } });
}

/** WhatsApp's ack of a send it refused with 475, as Baileys reports it: status ERROR, the code first in messageStubParameters. */
function capped(engineMessageId: string, to: string): WAMessageUpdate {
  return {
    key: { remoteJid: `${to.slice(1)}@s.whatsapp.net`, fromMe: true, id: engineMessageId },
    update: { status: proto.WebMessageInfo.Status.ERROR, messageStubParameters: ['475'] },
  };
}

for (const dialect of dialects) {
  describe(`WhatsApp's cap on new chats, through a Baileys number (${dialect})`, () => {
    let linked: LinkedBaileysNumber;
    let receiver: WebhookReceiver;

    before(async () => {
      linked = await startLinkedBaileysNumber(dialect, { ...webhookEnv(), WAGW_METRICS_TOKEN: METRICS_TOKEN });
      linked.test.gateway.deliveryWorker.start();
      receiver = await WebhookReceiver.start();
      await linked.test.gateway.webhooks.createWebhook(accountScope(linked.accountId), {
        url: receiver.url(),
        eventTypes: ['number.capped', 'message.status'],
      });
    });

    after(async () => {
      await linked?.close();
      await receiver?.close();
    });

    const phone = () => linked.number.phone;
    const send = (to: string) => linked.test.post('/send_message', { from_phone: phone(), to_phone: to, message: 'hello' }, linked.apiKey);
    const queue = async () =>
      (
        await linked.test.inject({
          method: 'GET',
          url: `/api/numbers/${linked.number.id}/queue`,
          headers: { authorization: `Bearer ${linked.apiKey}` },
        })
      ).json();
    const scrape = async () =>
      (await linked.test.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body;
    const waitFor = (count: number, matches: (payload: Record<string, unknown>) => boolean) =>
      receiver.waitForRequests(count, (request: ReceivedRequest) => matches(payloadOf(request)));

    it('the session reads the quota on connect, and a failed read says the policy stands in', async () => {
      // The fake answered the read on connect with nothing: WhatsApp's "no figures".
      await waitUntil(async () => (await queue()).new_chat_quota !== null, 'the quota read on connect');
      assert.deepEqual(
        { ...(await queue()).new_chat_quota, read_at: undefined },
        {
          status: 'none',
          total: null,
          used: null,
          remaining: null,
          cycle_ends_at: null,
          capped_until: null,
          source: 'whatsapp',
          error: null,
          read_at: undefined,
        },
      );

      // Some accounts' query answers 500: the read is an answer too, and the governor falls back.
      linked.socket.newChatCap = new Error('GraphQL server error: 500');
      const asked = await linked.test.inject({
        method: 'GET',
        url: `/api/new_chat_quota?from_phone=${encodeURIComponent(phone())}`,
        headers: { authorization: `Bearer ${linked.apiKey}` },
      });
      assert.equal(asked.statusCode, 200, asked.body);
      const shown = (await queue()).new_chat_quota;
      assert.deepEqual([shown.status, shown.source, shown.error], ['unknown', 'fallback', 'GraphQL server error: 500']);
      const metrics = await scrape();
      assert.match(metrics, /^wagw_new_chat_quota_read_failures_total 1$/m);
      assert.equal((await send(FIRST)).statusCode, 200, 'a first contact goes: no cap is known');
    });

    it('message-capping.update shows the quota, the used part and the cycle end in the queue view and the metrics', async () => {
      const cycleEnd = Math.floor(Date.now() / 1000) + 3_600;
      const info: NewChatMessageCapInfo = {
        total_quota: 50,
        used_quota: 12,
        cycle_start_timestamp: String(cycleEnd - 86_400),
        cycle_end_timestamp: String(cycleEnd),
        capping_status: 'FIRST_WARNING' as NewChatMessageCapInfo['capping_status'],
      };
      linked.socket.emit('message-capping.update', info);
      await waitUntil(async () => (await queue()).new_chat_quota.total === 50, 'the pushed quota');
      const shown = (await queue()).new_chat_quota;
      assert.deepEqual(
        [shown.status, shown.total, shown.used, shown.remaining, shown.cycle_ends_at, shown.source],
        ['first_warning', 50, 12, 38, new Date(cycleEnd * 1000).toISOString(), 'whatsapp'],
      );
      const metrics = await scrape();
      assert.match(metrics, new RegExp(`^wagw_new_chat_quota_chats\\{number_id="${linked.number.id}"\\} 50$`, 'm'));
      assert.match(metrics, new RegExp(`^wagw_new_chat_quota_used_chats\\{number_id="${linked.number.id}"\\} 12$`, 'm'));
      assert.match(
        metrics,
        new RegExp(`^wagw_new_chat_quota_cycle_end_timestamp_seconds\\{number_id="${linked.number.id}"\\} ${cycleEnd}$`, 'm'),
      );
    });

    it('a 475 holds first contacts until the cycle ends, while a reply to a known contact still goes', async () => {
      await linked.arrives(fromKnown('hi, it is me'), async () => {
        const page = await linked.test.inject({
          method: 'GET',
          url: `/api/messages?phone=${encodeURIComponent(phone())}&direction=inbound&limit=1`,
          headers: { authorization: `Bearer ${linked.apiKey}` },
        });
        return page.json().messages[0]?.message === 'hi, it is me';
      });
      const cycleEnd = Math.floor(Date.now() / 1000) + 7_200;
      // What WhatsApp answers when the session reads the quota again after the 475.
      linked.socket.newChatCap = {
        total_quota: 50,
        used_quota: 50,
        cycle_end_timestamp: String(cycleEnd),
        capping_status: 'CAPPED' as NewChatMessageCapInfo['capping_status'],
      };
      const sent = await send(SECOND);
      assert.equal(sent.statusCode, 200, sent.body);
      const engineId = `3EB0OUT${linked.socket.sendCalls.length}`;
      linked.socket.emit('messages.update', [capped(engineId, SECOND)]);

      const [event] = await waitFor(1, (payload) => payload.event === 'number.capped');
      assert.deepEqual([payloadOf(event!).number, typeof payloadOf(event!).detail], [phone(), 'string']);
      const [failed] = await waitFor(1, (payload) => payload.event === 'message.status' && payload.status === 'failed');
      assert.equal(payloadOf(failed!).error_code, '475');
      const until = new Date(cycleEnd * 1000).toISOString();
      await waitUntil(async () => (await queue()).new_chat_quota.cycle_ends_at === until, 'the quota read again after the 475');
      const shown = (await queue()).new_chat_quota;
      assert.deepEqual([shown.status, shown.used, shown.capped_until], ['capped', 50, until]);

      const sendsBefore = linked.socket.sendCalls.length;
      const held = await send('+14155550143');
      assert.equal(held.statusCode, 202, held.body);
      assert.deepEqual([held.json().wait_reason, held.json().scheduled_for], ['new_chat_cap', until]);
      assert.equal(linked.socket.sendCalls.length, sendsBefore, 'the first contact did not reach WhatsApp');

      const reply = await send(KNOWN);
      assert.equal(reply.statusCode, 200, reply.body);
      assert.equal(linked.socket.sendCalls.length, sendsBefore + 1, 'the reply went');
      assert.equal(linked.socket.sendCalls.at(-1)!.jid, `${KNOWN.slice(1)}@s.whatsapp.net`);
      const view = await queue();
      assert.deepEqual([view.total, view.counts.new_chat_cap], [1, 1]);
      const metrics = await scrape();
      assert.match(metrics, new RegExp(`^wagw_new_chat_capped\\{number_id="${linked.number.id}"\\} 1$`, 'm'));
    });
  });
}
