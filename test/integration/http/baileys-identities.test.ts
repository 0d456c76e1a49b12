/**
 * The LID-to-phone map over the real Baileys engine: WhatsApp's side is a fake socket that emits
 * Baileys' own event shapes (lid-mapping.update, messages with remoteJidAlt, group metadata with
 * participants' phoneNumber, number-check answers), and counts what the gateway asks of it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proto } from 'baileys';
import type { GroupMetadata, LIDMapping, WAMessage, WAMessageKey } from 'baileys';
import type { E164 } from '../../../src/domain/phone.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../../support/baileys-number.ts';
import { dialects } from '../../support/databases.ts';

function fromWhatsApp(text: string, key: Partial<WAMessageKey>, pushName?: string): WAMessage {
  const info = proto.WebMessageInfo.fromObject({
    message: { conversation: text },
    messageTimestamp: Math.floor(Date.now() / 1000),
    ...(pushName !== undefined && { pushName }),
  });
  return Object.assign(info, { key: { fromMe: false, ...key } });
}

for (const dialect of dialects) {
  describe(`the LID map fed by Baileys (${dialect})`, () => {
    let linked: LinkedBaileysNumber;

    before(async () => {
      linked = await startLinkedBaileysNumber(dialect);
    });
    after(() => linked.close());

    const phoneOf = (lid: string) => linked.test.gateway.identities.phoneOf(linked.number.id, lid);
    const inbound = async (text: string) => {
      const rows = await linked.test.gateway.store.db
        .selectFrom('messages')
        .select(['id', 'from_phone', 'from_lid'])
        .where('number_id', '=', linked.number.id)
        .where('text', '=', text)
        .execute();
      return rows[0];
    };
    /** Everything the gateway asked WhatsApp itself, as the fake socket counts it. */
    const questionsToWhatsApp = () =>
      linked.socket.onWhatsAppCalls.length + linked.socket.groupMetadataCalls.length + linked.socket.groupCalls.length;

    it('lid-mapping.update teaches the map, and a LID-only message is then resolved without asking WhatsApp', async () => {
      const mapping: LIDMapping = { lid: '210987654321098@lid', pn: '14155550101@s.whatsapp.net' };
      linked.socket.emit('lid-mapping.update', mapping);
      for (let tries = 0; tries < 300 && (await phoneOf('210987654321098@lid')) === undefined; tries++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(await phoneOf('210987654321098@lid'), '+14155550101');

      const asked = questionsToWhatsApp();
      await linked.arrives(
        fromWhatsApp('by lid only', { remoteJid: '210987654321098@lid', id: 'LID_ONLY_1' }),
        async () => (await inbound('by lid only')) !== undefined,
      );
      const stored = await inbound('by lid only');
      assert.deepEqual([stored?.from_phone, stored?.from_lid], ['+14155550101', '210987654321098@lid']);
      assert.equal(questionsToWhatsApp(), asked, 'the map answered; WhatsApp was not asked');
    });

    it("a reaction by a LID the map knows is stored under the person's phone", async () => {
      const target = await inbound('by lid only');
      assert.ok(target !== undefined);
      const reaction = proto.WebMessageInfo.fromObject({
        message: { reactionMessage: { key: { remoteJid: '210987654321098@lid', fromMe: false, id: 'LID_ONLY_1' }, text: '👍' } },
        messageTimestamp: Math.floor(Date.now() / 1000),
      });
      const reactors = async () =>
        (
          await linked.test.gateway.store.db.selectFrom('message_reactions').select('reactor').where('message_id', '=', target.id).execute()
        ).map((row) => row.reactor);
      await linked.arrives(
        Object.assign(reaction, { key: { remoteJid: '210987654321098@lid', fromMe: false, id: 'LID_REACT_1' } }),
        async () => (await reactors()).length > 0,
      );
      assert.deepEqual(await reactors(), ['+14155550101']);
    });

    it("a message that carries both (remoteJidAlt) teaches the map, with the sender's WhatsApp name", async () => {
      const message = fromWhatsApp(
        'pn with alt',
        { remoteJid: '14155550102@s.whatsapp.net', remoteJidAlt: '310987654321098@lid', id: 'ALT_1' },
        'Grace',
      );
      await linked.arrives(message, async () => (await inbound('pn with alt')) !== undefined);
      assert.equal(await phoneOf('310987654321098@lid'), '+14155550102');
      const contact = await linked.test.gateway.store.db
        .selectFrom('contacts')
        .selectAll()
        .where('number_id', '=', linked.number.id)
        .where('lid', '=', '310987654321098@lid')
        .executeTakeFirstOrThrow();
      assert.deepEqual([contact.phone, contact.whatsapp_name, contact.identity_source], ['+14155550102', 'Grace', 'message']);
    });

    it('group metadata teaches the map each participant named both ways', async () => {
      const metadata: GroupMetadata = {
        id: '120363000000000777@g.us',
        subject: 'Team',
        owner: undefined,
        addressingMode: 'lid' as GroupMetadata['addressingMode'],
        participants: [
          { id: '410987654321098@lid', phoneNumber: '14155550103@s.whatsapp.net', admin: null },
          { id: '510987654321098@lid', admin: null },
        ],
      };
      linked.socket.emit('groups.upsert', [metadata]);
      for (let tries = 0; tries < 300 && (await phoneOf('410987654321098@lid')) === undefined; tries++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(await phoneOf('410987654321098@lid'), '+14155550103');
      assert.equal(await phoneOf('510987654321098@lid'), undefined, 'a participant known only by LID teaches nothing');
      // Found by a lookup, but not listed: the number never wrote with them.
      const query = `from_phone=${encodeURIComponent(linked.number.phone)}`;
      const found = await linked.test.inject({
        method: 'GET',
        url: `/contacts/410987654321098%40lid?${query}`,
        headers: { authorization: `Bearer ${linked.apiKey}` },
      });
      assert.deepEqual([found.statusCode, found.json().phone, found.json().identity_source], [200, '+14155550103', 'group']);
      const listed = (
        await linked.test.inject({
          method: 'GET',
          url: `/contacts?${query}&limit=100`,
          headers: { authorization: `Bearer ${linked.apiKey}` },
        })
      ).json();
      assert.ok(!listed.contacts.some((contact: { lid: string | null }) => contact.lid === '410987654321098@lid'));
    });

    it("chat changes reach Baileys as chatModify, in its own shapes, naming the chat's last message", async () => {
      await linked.arrives(
        fromWhatsApp('about my order', { remoteJid: '14155550105@s.whatsapp.net', id: 'CHAT_LAST_1' }),
        async () => (await inbound('about my order')) !== undefined,
      );
      const act = (verb: string, body: Record<string, unknown> = {}) =>
        linked.test.post(
          `/chats/${encodeURIComponent('+14155550105')}/${verb}`,
          { from_phone: linked.number.phone, ...body },
          linked.apiKey,
        );
      const archived = await act('archive');
      assert.equal(archived.statusCode, 200, archived.body);
      const until = new Date(Date.now() + 8 * 3_600_000);
      for (const [verb, body] of [
        ['pin', {}],
        ['mute', { until: until.toISOString() }],
        ['unmute', {}],
        ['mark_unread', {}],
      ] as const)
        assert.equal((await act(verb, body)).statusCode, 200);
      const calls = linked.socket.chatModifyCalls.slice(-5);
      assert.ok(calls.every((call) => call.jid === '14155550105@s.whatsapp.net'));
      const [archive, pin, mute, unmute, unread] = calls.map((call) => call.modification);
      assert.deepEqual(archive, {
        archive: true,
        lastMessages: [
          {
            key: { remoteJid: '14155550105@s.whatsapp.net', fromMe: false, id: 'CHAT_LAST_1' },
            messageTimestamp: (archive as unknown as { lastMessages: [{ messageTimestamp: number }] }).lastMessages[0].messageTimestamp,
          },
        ],
      });
      assert.deepEqual([pin, mute, unmute], [{ pin: true }, { mute: until.getTime() }, { mute: null }]);
      assert.equal((unread as { markRead: boolean }).markRead, false);
    });

    it('a number check that answers a LID teaches the map', async () => {
      linked.socket.answerOnWhatsApp = async (phones) =>
        phones.map((phone) => ({ jid: `${phone}@s.whatsapp.net`, exists: true, lid: '610987654321098@lid' }));
      const checked = await linked.test.post(
        '/check_numbers',
        { from_phone: linked.number.phone, phones: ['+14155550104'] },
        linked.apiKey,
      );
      assert.equal(checked.statusCode, 200, checked.body);
      for (let tries = 0; tries < 300 && (await phoneOf('610987654321098@lid')) === undefined; tries++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(await phoneOf('610987654321098@lid'), '+14155550104' as E164);
    });

    it('a chat change on a session that is down is 503 and changes nothing', async () => {
      linked.socket.closeWith(408);
      for (let tries = 0; tries < 100 && linked.test.gateway.supervisor.sessionStatus(linked.number) === 'connected'; tries++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      const refused = await linked.test.post(
        `/chats/${encodeURIComponent('+14155550105')}/unpin`,
        { from_phone: linked.number.phone },
        linked.apiKey,
      );
      assert.equal(refused.statusCode, 503, refused.body);
      const chats = (
        await linked.test.inject({
          method: 'GET',
          url: `/chats?from_phone=${encodeURIComponent(linked.number.phone)}`,
          headers: { authorization: `Bearer ${linked.apiKey}` },
        })
      ).json();
      assert.equal(chats.chats.find((chat: { chat_id: string }) => chat.chat_id === '+14155550105').pinned, true);
    });
  });
}
