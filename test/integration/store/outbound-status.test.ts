import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { newId } from '../../../src/domain/ids.ts';
import { newWhatsAppNumber, type Message, type WhatsAppNumber } from '../../../src/domain/model.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { openStore, type Store } from '../../../src/store/database.ts';
import { migrateToLatest } from '../../../src/store/migrate.ts';
import { insertAccount } from '../../../src/store/repositories/accounts.ts';
import { advanceOutboundStatus, findMessageById, findOutboundStatus, insertMessage } from '../../../src/store/repositories/messages.ts';
import { insertNumber } from '../../../src/store/repositories/numbers.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';

for (const dialect of dialects) {
  describe(`receipts move an outbound status forward, never back (${dialect})`, () => {
    let database: TestDatabase;
    let store: Store;
    let number: WhatsAppNumber;

    before(async () => {
      database = await createTestDatabase(dialect);
      store = openStore(loadConfig({ DATABASE_URL: database.url }).database);
      await migrateToLatest(store.db, store.dialect);
      const accountId = newId('account');
      await insertAccount(store.db, { id: accountId, name: 'Receipts', plan: 'starter', customMonthlyLimit: null, createdAt: new Date() });
      const at = new Date();
      number = newWhatsAppNumber(
        {
          id: newId('number'),
          accountId,
          phone: '+447700900401' as E164,
          engine: 'sandbox',
          status: 'connected',
        },
        at,
      );
      await insertNumber(store.db, number);
    });

    after(async () => {
      await store?.close();
      await database?.drop();
    });

    const sentKey = (message: Message) => ({ fromPhone: message.fromPhone!, engineMessageId: message.engineMessageId! });

    async function storedMessage(overrides: Partial<Message>): Promise<Message> {
      const message: Message = {
        id: newId('message'),
        accountId: number.accountId,
        numberId: number.id,
        direction: 'outbound',
        fromPhone: number.phone,
        fromLid: null,
        toPhone: '+447700900402' as E164,
        text: 'hello',
        contentKind: 'text',
        mediaId: null,
        structured: null,
        status: 'sent',
        engineMessageId: `sbx_${newId('event')}`,
        createdAt: new Date(),
        ...overrides,
      };
      await insertMessage(store.db, message);
      return message;
    }

    it('an allowed receipt moves the status and returns the message as it now is', async () => {
      const message = await storedMessage({});
      const at = new Date(message.createdAt.getTime() + 1_000);
      const advanced = await advanceOutboundStatus(store.db, sentKey(message), 'delivered', ['sent'], at);
      assert.equal(advanced?.id, message.id);
      assert.equal(advanced?.status, 'delivered');
      assert.equal(advanced?.accountId, message.accountId);
      assert.equal((await findMessageById(store.db, message.id))?.status, 'delivered');
    });

    it('a late receipt does not move a status back: delivered after read changes nothing', async () => {
      const message = await storedMessage({ status: 'read' });
      assert.equal(await advanceOutboundStatus(store.db, sentKey(message), 'delivered', ['sent'], new Date()), undefined);
      assert.equal((await findMessageById(store.db, message.id))?.status, 'read');
    });

    it('an unknown engine id, or an inbound message with that id, changes nothing', async () => {
      assert.equal(
        await advanceOutboundStatus(
          store.db,
          { fromPhone: number.phone, engineMessageId: 'sbx_unknown' },
          'delivered',
          ['sent'],
          new Date(),
        ),
        undefined,
      );
      const inbound = await storedMessage({ direction: 'inbound', status: 'received' });
      assert.equal(await advanceOutboundStatus(store.db, sentKey(inbound), 'read', ['received', 'sent'], new Date()), undefined);
      assert.equal((await findMessageById(store.db, inbound.id))?.status, 'received');
    });

    it('a failed receipt records its error code with the status', async () => {
      const message = await storedMessage({});
      const failed = await advanceOutboundStatus(
        store.db,
        sentKey(message),
        'failed',
        ['queued', 'sent'],
        new Date(),
        'recipient_not_on_whatsapp',
      );
      assert.equal(failed?.status, 'failed');
      const row = await store.db
        .selectFrom('messages')
        .select(['status', 'error_code'])
        .where('id', '=', message.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'failed', error_code: 'recipient_not_on_whatsapp' });
    });

    it("a receipt for one number's message never moves another number's message with the same WhatsApp id", async () => {
      const other: WhatsAppNumber = { ...number, id: newId('number'), phone: '+447700900409' as E164 };
      await insertNumber(store.db, other);
      const shared = `wa_${newId('event')}`;
      const ours = await storedMessage({ engineMessageId: shared });
      const theirs = await storedMessage({ engineMessageId: shared, numberId: other.id, fromPhone: other.phone });
      const advanced = await advanceOutboundStatus(store.db, sentKey(theirs), 'read', ['sent', 'delivered'], new Date());
      assert.equal(advanced?.id, theirs.id);
      assert.equal((await findMessageById(store.db, ours.id))?.status, 'sent', "the other number's message is untouched");
      assert.equal(await findOutboundStatus(store.db, sentKey(ours)), 'sent');
      assert.equal(await findOutboundStatus(store.db, sentKey(theirs)), 'read');
    });

    it('no transitions allowed means no change', async () => {
      const message = await storedMessage({});
      assert.equal(await advanceOutboundStatus(store.db, sentKey(message), 'delivered', [], new Date()), undefined);
      assert.equal((await findMessageById(store.db, message.id))?.status, 'sent');
    });
  });
}
