import type { Kysely } from 'kysely';

// A number WhatsApp restricted, rate-limited or logged out, or that an operator paused, holds its
// sends until the pause ends (docs/adr/0030-automatic-pause.md). One row per paused number, so
// that a pause outlives a restart and follows the number to its next owner; `until_at` is null
// when nobody knows when it lifts. Kept apart from whatsapp_numbers, whose columns the send
// path's compiled statements name.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('number_pauses')
    .addColumn('number_id', 'text', (column) => column.primaryKey().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('reason', 'text', (column) => column.notNull())
    .addColumn('detail', 'text')
    .addColumn('since_at', 'bigint', (column) => column.notNull())
    .addColumn('until_at', 'bigint')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('number_pauses').execute();
}
