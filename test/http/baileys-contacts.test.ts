/**
 * The blocklist, presence and profiles over the real Baileys engine: WhatsApp's side is a fake
 * socket that keeps a blocklist as WhatsApp does (phone JIDs and LIDs), emits presence.update in
 * Baileys' own shape, and answers profile queries; the rest is the gateway's real code.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountScope } from '../../src/domain/tenant-scope.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../support/baileys-number.ts';
import { dialects } from '../support/databases.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const CONTACT = '+14155550188';
const CONTACT_JID = '14155550188@s.whatsapp.net';
const LID_CONTACT = '301234567890123@lid';
const LID_CONTACT_PHONE_JID = '447700900555@s.whatsapp.net';

for (const dialect of dialects) {
  describe(`contacts through a linked Baileys number (${dialect})`, () => {
    let linked: LinkedBaileysNumber;
    let receiver: WebhookReceiver;
    const as = () => ({ authorization: `Bearer ${linked.apiKey}` });

    before(async () => {
      linked = await startLinkedBaileysNumber(dialect, { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' });
      receiver = await WebhookReceiver.start();
      await linked.test.gateway.webhooks.createWebhook(accountScope(linked.accountId), { url: receiver.url('/contacts'), eventTypes: ['presence.update'] });
      linked.test.gateway.deliveryWorker.start();
    });
    after(async () => {
      await linked?.close();
      await receiver?.close();
    });

    it('block and unblock go to WhatsApp as updateBlockStatus on the phone JID; the list is WhatsApp\'s, a LID resolved where Baileys knows its phone', async () => {
      const blocked = await linked.test.post('/blocklist', { from_phone: linked.number.phone, phone: CONTACT }, linked.apiKey);
      assert.equal(blocked.statusCode, 200, blocked.body);
      assert.deepEqual(linked.socket.blocked, [CONTACT_JID]);
      // Blocked from the phone itself, by LID: WhatsApp lists it so.
      linked.socket.blocked.push(LID_CONTACT, '999999999999999@lid');
      linked.socket.lidMapping.set(LID_CONTACT, LID_CONTACT_PHONE_JID);
      const listed = await linked.test.inject({ method: 'GET', url: `/blocklist?from_phone=${encodeURIComponent(linked.number.phone)}`, headers: as() });
      assert.deepEqual(listed.json().contacts, [
        { phone: CONTACT, lid: null },
        { phone: '+447700900555', lid: LID_CONTACT },
        { phone: null, lid: '999999999999999@lid' },
      ]);
      const lifted = await linked.test.inject({ method: 'DELETE', url: `/blocklist/${encodeURIComponent(CONTACT)}?from_phone=${encodeURIComponent(linked.number.phone)}`, headers: as() });
      assert.equal(lifted.statusCode, 200, lifted.body);
      assert.deepEqual(linked.socket.blocked, [LID_CONTACT, '999999999999999@lid']);
    });
  });
}
