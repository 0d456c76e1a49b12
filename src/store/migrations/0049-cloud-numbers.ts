import type { Kysely } from 'kysely';

// A number on Meta's Cloud API (docs/adr/0071-cloud-api-engine.md) is reached through Meta's ids
// for it and its business account, with an access token; Meta signs its callbacks with the app's
// secret and checks our callback with a verify token. The token and the secrets are sealed (the
// gateway must read them back to use them); the ids are not secret. One row per cloud number,
// removed with it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cloud_numbers')
    .addColumn('number_id', 'text', (column) => column.primaryKey().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('phone_number_id', 'text', (column) => column.notNull())
    .addColumn('business_account_id', 'text', (column) => column.notNull())
    .addColumn('access_token_ciphertext', 'text', (column) => column.notNull())
    .addColumn('app_secret_ciphertext', 'text', (column) => column.notNull())
    .addColumn('verify_token_ciphertext', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('cloud_numbers').execute();
}
