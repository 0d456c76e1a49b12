/**
 * Click-to-WhatsApp leads over the real Baileys engine (ADR 0051). WhatsApp's side emits Baileys
 * 7's own shapes: a message whose context carries `externalAdReply`; and, for the first message
 * after an ad, the CIPHERTEXT stub `Message absent from node`, the `messages.update` that names
 * the placeholder-resend request, and the phone's copy upserted under the same id with `requestId`
 * (Baileys' messages-recv.ts and process-message.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NO_MESSAGE_FOUND_ERROR_TEXT, proto, type WAMessage } from 'baileys';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import { WebhookReceiver } from '../../support/webhook-receiver.ts';

const LEAD_JID = '14155550177@s.whatsapp.net';
const LEAD_PHONE = '+14155550177';

const AD = {
  title: 'Summer sale: 30% off',
  body: 'Tap to ask about sizes',
  mediaType: proto.ContextInfo.ExternalAdReplyInfo.MediaType.IMAGE,
  thumbnailUrl: 'https://scontent.example/thumb.jpg',
  originalImageUrl: 'https://scontent.example/ad.jpg',
  sourceType: 'ad',
  sourceId: '120210000000000001',
  sourceUrl: 'https://fb.me/ad-1',
  ctwaClid: 'ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv-_zfUQ2a',
};

const REFERRAL = {
  source_type: 'ad',
  source_id: AD.sourceId,
  source_url: AD.sourceUrl,
  headline: AD.title,
  body: AD.body,
  media_type: 'image',
  image_url: AD.originalImageUrl,
  video_url: null,
  thumbnail_url: AD.thumbnailUrl,
  ctwa_clid: AD.ctwaClid,
};

function fromLead(id: string, text: string, withAd: boolean): WAMessage {
  const info = proto.WebMessageInfo.fromObject({
    message: { extendedTextMessage: { text, ...(withAd && { contextInfo: { externalAdReply: AD } }) } },
    messageTimestamp: Math.floor(Date.now() / 1000),
    pushName: 'Lead',
  });
  return Object.assign(info, { key: { remoteJid: LEAD_JID, fromMe: false, id } });
}

/** What Baileys upserts when a message came without its content (decode-wa-message.ts). */
function placeholder(id: string): WAMessage {
  const stub = proto.WebMessageInfo.fromObject({
    messageStubType: proto.WebMessageInfo.StubType.CIPHERTEXT,
    messageStubParameters: [NO_MESSAGE_FOUND_ERROR_TEXT],
    messageTimestamp: Math.floor(Date.now() / 1000),
    pushName: 'Lead',
  });
  return Object.assign(stub, { key: { remoteJid: LEAD_JID, fromMe: false, id } });
}

for (const dialect of dialects) {
  describe(`ad leads through a linked Baileys number (${dialect})`, () => {
    let linked: LinkedBaileysNumber;
    let receiver: WebhookReceiver;

    before(async () => {
      linked = await startLinkedBaileysNumber(
        dialect,
        { WAGW_WEBHOOK_ALLOW_PRIVATE: 'true', WAGW_WEBHOOK_POLL_INTERVAL_MS: '50' },
        { baileysTimings: { placeholderWaitMs: 300 } },
      );
      receiver = await WebhookReceiver.start();
      await linked.test.gateway.webhooks.createWebhook(accountScope(linked.accountId), {
        url: receiver.url('/leads'),
        eventTypes: ['message'],
      });
      linked.test.gateway.deliveryWorker.start();
    });
    after(async () => {
      await linked?.close();
      await receiver?.close();
    });

    const events = () =>
      receiver.requests.map(
        (request) => JSON.parse(request.body) as { whatsapp_id?: string; message_id: string } & Record<string, unknown>,
      );
    const eventsFor = async (text: string, count: number) => {
      await receiver.waitForRequests(count, (request) => JSON.parse(request.body).message === text);
      return events().filter((event) => event.message === text);
    };
    const listed = async (messageId: string) => {
      const page = await linked.test.inject({
        method: 'GET',
        url: `/messages?phone=${encodeURIComponent(linked.number.phone)}&direction=inbound&limit=100`,
        headers: { authorization: `Bearer ${linked.apiKey}` },
      });
      assert.equal(page.statusCode, 200, page.body);
      return (page.json().messages as { message_id: string }[]).find((message) => message.message_id === messageId) as Record<
        string,
        unknown
      >;
    };

    it("a message from an ad carries its referral, in the Cloud API's names, on the webhook and in GET /messages", async () => {
      linked.socket.emit('messages.upsert', { messages: [fromLead('AD_LEAD_1', 'Is it in blue?', true)], type: 'notify' });
      const [event] = await eventsFor('Is it in blue?', 1);
      assert.deepEqual(event!.referral, REFERRAL);
      assert.deepEqual((await listed(event!.message_id)).referral, REFERRAL);
    });

    it('a message without an ad has no referral', async () => {
      linked.socket.emit('messages.upsert', { messages: [fromLead('PLAIN_1', 'just asking', false)], type: 'notify' });
      const [event] = await eventsFor('just asking', 1);
      assert.equal('referral' in event!, false);
      assert.equal('referral' in (await listed(event!.message_id)), false);
    });

    it('a placeholder, the resend request and the resent copy reach the webhook once, as the copy; one never resent arrives as unavailable', async () => {
      linked.socket.emit('messages.upsert', { messages: [placeholder('AD_PLACEHOLDER_1')], type: 'notify' });
      linked.socket.emit('messages.update', [
        {
          key: { remoteJid: LEAD_JID, fromMe: false, id: 'AD_PLACEHOLDER_1' },
          update: { messageStubParameters: [NO_MESSAGE_FOUND_ERROR_TEXT, 'PDO-REQ-1'] },
        },
      ]);
      linked.socket.emit('messages.upsert', {
        messages: [fromLead('AD_PLACEHOLDER_1', 'Hi, I saw your ad', true)],
        type: 'notify',
        requestId: 'PDO-REQ-1',
      });
      const [resent] = await eventsFor('Hi, I saw your ad', 1);
      assert.deepEqual(resent!.referral, REFERRAL);

      // A second placeholder whose copy never comes: its unavailable message is delivered after
      // the first's wait would have run out, so by then a stray report of the first would be here.
      linked.socket.emit('messages.upsert', { messages: [placeholder('AD_PLACEHOLDER_2')], type: 'notify' });
      const unavailable = await eventsFor('', 1);
      assert.deepEqual(
        unavailable.map((event) => [event.content_kind, event.from_phone, event.message]),
        [['unavailable', LEAD_PHONE, '']],
      );
      assert.equal(
        events().filter((event) => event.content_kind === 'unavailable' || event.message === 'Hi, I saw your ad').length,
        2,
        'the resent message was reported once, and its placeholder never',
      );
      const stored = await linked.test.gateway.store.db
        .selectFrom('messages')
        .select(['engine_message_id', 'content_kind'])
        .where('number_id', '=', linked.number.id)
        .where('engine_message_id', 'in', ['AD_PLACEHOLDER_1', 'AD_PLACEHOLDER_2'])
        .orderBy('engine_message_id')
        .execute();
      assert.deepEqual(
        stored.map((row) => [row.engine_message_id, row.content_kind]),
        [
          ['AD_PLACEHOLDER_1', 'text'],
          ['AD_PLACEHOLDER_2', 'unavailable'],
        ],
      );
    });
  });
}
