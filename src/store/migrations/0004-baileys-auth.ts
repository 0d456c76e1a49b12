import type { Kysely } from 'kysely';

// A Baileys session's auth state: the creds (one row per number) and its Signal keys (one row per
// category and key id). Values are sealed with the gateway's secret key before they reach these
// tables, because whoever holds them can read and send as the linked WhatsApp account.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('baileys_auth_creds')
    .addColumn('number_id', 'text', (column) => column.primaryKey().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('creds_ciphertext', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();

  // The primary key leads with number_id, so it also serves the logout wipe and the cascade.
  await db.schema
    .createTable('baileys_auth_keys')
    .addColumn('number_id', 'text', (column) => column.notNull().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('category', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('value_ciphertext', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('baileys_auth_keys_pk', ['number_id', 'category', 'key_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['baileys_auth_keys', 'baileys_auth_creds']) {
    await db.schema.dropTable(table).execute();
  }
}
