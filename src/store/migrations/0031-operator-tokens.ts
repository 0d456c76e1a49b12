import type { Kysely } from 'kysely';

// Operator tokens (docs/adr/0057-operator-api.md): bearer secrets for the operator API, made in
// the CLI, stored as their SHA-256 like API keys, revocable, with a name and a last-used time.
// They belong to no account: a token acts on the whole gateway, as the operator does.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('operator_tokens')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('hint', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('operator_tokens').execute();
}
