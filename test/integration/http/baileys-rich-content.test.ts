/**
 * Polls, places, contact cards and view-once files over the real Baileys engine: the HTTP stack,
 * the services, the database and the engine are real; WhatsApp's side is a fake socket that
 * records what Baileys is asked to send and emits messages built from Baileys' own protos. A
 * vote is encrypted as a phone encrypts it, with Baileys' own crypto.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { aesEncryptGCM, hmacSign, proto } from 'baileys';
import type { WAMessage, WAMessageKey } from 'baileys';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import { accountScope } from '../../../src/domain/tenant-scope.ts';
import type { FakeSocket } from '../../support/fake-whatsapp.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import type { TestGateway } from '../../support/gateway.ts';
import type { JsonObject } from '../../support/json.ts';

const CUSTOMER = '+14155550100';
const CUSTOMER_JID = '14155550100@s.whatsapp.net';
const CUSTOMER_LID = '99887766554433@lid';

function fromWhatsApp(body: Record<string, unknown>, key: Partial<WAMessageKey>): WAMessage {
  const info = proto.WebMessageInfo.fromObject({ message: body, messageTimestamp: Math.floor(Date.now() / 1000) });
  return Object.assign(info, { key: { remoteJid: CUSTOMER_JID, fromMe: false, ...key } });
}

/** A vote as the voter's phone encrypts it (the inverse of Baileys' decryptPollVote). */
function encryptVote(
  options: string[],
  context: { secret: Uint8Array; pollId: string; creatorJid: string; voterJid: string },
): { encPayload: Buffer; encIv: Buffer } {
  const selectedOptions = options.map((option) => createHash('sha256').update(option).digest());
  const plain = proto.Message.PollVoteMessage.encode({ selectedOptions }).finish();
  const sign = Buffer.concat([
    Buffer.from(context.pollId),
    Buffer.from(context.creatorJid),
    Buffer.from(context.voterJid),
    Buffer.from('Poll Vote'),
    new Uint8Array([1]),
  ]);
  const key = hmacSign(sign, hmacSign(context.secret, new Uint8Array(32), 'sha256'), 'sha256');
  const encIv = randomBytes(12);
  return { encPayload: aesEncryptGCM(plain, key, encIv, Buffer.from(`${context.pollId}\u0000${context.voterJid}`)), encIv };
}

function voteMessage(
  id: string,
  pollKey: WAMessageKey,
  vote: { encPayload: Buffer; encIv: Buffer },
  key: Partial<WAMessageKey> = {},
): WAMessage {
  return fromWhatsApp({ pollUpdateMessage: { pollCreationMessageKey: pollKey, vote, senderTimestampMs: Date.now() } }, { id, ...key });
}

