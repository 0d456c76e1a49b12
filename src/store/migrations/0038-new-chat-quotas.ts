import type { Kysely } from 'kysely';

// WhatsApp's cap on a number's new chats, as last read or pushed, and whether a send met it (475)
// and until when first contacts are held (docs/adr/0058-new-chat-capping.md). One row per number
// whose quota was ever read, written by its owner, so that a hold outlives a restart and follows
// the number to its next owner, and any node can show it (GET /numbers/{id}/queue).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('new_chat_quotas')
    .addColumn('number_id', 'text', (column) => column.primaryKey().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('total', 'integer')
    .addColumn('used', 'integer')
    .addColumn('cycle_started_at', 'bigint')
    .addColumn('cycle_ends_at', 'bigint')
    .addColumn('source', 'text', (column) => column.notNull())
    .addColumn('error', 'text')
    .addColumn('read_at', 'bigint', (column) => column.notNull())
    .addColumn('capped_until', 'bigint')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('new_chat_quotas').execute();
}
