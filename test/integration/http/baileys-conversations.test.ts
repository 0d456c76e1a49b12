/**
 * Replies, reactions, edits, revocations and read marks over the real Baileys engine: the HTTP
 * stack, the services, the database and the engine are real; WhatsApp's side is a fake socket
 * that records what Baileys is asked to send and emits messages built from Baileys' own protos.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proto } from 'baileys';
import type { WAMessage, WAMessageKey } from 'baileys';
import type { WhatsAppNumber } from '../../../src/domain/model.ts';
import type { FakeSocket, RecordingSocketFactory } from '../../support/fake-whatsapp.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';
import type { TestGateway } from '../../support/gateway.ts';
import type { Json } from '../../support/json.ts';

const CUSTOMER = '+14155550100';
const CUSTOMER_JID = '14155550100@s.whatsapp.net';

/** A message from WhatsApp as `messages.upsert` carries it: the body through proto, the key as Baileys sets it. */
function fromWhatsApp(body: Record<string, unknown>, key: Partial<WAMessageKey>): WAMessage {
  const info = proto.WebMessageInfo.fromObject({ message: body, messageTimestamp: Math.floor(Date.now() / 1000) });
  return Object.assign(info, { key: { remoteJid: CUSTOMER_JID, fromMe: false, ...key } });
}

