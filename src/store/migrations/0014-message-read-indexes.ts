import type { Kysely } from 'kysely';

// GET /messages (docs/api.md) pages an account's messages newest first by any of its filters;
// each filter that narrows a large account gets an index that yields its rows in that order, so
// a page reads about a page of rows at 10 million messages (bench/message-reads.ts):
// - peer: the recipient of a sent message (to_phone), the sender of a received one (from_phone);
// - status: rare ones, such as failed, among millions of others;
// - phone (ours): the number's messages, which also serves the number_id lookups the old
//   single-column index did.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('messages_account_to_created_idx').on('messages').columns(['account_id', 'to_phone', 'created_at']).execute();
  await db.schema
    .createIndex('messages_account_from_created_idx')
    .on('messages')
    .columns(['account_id', 'from_phone', 'created_at'])
    .execute();
  await db.schema
    .createIndex('messages_account_status_created_idx')
    .on('messages')
    .columns(['account_id', 'status', 'created_at'])
    .execute();
  await db.schema.createIndex('messages_number_created_idx').on('messages').columns(['number_id', 'created_at']).execute();
  await db.schema.dropIndex('messages_number_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('messages_number_idx').on('messages').column('number_id').execute();
  await db.schema.dropIndex('messages_number_created_idx').execute();
  await db.schema.dropIndex('messages_account_status_created_idx').execute();
  await db.schema.dropIndex('messages_account_from_created_idx').execute();
  await db.schema.dropIndex('messages_account_to_created_idx').execute();
}
