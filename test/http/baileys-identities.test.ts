/**
 * The LID-to-phone map over the real Baileys engine: WhatsApp's side is a fake socket that emits
 * Baileys' own event shapes (lid-mapping.update, messages with remoteJidAlt, group metadata with
 * participants' phoneNumber, number-check answers), and counts what the gateway asks of it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proto } from 'baileys';
import type { GroupMetadata, LIDMapping, WAMessage, WAMessageKey } from 'baileys';
import type { E164 } from '../../src/domain/phone.ts';
import { startLinkedBaileysNumber, type LinkedBaileysNumber } from '../support/baileys-number.ts';
import { dialects } from '../support/databases.ts';

function fromWhatsApp(text: string, key: Partial<WAMessageKey>, pushName?: string): WAMessage {
  const info = proto.WebMessageInfo.fromObject({ message: { conversation: text }, messageTimestamp: Math.floor(Date.now() / 1000), ...(pushName !== undefined && { pushName }) });
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
      const rows = await linked.test.gateway.store.db.selectFrom('messages').select(['id', 'from_phone', 'from_lid']).where('number_id', '=', linked.number.id).where('text', '=', text).execute();
      return rows[0];
    };
    /** Everything the gateway asked WhatsApp itself, as the fake socket counts it. */
    const questionsToWhatsApp = () => linked.socket.onWhatsAppCalls.length + linked.socket.groupMetadataCalls.length + linked.socket.groupCalls.length;

    it('lid-mapping.update teaches the map, and a LID-only message is then resolved without asking WhatsApp', async () => {
      const mapping: LIDMapping = { lid: '210987654321098@lid', pn: '14155550101@s.whatsapp.net' };
      linked.socket.emit('lid-mapping.update', mapping);
      for (let tries = 0; tries < 300 && (await phoneOf('210987654321098@lid')) === undefined; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(await phoneOf('210987654321098@lid'), '+14155550101');

      const asked = questionsToWhatsApp();
      await linked.arrives(fromWhatsApp('by lid only', { remoteJid: '210987654321098@lid', id: 'LID_ONLY_1' }), async () => (await inbound('by lid only')) !== undefined);
      const stored = await inbound('by lid only');
      assert.deepEqual([stored?.from_phone, stored?.from_lid], ['+14155550101', '210987654321098@lid']);
      assert.equal(questionsToWhatsApp(), asked, 'the map answered; WhatsApp was not asked');
    });

    it('a message that carries both (remoteJidAlt) teaches the map, with the sender\'s WhatsApp name', async () => {
      const message = fromWhatsApp('pn with alt', { remoteJid: '14155550102@s.whatsapp.net', remoteJidAlt: '310987654321098@lid', id: 'ALT_1' }, 'Grace');
      await linked.arrives(message, async () => (await inbound('pn with alt')) !== undefined);
      assert.equal(await phoneOf('310987654321098@lid'), '+14155550102');
      const contact = await linked.test.gateway.store.db.selectFrom('contacts').selectAll().where('number_id', '=', linked.number.id).where('lid', '=', '310987654321098@lid').executeTakeFirstOrThrow();
      assert.deepEqual([contact.phone, contact.whatsapp_name, contact.identity_source], ['+14155550102', 'Grace', 'message']);
    });

    it('group metadata teaches the map each participant named both ways', async () => {
      const metadata: GroupMetadata = {
        id: '120363000000000777@g.us', subject: 'Team', owner: undefined, addressingMode: 'lid' as GroupMetadata['addressingMode'],
        participants: [{ id: '410987654321098@lid', phoneNumber: '14155550103@s.whatsapp.net', admin: null }, { id: '510987654321098@lid', admin: null }],
      };
      linked.socket.emit('groups.upsert', [metadata]);
      for (let tries = 0; tries < 300 && (await phoneOf('410987654321098@lid')) === undefined; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(await phoneOf('410987654321098@lid'), '+14155550103');
      assert.equal(await phoneOf('510987654321098@lid'), undefined, 'a participant known only by LID teaches nothing');
    });

    it('a number check that answers a LID teaches the map', async () => {
      linked.socket.answerOnWhatsApp = async (phones) => phones.map((phone) => ({ jid: `${phone}@s.whatsapp.net`, exists: true, lid: '610987654321098@lid' }));
      const checked = await linked.test.post('/check_numbers', { from_phone: linked.number.phone, phones: ['+14155550104'] }, linked.apiKey);
      assert.equal(checked.statusCode, 200, checked.body);
      for (let tries = 0; tries < 300 && (await phoneOf('610987654321098@lid')) === undefined; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(await phoneOf('610987654321098@lid'), '+14155550104' as E164);
    });
  });
}
