import type { Kysely } from 'kysely';

// Incoming files whose download failed (docs/media.md, "When a download fails"): the message is
// stored and reported at once with its media unavailable, and a row here says how to fetch the
// file again and when. The row goes when the file is stored or the retries give up. It names
// the engine's own description of the file (`engine_token`), never its bytes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('media_downloads')
    .addColumn('message_id', 'text', (column) => column.primaryKey().references('messages.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('number_id', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('file_name', 'text')
    .addColumn('engine_token', 'text', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull())
    .addColumn('last_reason', 'text', (column) => column.notNull())
    .addColumn('next_attempt_at', 'bigint', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('media_downloads_due_idx').on('media_downloads').columns(['next_attempt_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('media_downloads').execute();
}
