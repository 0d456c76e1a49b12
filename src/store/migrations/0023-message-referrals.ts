import type { Kysely } from 'kysely';

// The ad or post a person tapped before writing (Click-to-WhatsApp, ADR 0051), in a row of its
// own beside the message, as a group message's group is: nearly no message has one, so the send
// and receive paths of all the others cost nothing more.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('message_referrals')
    .addColumn('message_id', 'text', (column) => column.primaryKey().references('messages.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    // The referral as JSON, in the gateway's terms (src/domain/referral.ts).
    .addColumn('referral', 'text', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('message_referrals').execute();
}
