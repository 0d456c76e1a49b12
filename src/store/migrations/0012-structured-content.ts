import type { Kysely } from 'kysely';

// A shared location or contact cards, as JSON (src/domain/structured-content.ts), so that a
// message of those kinds is stored whole rather than dropped for having no text.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('structured', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('messages').dropColumn('structured').execute();
}
