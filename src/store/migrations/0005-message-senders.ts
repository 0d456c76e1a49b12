import { PostgresAdapter, sql, type Kysely } from 'kysely';

// WhatsApp may address a sender by LID (a private identifier that does not reveal the phone), and
// the phone cannot always be resolved, so from_phone becomes nullable and the LID is kept beside
// it. content_kind notes whether the text is a media caption.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table messages alter column from_phone drop not null`.execute(db);
    await db.schema.alterTable('messages').addColumn('from_lid', 'text').execute();
    await db.schema
      .alterTable('messages')
      .addColumn('content_kind', 'text', (column) => column.notNull().defaultTo('text'))
      .execute();
    return;
  }
  await rebuildSqliteMessages(db, true);
}

/**
 * SQLite cannot drop a NOT NULL constraint, so the table is rebuilt as its documentation
 * prescribes: create the new shape, copy, drop, rename, recreate the indexes. No table refers to
 * messages, so dropping it cascades nowhere; the migrator's transaction makes the swap atomic.
 */
async function rebuildSqliteMessages(db: Kysely<unknown>, withSenders: boolean): Promise<void> {
  await db.schema
    .createTable('messages_rebuilt')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('number_id', 'text', (column) => column.references('whatsapp_numbers.id').onDelete('set null'))
    .addColumn('direction', 'text', (column) => column.notNull())
    .addColumn('from_phone', 'text', (column) => (withSenders ? column : column.notNull()))
    .addColumn('to_phone', 'text', (column) => column.notNull())
    .addColumn('text', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('engine_message_id', 'text')
    .addColumn('error_code', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .$call((table) =>
      withSenders
        ? table.addColumn('from_lid', 'text').addColumn('content_kind', 'text', (column) => column.notNull().defaultTo('text'))
        : table,
    )
    .execute();
  // The columns both shapes share; the new ones take their defaults.
  await sql`
    insert into messages_rebuilt
      (id, account_id, number_id, direction, from_phone, to_phone, text, status, engine_message_id, error_code, created_at, updated_at)
    select id, account_id, number_id, direction, from_phone, to_phone, text, status, engine_message_id, error_code, created_at, updated_at
    from messages
  `.execute(db);
  await db.schema.dropTable('messages').execute();
  await db.schema.alterTable('messages_rebuilt').renameTo('messages').execute();
  await db.schema.createIndex('messages_account_created_idx').on('messages').columns(['account_id', 'created_at']).execute();
  await db.schema.createIndex('messages_number_idx').on('messages').column('number_id').execute();
  await db.schema.createIndex('messages_engine_message_idx').on('messages').column('engine_message_id').execute();
}

// Going back needs every message to have a phone again: LID-only rows make it fail rather than
// be silently deleted.
export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema.alterTable('messages').dropColumn('content_kind').execute();
    await db.schema.alterTable('messages').dropColumn('from_lid').execute();
    await sql`alter table messages alter column from_phone set not null`.execute(db);
    return;
  }
  await rebuildSqliteMessages(db, false);
}
