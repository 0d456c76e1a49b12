import type { Kysely } from 'kysely';

// What each number last heard of a contact's presence (docs/adr/0056-clients-moving-from-waha-and-evolution.md), so
// that GET /presence/{phone_or_lid} can answer it: one row per number and contact, the contact by
// phone (E.164), or by LID while its phone is unknown. The presence.update webhook event is
// written with it, in the same commit.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('contact_presences')
    .addColumn('number_id', 'text', (column) => column.notNull().references('whatsapp_numbers.id').onDelete('cascade'))
    .addColumn('contact', 'text', (column) => column.notNull())
    .addColumn('presence', 'text', (column) => column.notNull())
    // The group chat the contact was typing or recording in; null for their own chat or no chat.
    .addColumn('group_id', 'text')
    // The last seen the contact shared, kept across reports that carry none.
    .addColumn('last_seen_at', 'bigint')
    .addColumn('heard_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('contact_presences_pkey', ['number_id', 'contact'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('contact_presences').execute();
}