for (const dialect of dialects) {
  describe(`polls, places, cards and view-once through a linked Baileys number (${dialect})`, () => {
    let test: TestGateway;
    let apiKey: string;
    let number: WhatsAppNumber;
    let socket: FakeSocket;
    let linked: LinkedBaileysNumber;
    let ourJid: string;

    before(async () => {
      linked = await startLinkedBaileysNumber(dialect, { WAGW_WEBHOOK_ALLOWED_PRIVATE_HOSTS: '127.0.0.1:9' });
      ({ test, apiKey, number, socket } = linked);
      await test.gateway.webhooks.createWebhook(accountScope(linked.accountId), {
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['poll.vote', 'message'],
      });
      ourJid = `${number.phone.slice(1)}@s.whatsapp.net`;
    });
    after(() => linked.close());

    const get = async (url: string) => (await test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } })).json();
    const send = (body: Record<string, unknown>) =>
      test.post('/send_message', { from_phone: number.phone, to_phone: CUSTOMER, ...body }, apiKey);
    const lastSent = () => socket.sendCalls.at(-1)!;
    const latestReceived = async () =>
      (await get(`/messages?phone=${encodeURIComponent(number.phone)}&direction=inbound&limit=1`)).messages[0];
    async function lastEvent(type: string): Promise<JsonObject> {
      const rows = await test.gateway.store.db
        .selectFrom('webhook_events')
        .select('payload')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(20)
        .execute();
      return rows.map((row) => JSON.parse(row.payload)).find((payload) => payload.event === type);
    }

    it("a poll goes out as Baileys' poll with a secret of ours, and a vote encrypted with it is decrypted, kept per voter and tallied", async () => {
      const sent = await send({ poll: { question: 'Which day?', options: ['Monday', 'Tuesday', 'Friday'], selectable_count: 2 } });
      assert.equal(sent.statusCode, 200, sent.body);
      const content = lastSent().content as {
        poll: { name: string; values: string[]; selectableCount: number; messageSecret: Uint8Array };
      };
      assert.deepEqual(
        [content.poll.name, content.poll.values, content.poll.selectableCount],
        ['Which day?', ['Monday', 'Tuesday', 'Friday'], 2],
      );
      assert.equal(content.poll.messageSecret.length, 32);
      const pollId = `3EB0OUT${socket.sendCalls.length}`;
      const pollKey = { remoteJid: CUSTOMER_JID, fromMe: true, id: pollId };
      const context = { secret: content.poll.messageSecret, pollId, creatorJid: ourJid, voterJid: CUSTOMER_JID };

      const tally = async () => (await get(`/messages/${sent.json().message_id}`)).poll.results;
      await linked.arrives(
        voteMessage('VOTE_1', pollKey, encryptVote(['Monday', 'Friday'], context), { remoteJidAlt: CUSTOMER_LID }),
        async () => (await tally()).voters === 1,
      );
      assert.deepEqual((await tally()).options, [
        { option: 'Monday', votes: 1 },
        { option: 'Tuesday', votes: 0 },
        { option: 'Friday', votes: 1 },
      ]);
      // The same voter again: the new selection replaces the old one.
      await linked.arrives(
        voteMessage('VOTE_2', pollKey, encryptVote(['Tuesday'], context), { remoteJidAlt: CUSTOMER_LID }),
        async () => (await tally()).options[1].votes === 1,
      );
      assert.deepEqual(await tally(), {
        voters: 1,
        options: [
          { option: 'Monday', votes: 0 },
          { option: 'Tuesday', votes: 1 },
          { option: 'Friday', votes: 0 },
        ],
      });
      const event = await lastEvent('poll.vote');
      assert.deepEqual(
        [event?.options, event?.voter_phone, event?.voter_lid, event?.whatsapp_id],
        [['Tuesday'], CUSTOMER, CUSTOMER_LID, pollId],
      );

      // A vote encrypted with another secret opens with no jid pair, and changes nothing.
      const forged = encryptVote(['Monday'], { ...context, secret: randomBytes(32) });
      socket.emit('messages.upsert', { messages: [voteMessage('VOTE_FORGED', pollKey, forged)], type: 'notify' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal((await tally()).options[0].votes, 0);
    });

    it('a poll received from WhatsApp arrives as a poll message, and votes on it are read with the secret it carried', async () => {
      const secret = randomBytes(32);
      const poll = fromWhatsApp(
        {
          pollCreationMessageV3: { name: 'Lunch?', options: [{ optionName: 'Yes' }, { optionName: 'No' }], selectableOptionsCount: 1 },
          messageContextInfo: { messageSecret: secret },
        },
        { id: 'IN_POLL' },
      );
      await linked.arrives(poll, async () => (await latestReceived())?.content_kind === 'poll');
      const received = await latestReceived();
      assert.deepEqual(received.poll, { question: 'Lunch?', options: ['Yes', 'No'], selectable_count: 1 });
      const event = await lastEvent('message');
      assert.deepEqual([event?.content_kind, event?.poll], ['poll', { question: 'Lunch?', options: ['Yes', 'No'], selectable_count: 1 }]);
      const vote = encryptVote(['No'], { secret, pollId: 'IN_POLL', creatorJid: CUSTOMER_JID, voterJid: CUSTOMER_JID });
      const pollKey = { remoteJid: CUSTOMER_JID, fromMe: false, id: 'IN_POLL' };
      await linked.arrives(
        voteMessage('VOTE_IN', pollKey, vote),
        async () => (await get(`/messages/${received.message_id}`)).poll.results.voters === 1,
      );
    });

    it("a location and contact cards go out as Baileys' location and contacts content", async () => {
      assert.equal(
        (
          await send({
            message: 'the entrance',
            location: { latitude: 51.5033, longitude: -0.1196, name: 'London Eye', address: 'Westminster Bridge Rd' },
          })
        ).statusCode,
        200,
      );
      assert.deepEqual(lastSent().content, {
        location: {
          degreesLatitude: 51.5033,
          degreesLongitude: -0.1196,
          name: 'London Eye',
          address: 'Westminster Bridge Rd',
          comment: 'the entrance',
        },
      });
      const cards = await send({
        contacts: [
          { name: 'Ada; Lovelace', phones: ['+447700900123'], organization: 'Analytical, Engines' },
          { vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Charles Babbage\nTEL;waid=447700900124:+447700900124\nEND:VCARD' },
        ],
      });
      assert.equal(cards.statusCode, 200, cards.body);
      const content = lastSent().content as { contacts: { displayName: string; contacts: { displayName: string; vcard: string }[] } };
      assert.equal(content.contacts.displayName, '2 contacts');
      assert.deepEqual(
        content.contacts.contacts.map((card) => card.displayName),
        ['Ada; Lovelace', 'Charles Babbage'],
      );
      assert.match(
        content.contacts.contacts[0]!.vcard,
        /\nFN:Ada\\; Lovelace\nTEL;type=CELL;waid=447700900123:\+447700900123\nORG:Analytical\\, Engines\n/,
      );
      assert.deepEqual(cards.json().contacts[1].phones, ['+447700900124']);
    });

    it("a text's link preview goes out as ours, with a small JPEG thumbnail, so Baileys fetches nothing itself", async () => {
      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
      const upload = await test.inject({
        method: 'POST',
        url: '/media',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'image/png' },
        payload: png,
      });
      assert.equal(upload.statusCode, 201, upload.body);
      const sent = await send({
        message: 'Menu: https://example.org/menu',
        link_preview: { title: 'Menu', description: 'Today', thumbnail_media_id: upload.json().media_id },
      });
      assert.equal(sent.statusCode, 200, sent.body);
      const content = lastSent().content as unknown as { text: string; linkPreview: Record<string, unknown> & { jpegThumbnail?: Buffer } };
      const { jpegThumbnail, ...preview } = content.linkPreview;
      assert.deepEqual(
        [content.text, preview],
        [
          'Menu: https://example.org/menu',
          { 'canonical-url': 'https://example.org/menu', 'matched-text': 'https://example.org/menu', title: 'Menu', description: 'Today' },
        ],
      );
      assert.ok(jpegThumbnail?.subarray(0, 2).equals(Buffer.from([0xff, 0xd8])), 'the thumbnail is a JPEG');
      const plain = await send({ message: 'no preview: https://example.org/' });
      assert.deepEqual(lastSent().content, { text: 'no preview: https://example.org/' });
      assert.equal(plain.statusCode, 200);
    });

    it('an image goes out view-once, and a view-once image from WhatsApp says view_once', async () => {
      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
      const sent = await send({ media: { data: png.toString('base64') }, view_once: true });
      assert.equal(sent.statusCode, 200, sent.body);
      assert.equal(sent.json().view_once, true);
      assert.equal((lastSent().content as { viewOnce?: boolean }).viewOnce, true);
      const document = await send({
        media: { data: Buffer.from('%PDF-1.4\n%%EOF').toString('base64'), filename: 'a.pdf' },
        view_once: true,
      });
      assert.deepEqual([document.statusCode, document.json().meta], [400, { field: 'view_once', problem: 'not_allowed' }]);

      const once = fromWhatsApp(
        { viewOnceMessageV2: { message: { imageMessage: { mimetype: 'image/jpeg', caption: 'once', viewOnce: true } } } },
        { id: 'IN_ONCE' },
      );
      await linked.arrives(once, async () => (await latestReceived())?.message === 'once');
      const received = await latestReceived();
      assert.deepEqual([received.content_kind, received.view_once], ['image', true]);
    });
  });
}
