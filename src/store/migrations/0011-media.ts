import type { Kysely } from 'kysely';

// Media (docs/adr/0020): a row describes a file; its bytes live in the blob store under
// (account_id, sha256), never in the database, so a file sent a thousand times is stored once.
// A message points at its media. A row outlives its bytes: once retention ends the blob is
// removed and `removed_at` set, and the message keeps saying what it carried.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('media')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('mime_type', 'text', (column) => column.notNull())
    .addColumn('size', 'bigint', (column) => column.notNull())
    .addColumn('sha256', 'text', (column) => column.notNull())
    .addColumn('file_name', 'text')
    .addColumn('source', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('removed_at', 'bigint')
    .execute();
  // Whether any live row still needs a blob, when a sweep considers removing it.
  await db.schema.createIndex('media_blob_idx').on('media').columns(['account_id', 'sha256']).execute();
  // The retention sweep reads by expiry, across accounts.
  await db.schema.createIndex('media_expiry_idx').on('media').columns(['expires_at']).execute();
  await db.schema
    .alterTable('messages')
    .addColumn('media_id', 'text', (column) => column.references('media.id'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('media_id').execute();
  await db.schema.dropTable('media').execute();
}
