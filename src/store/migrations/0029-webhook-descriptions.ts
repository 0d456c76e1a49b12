import type { Kysely } from 'kysely';

// A webhook's optional description, so that a program which registers its own webhook over the
// API (an n8n trigger, say) can say whose it is. Existing webhooks have none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('description', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('description').execute();
}
