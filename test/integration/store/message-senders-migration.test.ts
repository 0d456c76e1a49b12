import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql, type Migration } from 'kysely';
import { loadConfig } from '../../../src/config.ts';
import { newId } from '../../../src/domain/ids.ts';
import type { E164 } from '../../../src/domain/phone.ts';
import { openStore, type Store } from '../../../src/store/database.ts';
import { migrateToLatest } from '../../../src/store/migrate.ts';
import * as core from '../../../src/store/migrations/0001-core.ts';
import * as webhooks from '../../../src/store/migrations/0002-webhooks.ts';
import * as dashboard from '../../../src/store/migrations/0003-dashboard.ts';
import * as baileysAuth from '../../../src/store/migrations/0004-baileys-auth.ts';
import { findMessageById, insertMessage } from '../../../src/store/repositories/messages.ts';
import { listMessages } from '../../../src/store/repositories/message-pages.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../../support/databases.ts';

/** The schema as it stood before LID senders, so that rows written then can be migrated. */
const migrationsBeforeSenders: Record<string, Migration> = {
  '0001-core': core,
  '0002-webhooks': webhooks,
  '0003-dashboard': dashboard,
  '0004-baileys-auth': baileysAuth,
};

for (const dialect of dialects) {
  describe(`migration 0005-message-senders (${dialect})`, () => {
    let database: TestDatabase;
    let store: Store;
    const accountId = newId('account');
    const numberId = newId('number');
    const oldMessageId = newId('message');

    before(async () => {
      database = await createTestDatabase(dialect);
      store = openStore(loadConfig({ DATABASE_URL: database.url }).database);
      const migrator = new Migrator({ db: store.db, provider: { getMigrations: async () => migrationsBeforeSenders } });
      const { error } = await migrator.migrateToLatest();
      if (error) throw error;
      // Raw inserts: the repositories already speak the new shape.
      await sql`insert into accounts (id, name, plan, created_at) values (${accountId}, 'Acme', 'starter', 1)`.execute(store.db);
      await sql`
        insert into whatsapp_numbers (id, account_id, phone, engine, status, created_at, updated_at)
        values (${numberId}, ${accountId}, '+447700900001', 'sandbox', 'connected', 1, 1)
      `.execute(store.db);
      await sql`
        insert into messages (id, account_id, number_id, direction, from_phone, to_phone, text, status, engine_message_id, error_code, created_at, updated_at)
        values (${oldMessageId}, ${accountId}, ${numberId}, 'inbound', '+14155550100', '+447700900001', 'from before', 'received', 'engine-old', null, 1000, 1000)
      `.execute(store.db);
      // Later migrations run too; this one must be the first of them.
      assert.equal((await migrateToLatest(store.db, store.dialect))[0], '0005-message-senders');
    });

    after(async () => {
      await store?.close();
      await database?.drop();
    });

    it('a message stored before the migration survives it, as a phone-addressed text', async () => {
      const message = await findMessageById(store.db, oldMessageId);
      assert.ok(message, 'the old row is still there');
      assert.equal(message.fromPhone, '+14155550100');
      assert.equal(message.fromLid, null);
      assert.equal(message.contentKind, 'text');
      assert.equal(message.text, 'from before');
      assert.equal(message.engineMessageId, 'engine-old');
      assert.equal(message.createdAt.getTime(), 1000);
    });

    it('the messages indexes are still there after the migration', async () => {
      const names =
        dialect === 'sqlite'
          ? await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'messages'`.execute(store.db)
          : await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'messages'`.execute(store.db);
      const indexNames = names.rows.map((row) => row.name);
      // 0014 replaced the number index with one that also orders by time.
      for (const index of ['messages_account_created_idx', 'messages_number_created_idx', 'messages_engine_message_idx']) {
        assert.ok(indexNames.includes(index), `${index} is missing from ${indexNames.join(', ')}`);
      }
    });

    it('a sender known only by LID is stored with a null phone and read back with its LID and content kind', async () => {
      const id = newId('message');
      await insertMessage(store.db, {
        id,
        accountId,
        numberId,
        direction: 'inbound',
        fromPhone: null,
        fromLid: '123456789012345@lid',
        toPhone: '+447700900001' as E164,
        text: 'a caption',
        contentKind: 'image_caption',
        mediaId: null,
        structured: null,
        status: 'received',
        engineMessageId: 'engine-lid',
        createdAt: new Date(2_000),
      });
      const message = await findMessageById(store.db, id);
      assert.equal(message?.fromPhone, null);
      assert.equal(message?.fromLid, '123456789012345@lid');
      assert.equal(message?.contentKind, 'image_caption');
      const listed = await listMessages(store.db, { accountId, phone: '+447700900001', limit: 10 });
      assert.deepEqual(
        listed.map((entry) => entry.id),
        [id, oldMessageId],
        'the phone filter still finds it by our own number',
      );
    });

    it('the foreign keys survive the rebuild: removing the account removes its messages', async () => {
      await sql`delete from accounts where id = ${accountId}`.execute(store.db);
      assert.deepEqual(await listMessages(store.db, { accountId, limit: 10 }), []);
    });
  });
}
