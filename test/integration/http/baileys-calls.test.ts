/**
 * Calls over the real Baileys engine: WhatsApp's side is a fake socket that emits `call` events
 * in Baileys' own WACallEvent shape (as its messages-recv builds them from call nodes), and
 * records what the gateway asks of it (rejectCall).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WACallEvent } from 'baileys';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';
import { waitFor } from '../../support/fake-whatsapp.ts';
import { callEventsOf } from '../../support/call-events.ts';

const CALLER_LID = '201234567890123@lid';
const CALLER_PN = '14155550166@s.whatsapp.net';
const GROUP = '120363222222222222@g.us';

function callUpdate(id: string, status: WACallEvent['status'], extra: Partial<WACallEvent> = {}): WACallEvent {
  return { chatId: CALLER_LID, from: `${CALLER_LID.split('@')[0]}:3@lid`, id, date: new Date(), status, offline: false, ...extra };
}

for (const dialect of dialects) {
  describe(`calls through a linked Baileys number (${dialect})`, () => {
    let linked: LinkedBaileysNumber;
    let receiver: WebhookReceiver;

    before(async () => {
      linked = await startLinkedBaileysNumber(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      receiver = await WebhookReceiver.start();
      await linked.test.gateway.webhooks.createWebhook(accountScope(linked.accountId), {
        url: receiver.url('/calls'),
        eventTypes: ['call'],
      });
      linked.test.gateway.deliveryWorker.start();
    });
    after(async () => {
      await linked?.close();
      await receiver?.close();
    });

    const heard = (callId: string, count: number) => callEventsOf(receiver, callId, count);

    it("an offered video call from a LID caller, then its timeout, arrive as offered and missed, with the caller's phone and LID", async () => {
      linked.socket.emit('call', [callUpdate('CALL-1', 'offer', { isVideo: true, isGroup: false, callerPn: CALLER_PN })]);
      linked.socket.emit('call', [callUpdate('CALL-1', 'ringing')]);
      linked.socket.emit('call', [callUpdate('CALL-1', 'timeout', { isVideo: true, callerPn: CALLER_PN })]);
      const [offered, missed] = await heard('CALL-1', 2);
      assert.deepEqual(
        [offered!.status, offered!.phone, offered!.from_phone, offered!.from_lid, offered!.video, offered!.group],
        ['offered', linked.number.phone, '+14155550166', CALLER_LID, true, null],
      );
      assert.equal(missed!.status, 'missed');
      assert.equal(linked.socket.rejectedCalls.length, 0, 'a number that takes calls rejects none');
    });

    it('a group call names its group; an accepted one reports accepted', async () => {
      linked.socket.emit('call', [
        { chatId: GROUP, from: CALLER_PN, id: 'CALL-2', date: new Date(), status: 'offer', offline: false, isGroup: true, groupJid: GROUP },
      ]);
      linked.socket.emit('call', [{ chatId: GROUP, from: CALLER_PN, id: 'CALL-2', date: new Date(), status: 'accept', offline: false }]);
      const [offered, accepted] = await heard('CALL-2', 2);
      assert.deepEqual(
        [offered!.group, offered!.from_phone, offered!.from_lid, accepted!.status],
        [{ id: GROUP }, '+14155550166', null, 'accepted'],
      );
    });

    it("with reject_calls, the gateway rejects the call on the socket, with the caller's JID, and WhatsApp's echo of it is not reported twice", async () => {
      const set = await linked.test.inject({
        method: 'PATCH',
        url: `/numbers/${linked.number.id}`,
        payload: { reject_calls: true, call_reply_text: 'Calls are not answered here.' },
        headers: { authorization: `Bearer ${linked.apiKey}` },
      });
      assert.equal(set.statusCode, 200, set.body);
      const caller = `${CALLER_LID.split('@')[0]}:3@lid`;
      linked.socket.emit('call', [callUpdate('CALL-3', 'offer', { callerPn: CALLER_PN })]);
      await waitFor('the call is rejected', () => linked.socket.rejectedCalls.length === 1);
      assert.deepEqual(linked.socket.rejectedCalls, [{ callId: 'CALL-3', callFrom: caller }]);
      linked.socket.emit('call', [callUpdate('CALL-3', 'reject')]);
      linked.socket.emit('call', [callUpdate('CALL-3', 'terminate')]);
      const [offered, rejected] = await heard('CALL-3', 2);
      assert.deepEqual([offered!.status, rejected!.status, rejected!.rejected_by_gateway], ['offered', 'rejected', true]);
      await waitFor('the reply is sent', () => linked.socket.sendCalls.some((call) => call.jid === CALLER_PN));
      assert.deepEqual(linked.socket.sendCalls.find((call) => call.jid === CALLER_PN)!.content, { text: 'Calls are not answered here.' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(receiver.requests.filter((request) => JSON.parse(request.body).call_id === 'CALL-3').length, 2);
    });
  });
}
