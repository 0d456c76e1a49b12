import type { Kysely } from 'kysely';

// Conversations (docs/api.md, "Conversations"; ADR 0022):
// - each status a sent message reached has its time, and an incoming message the time we read it;
// - an edit or a revocation is noted on the message, and the text it replaced is kept as a revision;
// - reactions, one per person (and one of ours) per message, as WhatsApp keeps them;
// - a reply names what it quotes, in rows of its own, so that messages that are not replies
//   (nearly all of them) cost the send and receive paths nothing more;
// - a number may mark what it receives as read at once.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['sent_at', 'delivered_at', 'read_at', 'failed_at', 'edited_at', 'revoked_at']) {
    await db.schema.alterTable('messages').addColumn(column, 'bigint').execute();
  }
  await db.schema
    .createTable('message_replies')
    .addColumn('message_id', 'text', (column) => column.primaryKey().references('messages.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('quoted_message_id', 'text')
    .addColumn('quoted_engine_id', 'text', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('message_reactions')
    .addColumn('message_id', 'text', (column) => column.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('reactor', 'text', (column) => column.notNull())
    .addColumn('from_us', 'integer', (column) => column.notNull())
    .addColumn('emoji', 'text', (column) => column.notNull())
    .addColumn('reacted_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('message_reactions_pk', ['message_id', 'reactor'])
    .execute();
  await db.schema
    .createTable('message_revisions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('message_id', 'text', (column) => column.notNull().references('messages.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('previous_text', 'text', (column) => column.notNull())
    .addColumn('from_us', 'integer', (column) => column.notNull())
    .addColumn('changed_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('message_revisions_message_idx').on('message_revisions').columns(['message_id', 'changed_at']).execute();
  await db.schema
    .alterTable('whatsapp_numbers')
    .addColumn('auto_read', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('whatsapp_numbers').dropColumn('auto_read').execute();
  await db.schema.dropTable('message_revisions').execute();
  await db.schema.dropTable('message_reactions').execute();
  await db.schema.dropTable('message_replies').execute();
  for (const column of ['sent_at', 'delivered_at', 'read_at', 'failed_at', 'edited_at', 'revoked_at']) {
    await db.schema.alterTable('messages').dropColumn(column).execute();
  }
}
