import { sql, type Kysely } from 'kysely';

// One identity per person, and the chat list (ADR 0032, docs/identity.md):
// - contacts: each person a number knows, by LID, by phone or by both. It is the number's own
//   LID-to-phone map: a LID is one row per number (unique), and a phone is found through its own
//   index. Rows with only a phone or only a LID are people we know one way so far; when a LID
//   gets its phone the two rows become one.
// - messages from a LID-addressed sender are found by that LID when its phone becomes known, and
//   filled in then (the partial index covers only such messages, a small part of all);
// - chats: one row per chat of a number, kept with the message that last touched it, so that the
//   chat list is read a page at a time in order of last activity through its own index rather
//   than grouped from the messages.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('contacts')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('number_id', 'text', (column) => column.notNull().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('lid', 'text')
    .addColumn('phone', 'text')
    // The name the person gave themselves on WhatsApp (the "push name"), as last seen.
    .addColumn('whatsapp_name', 'text')
    // Saved in the number's address book (Baileys' contacts), rather than only written with.
    .addColumn('saved', 'integer', (column) => column.notNull().defaultTo(0))
    // How the phone of a LID was learned: message, mapping, group, check or sandbox.
    .addColumn('identity_source', 'text')
    .addColumn('identity_learned_at', 'bigint')
    .addColumn('last_message_at', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createIndex('contacts_number_lid_key')
    .on('contacts')
    .columns(['number_id', 'lid'])
    .unique()
    .where(sql.ref('lid'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('contacts_number_phone_key')
    .on('contacts')
    .columns(['number_id', 'phone'])
    .unique()
    .where(sql.ref('phone'), 'is not', null)
    .execute();
  // GET /messages?with=<LID> resolves across the account's numbers.
  await db.schema.createIndex('contacts_account_lid_idx').on('contacts').columns(['account_id', 'lid']).execute();
  await db.schema.createIndex('contacts_number_page_idx').on('contacts').columns(['number_id', 'id']).execute();
  await db.schema
    .createIndex('messages_number_unresolved_lid_idx')
    .on('messages')
    .columns(['number_id', 'from_lid'])
    .where(sql.ref('from_phone'), 'is', null)
    .execute();
  await db.schema
    .createTable('chats')
    .addColumn('number_id', 'text', (column) => column.notNull().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    // The other side: a phone (E.164), a LID ("…@lid") while the person's phone is unknown, or a group id.
    .addColumn('chat_id', 'text', (column) => column.notNull())
    .addColumn('last_message_id', 'text', (column) => column.notNull())
    .addColumn('last_activity_at', 'bigint', (column) => column.notNull())
    .addColumn('unread_count', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('marked_unread', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('archived', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('pinned_at', 'bigint')
    // Muted until then; a far future for "always".
    .addColumn('muted_until', 'bigint')
    .addPrimaryKeyConstraint('chats_pk', ['number_id', 'chat_id'])
    .execute();
  await db.schema.createIndex('chats_number_activity_idx').on('chats').columns(['number_id', 'last_activity_at', 'chat_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('chats').execute();
  await db.schema.dropIndex('messages_number_unresolved_lid_idx').execute();
  await db.schema.dropTable('contacts').execute();
}
