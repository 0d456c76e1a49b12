import type { Kysely } from 'kysely';

// A clear of a number's send queue is recorded once, whatever the queue's length (ADR 0066):
// every message of the number waiting with created_at at or before `cleared_through` is being
// cancelled, and none of them leaves from then on. The queue runner marks and settles them in
// batches afterwards. One row per number, kept (a later clear moves it on), so that a clear
// outlives a restart and follows the number to its next owner.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('queue_clears')
    .addColumn('number_id', 'text', (column) => column.primaryKey().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('cleared_through', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('queue_clears').execute();
}
