import { sql, type Kysely } from 'kysely';

// Since when a number's connection status holds (issue 47's health card): updated_at moves with
// every change of the number's settings too (a proxy, call settings, a reassignment), so it cannot
// say how long a number has been connected or down. status_changed_at moves only when the status
// does. A number's existing rows start from updated_at, the best that is known of them: their
// status has held at least since then.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('whatsapp_numbers').addColumn('status_changed_at', 'bigint').execute();
  await sql`update whatsapp_numbers set status_changed_at = updated_at`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('whatsapp_numbers').dropColumn('status_changed_at').execute();
}
