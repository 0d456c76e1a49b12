import type { Kysely } from 'kysely';

// A number's call and presence settings (ADR 0033): whether calls to it are rejected at once,
// the text the caller is sent then, and whether it shows itself online. Each is off (or empty)
// for every number that exists, so an upgrade changes how no number behaves.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('whatsapp_numbers')
    .addColumn('reject_calls', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('whatsapp_numbers').addColumn('call_reply_text', 'text').execute();
  await db.schema
    .alterTable('whatsapp_numbers')
    .addColumn('show_online', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('whatsapp_numbers').dropColumn('show_online').execute();
  await db.schema.alterTable('whatsapp_numbers').dropColumn('call_reply_text').execute();
  await db.schema.alterTable('whatsapp_numbers').dropColumn('reject_calls').execute();
}
