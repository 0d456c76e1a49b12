import type { Kysely } from 'kysely';

// What each API key may do (docs/adr/0052-api-key-scopes.md). Every key that exists gets
// 'read,send', which is exactly what a key could do before scopes: an upgrade takes no power
// away and grants none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('scopes', 'text', (column) => column.notNull().defaultTo('read,send'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('scopes').execute();
}
