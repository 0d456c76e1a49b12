import type { Kysely } from 'kysely';

// Groups (ADR 0023):
// - a message of a group chat names its group in a row of its own, with the group's subject as
//   it was then, so that direct messages (nearly all) cost the send and receive paths nothing;
// - each number's groups as it last saw them, so that an account knows the groups its numbers
//   are or were in (a number that left one is told so, not that it does not exist), and the
//   dashboard lists them without a live session;
// - a webhook says which chats' messages it receives: direct ones only (every webhook made before
//   groups, so that an upgrade floods nobody), group ones, or both.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('message_groups')
    .addColumn('message_id', 'text', (column) => column.primaryKey().references('messages.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('group_id', 'text', (column) => column.notNull())
    .addColumn('group_subject', 'text', (column) => column.notNull())
    // The members the message mentions, as a JSON array of phones (LIDs where the phone is unknown).
    .addColumn('mentions', 'text')
    .execute();
  await db.schema.createIndex('message_groups_group_idx').on('message_groups').columns(['account_id', 'group_id']).execute();
  await db.schema
    .createTable('number_groups')
    .addColumn('number_id', 'text', (column) => column.notNull().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('group_id', 'text', (column) => column.notNull())
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('size', 'integer', (column) => column.notNull())
    .addColumn('is_admin', 'integer', (column) => column.notNull())
    .addColumn('is_member', 'integer', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('number_groups_pk', ['number_id', 'group_id'])
    .execute();
  await db.schema.createIndex('number_groups_account_idx').on('number_groups').columns(['account_id', 'group_id']).execute();
  await db.schema
    .alterTable('webhooks')
    .addColumn('message_scope', 'text', (column) => column.notNull().defaultTo('direct'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('message_scope').execute();
  await db.schema.dropTable('number_groups').execute();
  await db.schema.dropTable('message_groups').execute();
}
