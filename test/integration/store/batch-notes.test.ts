import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { Message, WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { findChat, noteChatMessages } from '../../../src/store/repositories/chats.ts';
import { findContact, noteContact, noteRecipients } from '../../../src/store/repositories/contacts.ts';
import { insertMessage } from '../../../src/store/repositories/messages.ts';
import { dialects, seedNumberRow, suiteStore } from '../../support/databases.ts';

// A batch's chats and recipients are each one compiled upsert whose rows travel as one parameter
// (a JSON array on SQLite, arrays on PostgreSQL); these pin what a batch of several rows does.

const ADA = '+14155550131' as E164;
const GRACE = '+14155550132' as E164;

function message(number: WhatsAppNumber, direction: Message['direction'], other: E164, at: number): Message {
  return {
    id: newId('message'),
    accountId: number.accountId,
    numberId: number.id,
    direction,
    fromPhone: direction === 'outbound' ? number.phone : other,
    fromLid: null,
    toPhone: direction === 'outbound' ? other : number.phone,
    text: 'hello',
    contentKind: 'text',
    mediaId: null,
    structured: null,
    status: direction === 'outbound' ? 'sent' : 'received',
    engineMessageId: null,
    createdAt: new Date(at),
  };
}

for (const dialect of dialects) {
  describe(`a batch's chat and contact notes, several rows in one statement (${dialect})`, () => {
    const suite = suiteStore(dialect);

    it('each chat takes its latest message, counts every received one, and a late message never takes the top back', async () => {
      const { store } = suite;
      const number = await seedNumberRow(store);
      const batch = [
        message(number, 'inbound', ADA, 1_000),
        message(number, 'inbound', ADA, 3_000),
        message(number, 'outbound', GRACE, 2_000),
        message(number, 'inbound', ADA, 2_000),
      ];
      for (const each of batch) await insertMessage(store.db, each);
      await noteChatMessages(store.db, batch);
      const ada = await findChat(store.db, number.id, ADA);
      assert.deepEqual([ada?.last_message_id, Number(ada?.last_activity_at), Number(ada?.unread_count)], [batch[1]!.id, 3_000, 3]);
      const grace = await findChat(store.db, number.id, GRACE);
      assert.deepEqual([grace?.last_message_id, Number(grace?.last_activity_at), Number(grace?.unread_count)], [batch[2]!.id, 2_000, 0]);

      const late = message(number, 'inbound', ADA, 2_500);
      const newer = message(number, 'outbound', GRACE, 4_000);
      for (const each of [late, newer]) await insertMessage(store.db, each);
      await noteChatMessages(store.db, [late, newer]);
      const adaAfter = await findChat(store.db, number.id, ADA);
      assert.deepEqual(
        [adaAfter?.last_message_id, Number(adaAfter?.last_activity_at), Number(adaAfter?.unread_count)],
        [batch[1]!.id, 3_000, 4],
      );
      const graceAfter = await findChat(store.db, number.id, GRACE);
      assert.deepEqual([graceAfter?.last_message_id, Number(graceAfter?.last_activity_at)], [newer.id, 4_000]);
    });

    it('recipients become contacts, a known one keeps what it had and takes the latest message time, and a group is no person', async () => {
      const { store } = suite;
      const number = await seedNumberRow(store);
      const ref = { numberId: number.id, accountId: number.accountId };
      await noteContact(
        store.db,
        ref,
        { lid: null, phone: ADA, whatsappName: 'Ada', saved: true, messageAt: new Date(500) },
        new Date(500),
      );
      const toGroup = { ...message(number, 'outbound', GRACE, 6_000), group: { id: '120363000000000001@g.us', subject: 'Team' } };
      await noteRecipients(store.db, [message(number, 'outbound', ADA, 5_000), message(number, 'outbound', GRACE, 7_000), toGroup]);
      const ada = await findContact(store.db, number.id, { phone: ADA });
      assert.deepEqual([ada?.whatsappName, ada?.saved, ada?.lastMessageAt?.getTime()], ['Ada', true, 5_000]);
      const grace = await findContact(store.db, number.id, { phone: GRACE });
      assert.deepEqual([grace?.phone, grace?.lid, grace?.whatsappName, grace?.lastMessageAt?.getTime()], [GRACE, null, null, 7_000]);
    });
  });
}
