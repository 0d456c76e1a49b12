import type { Kysely } from 'kysely';

// Rich content (ADR 0031):
// - a poll's message secret, which WhatsApp's votes are encrypted with; kept apart from the
//   message's structured content, which answers and webhooks show;
// - each voter's current selection of a poll: a vote replaces the voter's earlier one, and an
//   empty selection removes it, so the tally is a count over these rows;
// - whether an account lets the gateway fetch link previews (off until turned on).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('poll_secrets')
    .addColumn('message_id', 'text', (column) => column.primaryKey().references('messages.id').onDelete('cascade'))
    .addColumn('secret', 'text', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('poll_votes')
    .addColumn('message_id', 'text', (column) => column.notNull().references('messages.id').onDelete('cascade'))
    // The voter's LID when WhatsApp named one, else the phone: one row per person.
    .addColumn('voter', 'text', (column) => column.notNull())
    .addColumn('voter_phone', 'text')
    .addColumn('voter_lid', 'text')
    // The options chosen, as a JSON array of their texts.
    .addColumn('options', 'text', (column) => column.notNull())
    .addColumn('voted_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('poll_votes_pk', ['message_id', 'voter'])
    .execute();
  await db.schema
    .alterTable('accounts')
    .addColumn('link_previews', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').dropColumn('link_previews').execute();
  await db.schema.dropTable('poll_votes').execute();
  await db.schema.dropTable('poll_secrets').execute();
}