for (const dialect of dialects) {
  describe(`conversations through a linked Baileys number (${dialect})`, () => {
    let test: TestGateway;
    let apiKey: string;
    let number: WhatsAppNumber;
    let socket: FakeSocket;
    let whatsapp: RecordingSocketFactory;
    let linked: LinkedBaileysNumber;

    before(async () => {
      linked = await startLinkedBaileysNumber(dialect);
      ({ test, apiKey, number, socket, whatsapp } = linked);
    });
    after(() => linked.close());

    const get = async (url: string) => (await test.inject({ method: 'GET', url, headers: { authorization: `Bearer ${apiKey}` } })).json();
    const lastSent = () => socket.sendCalls.at(-1)!;

    const arrives = (message: WAMessage, stored: () => Promise<boolean>) => linked.arrives(message, stored);

    const latestReceived = async () =>
      (await get(`/messages?phone=${encodeURIComponent(number.phone)}&direction=inbound&limit=1`)).messages[0];

    it('a reply in either direction is a quote: stanzaId in, quoted key out', async () => {
      const sent = (
        await test.post('/send_message', { from_phone: number.phone, to_phone: CUSTOMER, message: 'Your table is booked' }, apiKey)
      ).json();
      const sentEngineId = socket.sendCalls.length === 0 ? undefined : `3EB0OUT${socket.sendCalls.length}`;
      const answer = fromWhatsApp(
        {
          extendedTextMessage: {
            text: 'Thanks!',
            contextInfo: { stanzaId: sentEngineId, participant: `${number.phone.slice(1)}@s.whatsapp.net` },
          },
        },
        { id: 'IN_REPLY_1' },
      );
      await arrives(answer, async () => (await latestReceived())?.message === 'Thanks!');
      const received = await latestReceived();
      assert.deepEqual(received.reply_to, { message_id: sent.message_id, whatsapp_id: sentEngineId });

      const reply = await test.post(
        '/send_message',
        { from_phone: number.phone, to_phone: CUSTOMER, message: 'You are welcome', reply_to: received.message_id },
        apiKey,
      );
      assert.equal(reply.statusCode, 200, reply.body);
      const quoted = lastSent().options?.quoted;
      assert.deepEqual(quoted?.key, { remoteJid: CUSTOMER_JID, fromMe: false, id: 'IN_REPLY_1' });
      assert.equal(quoted?.message?.conversation, 'Thanks!', 'WhatsApp shows the quoted text');
    });

    it("reactions, edits and revocations go out as Baileys content naming the message's key, and read marks as readMessages", async () => {
      const sent = (
        await test.post('/send_message', { from_phone: number.phone, to_phone: CUSTOMER, message: 'Meet at 5' }, apiKey)
      ).json();
      const sentKey = { remoteJid: CUSTOMER_JID, fromMe: true, id: `3EB0OUT${socket.sendCalls.length}` };
      await arrives(fromWhatsApp({ conversation: 'ok' }, { id: 'IN_OK' }), async () => (await latestReceived())?.message === 'ok');
      const received = await latestReceived();

      const reacted = await test.post('/send_reaction', { from_phone: number.phone, message_id: received.message_id, emoji: '🙏' }, apiKey);
      assert.equal(reacted.statusCode, 200, reacted.body);
      assert.deepEqual(
        [lastSent().jid, lastSent().content],
        [CUSTOMER_JID, { react: { text: '🙏', key: { remoteJid: CUSTOMER_JID, fromMe: false, id: 'IN_OK' } } }],
      );

      assert.equal((await test.post(`/messages/${sent.message_id}/edit`, { message: 'Meet at 6' }, apiKey)).statusCode, 200);
      assert.deepEqual(lastSent().content, { text: 'Meet at 6', edit: sentKey });
      assert.equal((await test.post(`/messages/${sent.message_id}/revoke`, {}, apiKey)).statusCode, 200);
      assert.deepEqual(lastSent().content, { delete: sentKey });

      const read = await test.post(`/messages/${received.message_id}/read`, {}, apiKey);
      assert.equal(read.statusCode, 200, read.body);
      assert.deepEqual(socket.readCalls.at(-1)?.at(-1), { remoteJid: CUSTOMER_JID, fromMe: false, id: 'IN_OK' });
    });

    it('groups are created, listed and read through Baileys, participants by phone and by LID', async () => {
      const created = await test.post('/groups', { from_phone: number.phone, subject: 'Suppliers', participants: [CUSTOMER] }, apiKey);
      assert.equal(created.statusCode, 201, created.body);
      const group = created.json();
      assert.deepEqual(
        group.participants.map((participant: Json) => [participant.phone, participant.role]),
        [
          [number.phone, 'superadmin'],
          [CUSTOMER, 'member'],
        ],
      );
      // WhatsApp may give a participant by LID, with or without the phone beside it.
      socket.groups
        .get(group.id)!
        .participants.push(
          { id: '123456789012345@lid', phoneNumber: '447700900777@s.whatsapp.net', admin: 'admin' },
          { id: '987654321098765@lid', admin: null },
        );
      const read = await get(`/groups/${encodeURIComponent(group.id)}?from_phone=${encodeURIComponent(number.phone)}`);
      assert.deepEqual(read.participants.slice(2), [
        { phone: '+447700900777', lid: '123456789012345@lid', role: 'admin' },
        { phone: null, lid: '987654321098765@lid', role: 'member' },
      ]);
      assert.deepEqual((await get(`/groups?from_phone=${encodeURIComponent(number.phone)}`)).groups, [
        { id: group.id, subject: 'Suppliers', size: 4, is_admin: true },
      ]);
      const unknown = await test.inject({
        method: 'GET',
        url: `/groups/120363999999999999%40g.us?from_phone=${encodeURIComponent(number.phone)}`,
        headers: { authorization: `Bearer ${apiKey}` },
      });
      assert.deepEqual([unknown.statusCode, unknown.json().error], [404, 'group_not_found'], "WhatsApp's item-not-found is a 404 here");
    });

    it('group metadata is asked of WhatsApp once, handed to Baileys from memory, and fetched again after the group changes', async () => {
      const jid = '120363777777777777@g.us';
      socket.groups.set(jid, {
        id: jid,
        subject: 'Drivers',
        owner: undefined,
        participants: [
          { id: `${number.phone.slice(1)}@s.whatsapp.net`, admin: 'admin' },
          { id: CUSTOMER_JID, admin: null },
        ],
      });
      const url = `/groups/${encodeURIComponent(jid)}?from_phone=${encodeURIComponent(number.phone)}`;
      const reads = await Promise.all(Array.from({ length: 100 }, () => get(url)));
      assert.ok(reads.every((read) => read.subject === 'Drivers'));
      assert.equal(socket.groupMetadataCalls.filter((call) => call === jid).length, 1, '100 reads, one question to WhatsApp');
      const options = whatsapp.options.at(-1)!;
      assert.equal(options.cachedGroupMetadata(jid)?.subject, 'Drivers', 'Baileys reads the same memory before a send');

      socket.groups.get(jid)!.participants.push({ id: '447700900888@s.whatsapp.net', admin: null });
      socket.emit('group-participants.update', {
        id: jid,
        author: CUSTOMER_JID,
        participants: [{ id: '447700900888@s.whatsapp.net' }],
        action: 'add',
      });
      const after = await get(url);
      assert.equal(after.size, 3, 'the change was fetched');
      assert.equal(socket.groupMetadataCalls.filter((call) => call === jid).length, 2);
    });

    it('a reaction, an edit and a revocation that arrive are stored on their messages, including one made on our own phone', async () => {
      const sent = (
        await test.post('/send_message', { from_phone: number.phone, to_phone: CUSTOMER, message: 'Price: 10' }, apiKey)
      ).json();
      const sentId = `3EB0OUT${socket.sendCalls.length}`;
      await arrives(
        fromWhatsApp({ reactionMessage: { key: { remoteJid: CUSTOMER_JID, fromMe: false, id: sentId }, text: '😮' } }, { id: 'IN_REACT' }),
        async () => (await get(`/messages/${sent.message_id}`)).reactions.length === 1,
      );
      assert.deepEqual(
        (await get(`/messages/${sent.message_id}`)).reactions.map((reaction: Json) => [reaction.emoji, reaction.by, reaction.from_me]),
        [['😮', CUSTOMER, false]],
      );

      // Our phone corrects the price: the edit comes back to the gateway as our own message.
      const edit = fromWhatsApp(
        {
          protocolMessage: {
            type: proto.Message.ProtocolMessage.Type.MESSAGE_EDIT,
            key: { remoteJid: CUSTOMER_JID, fromMe: true, id: sentId },
            editedMessage: { conversation: 'Price: 12' },
          },
        },
        { id: 'OWN_EDIT', fromMe: true },
      );
      await arrives(edit, async () => (await get(`/messages/${sent.message_id}`)).message === 'Price: 12');
      assert.deepEqual(
        (await get(`/messages/${sent.message_id}`)).revisions.map((revision: Json) => [
          revision.kind,
          revision.previous_message,
          revision.from_me,
        ]),
        [['edited', 'Price: 10', true]],
      );

      await arrives(
        fromWhatsApp({ conversation: 'oops, wrong chat' }, { id: 'IN_OOPS' }),
        async () => (await latestReceived())?.message === 'oops, wrong chat',
      );
      const oops = await latestReceived();
      const revoke = fromWhatsApp(
        {
          protocolMessage: {
            type: proto.Message.ProtocolMessage.Type.REVOKE,
            key: { remoteJid: CUSTOMER_JID, fromMe: false, id: 'IN_OOPS' },
          },
        },
        { id: 'IN_REVOKE' },
      );
      await arrives(revoke, async () => (await get(`/messages/${oops.message_id}`)).revoked_at !== null);
      const after = await get(`/messages/${oops.message_id}`);
      assert.deepEqual([after.message, after.revisions[0].previous_message, after.revisions[0].from_me], ['', 'oops, wrong chat', false]);
    });
  });
}
