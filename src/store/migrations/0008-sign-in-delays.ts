import type { Kysely } from 'kysely';

// Sign-in throttling per (email, address) pair waits a growing delay after each failure beyond
// the first few. `blocked_until` is when the next attempt is allowed; `previous_blocked_until`
// keeps the value an attempt found, since an upsert's RETURNING shows only the new row and the
// decision to refuse rests on the old one. Both are milliseconds since the epoch, 0 for none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('sign_in_failures')
    .addColumn('blocked_until', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('sign_in_failures')
    .addColumn('previous_blocked_until', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sign_in_failures').dropColumn('previous_blocked_until').execute();
  await db.schema.alterTable('sign_in_failures').dropColumn('blocked_until').execute();
}
