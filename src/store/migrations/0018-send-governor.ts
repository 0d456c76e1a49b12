import { sql, type Kysely } from 'kysely';

// The send governor (docs/send-governor.md, ADR 0029). Its queue is the messages table: a waiting
// message is `queued` with `scheduled_for` set. Every new column is null on a send the governor
// did not touch, and the indexes are partial, so that with the governor off (the default) a send
// writes exactly what it wrote before and no index grows.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('scheduled_for', 'bigint').execute();
  await db.schema.alterTable('messages').addColumn('expires_at', 'bigint').execute();
  await db.schema.alterTable('messages').addColumn('wait_reason', 'text').execute();
  // When the governor let the message go: the number's send history, which the caps count.
  await db.schema.alterTable('messages').addColumn('released_at', 'bigint').execute();
  await db.schema.alterTable('messages').addColumn('first_contact', 'integer').execute();
  // What a waiting message needs at release besides its row: mentions and reply_to, as JSON.
  await db.schema.alterTable('messages').addColumn('queued_options', 'text').execute();
  await db.schema.alterTable('whatsapp_numbers').addColumn('send_policy', 'text').execute();
  await db.schema.alterTable('accounts').addColumn('send_policy', 'text').execute();
  // The next due (and next expiring) message per number, which the owner's one timer asks for.
  await sql`create index messages_queue_due_idx on messages (number_id, scheduled_for) where scheduled_for is not null`.execute(db);
  await sql`create index messages_queue_expiry_idx on messages (number_id, expires_at) where scheduled_for is not null`.execute(db);
  await sql`create index messages_released_idx on messages (number_id, released_at) where released_at is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of ['messages_released_idx', 'messages_queue_expiry_idx', 'messages_queue_due_idx'])
    await db.schema.dropIndex(index).execute();
  await db.schema.alterTable('accounts').dropColumn('send_policy').execute();
  await db.schema.alterTable('whatsapp_numbers').dropColumn('send_policy').execute();
  for (const column of ['queued_options', 'first_contact', 'released_at', 'wait_reason', 'expires_at', 'scheduled_for']) {
    await db.schema.alterTable('messages').dropColumn(column).execute();
  }
}
